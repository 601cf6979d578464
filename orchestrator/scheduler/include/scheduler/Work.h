// The seam between the scheduler state machine and whatever runs handlers (executor processes, an external
// agent, a test double): batches of work items out, results back. Plain values only; no I/O. Invariant: every
// submitted WorkItem gets exactly one WorkResult with the same taskId (an executor that dies answers
// `unavailable`).
#pragma once

#include "model/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace inm::scheduler {

/// What a task asks of a handler (orchestrator.md §6.1 task kinds).
enum class TaskKind : uint8_t { Deploy, DryRun, RefreshFact };

/// Task priorities, lower first, ties FIFO (orchestrator.md §6.1).
enum class Priority : int {
  UserDeploy = 0,
  NewVersionDeploy = 1,
  UserRepair = 2,
  DryRun = 3,
  IntervalDeploy = 4,
  FactRefresh = 5,
  IntervalRepair = 6,
};

/// One unit of work handed to an executor.
struct WorkItem {
  uint64_t taskId = 0; ///< echoed back in the result
  TaskKind kind = TaskKind::Deploy;
  std::string actionId;   ///< uuid of the resourceaction row this run writes
  std::string resourceId; ///< unversioned id
  int version = 0;        ///< version of the intent (rvid: model::resourceVersionId(resourceId, version))
  std::string agent;
  /// The intent's attributes: the parsed tree when the intent was built in memory (tests), else null and
  /// `attributesText` holds them as the compact JSON text read from the store, handed on unparsed.
  std::shared_ptr<const nlohmann::json> attributes;
  std::shared_ptr<const std::string> attributesText; ///< set when `attributes` is null (real work)
  std::string reason;                                ///< why it runs ("Start run because <reason>")
  /// Direct dependencies and their states as a handler sees them (§5.2, never `deploying`); Deploy only.
  std::vector<std::pair<std::string, std::string>> dependencyStates;
  /// §6.6 reload: a direct dependency had a deploy with a change (created/updated/purged) that started after
  /// this resource's last successful deploy started (never deployed successfully: any such change). Deploy
  /// only.
  bool dependencyChanged = false;
  std::string dryrunId; ///< DryRun only
};

/// The outcome of one WorkItem.
struct WorkResult {
  uint64_t taskId = 0;
  /// A model/DeployStatus.def spelling. Deploy: deployed | non_compliant | failed | unavailable | skipped |
  /// skipped_for_dependency.
  /// DryRun: dry | failed. RefreshFact: deployed | failed | unavailable.
  std::string status;
  std::string change{model::spelling(model::Change::NoChange)}; ///< model/Change.def
  nlohmann::json changes = nlohmann::json::object();            ///< attr -> {"current": .., "desired": ..}
  nlohmann::json messages = nlohmann::json::array(); ///< LogLines {"level","msg","args","kwargs","timestamp"}
  /// When non-empty, LogLines before those of `messages`, as the text of a JSON array as the executor sent it
  /// (validated on receipt): a deploy's lines go to the action row without being parsed in the scheduler.
  std::string messagesText;
  nlohmann::json facts = nlohmann::json::object(); ///< name -> value (ctx.set_fact / facts())
};

/// Whatever executes work. `submit` must not call back into the scheduler synchronously: results are
/// delivered later through SchedulerState::onResults on the scheduler's strand.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Hands over a batch (possibly for many agents); one round trip per batch, not per resource.
  virtual void submit(std::vector<WorkItem> batch) = 0;
};

/// The dependency gate of the handler framework (§6.5): the status a deploy gets without running its handler
/// because a dependency is not `deployed`, or nullopt when the handler may run. Shared by every executor.
std::optional<std::string>
gateDependencies(const std::vector<std::pair<std::string, std::string>>& dependencyStates,
                 std::string* why = nullptr);

/// Every LogLine of `r` as one array: `messagesText` parsed, then `messages` (dry runs and facts, rare).
nlohmann::json allMessages(const WorkResult& r);

/// The "msg" of the last LogLine in `arrayText` (a JSON array of LogLines), found without parsing the
/// array: the last "msg" key in it (LogLines of our executors have their keys sorted, so no key of the last
/// line's kwargs follows its msg); empty when there is none.
std::string lastMessageText(const std::string& arrayText);

/// Appends `line` to `arrayText`, the text of a JSON array ("" counts as an empty array), without parsing it:
/// pending start and finish records keep their lines as text, not as trees (issue #30, scheduler memory).
void appendLine(std::string& arrayText, const nlohmann::json& line);

/// A LogLine as stored in resourceaction.messages (§15).
nlohmann::json logLine(const std::string& level, const std::string& msg,
                       nlohmann::json kwargs = nlohmann::json::object());

} // namespace inm::scheduler

// The scheduler process's view of PostgreSQL (orchestrator.md §5, §6.10, §6.11, §6.12, §14, §15; the schema
// contract is migrations/001_initial.sql). Reads what the server wrote (released versions, settings, agents,
// scheduler_request rows) and writes what the scheduler owns (rps deploy/intent columns, actions, dryrun,
// facts, the scheduler row). Every method is blocking: call it from the bounded DB pool, never from the
// strand. Database exceptions stop in store/pg (PgSchedulerStore.cpp) and become llvm::Error naming the
// operation. Invariant: `write` applies one Effects in one transaction, with multi-row statements (never one
// statement per resource). Moved from scheduler/pg (issue #26: one storage layer); the namespace is kept.
#pragma once

#include "scheduler/Scheduler.h"

#include <llvm/Support/Error.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inm::scheduler::pg {

/// Connection parameters ([database] host, port, name, username, password; INMANTA_DATABASE_* win).
struct DbParams {
  std::string host = "localhost", name = "inmanta", user = "postgres", password;
  int port = 5432;
  std::string connString() const;
};

/// One scheduler_request row (the server -> scheduler queue).
struct Request {
  int64_t id = 0;
  std::string kind;
  nlohmann::json payload;
};

/// What the environment row says.
struct EnvironmentInfo {
  Settings settings;
  bool halted = false;
  bool resetDeployProgressOnStart = false;      ///< §6.10: start from scratch (every resource counts as new)
  std::vector<std::string> settingErrors;       ///< bad setting values (the default is used instead)
  std::map<std::string, std::string> agentUris; ///< autostart_agent_map: agent -> URI text (unparsed)
};

class SchedulerStore {
 public:
  /// Connects; the error names host, port and database.
  static llvm::Expected<std::unique_ptr<SchedulerStore>> connect(const DbParams& p,
                                                                 const std::string& environment);
  ~SchedulerStore();

  /// Checks the environment exists and ensures its `scheduler` row; returns last_processed_model_version (0 =
  /// none).
  /// One scheduler per environment: a session advisory lock on this connection, held until it closes. False
  /// while another scheduler process of the environment (a stopping one whose server was killed) holds it.
  llvm::Expected<bool> tryLockEnvironment();
  llvm::Expected<int> ensureSchedulerRow();
  llvm::Expected<EnvironmentInfo> loadEnvironment();
  /// std::AgentConfig (docs/deploy.md "Agentless over SSH"): sets (uri) or removes (nullopt) the agent's
  /// entry of the environment setting autostart_agent_map and queues a settings_changed request. A protected
  /// setting (project.yml) is an error naming it.
  llvm::Error setAgentUri(const std::string& agent, const std::optional<std::string>& uri);
  /// agent name -> paused.
  llvm::Expected<std::map<std::string, bool>> loadAgents();
  /// All resources of one version.
  llvm::Expected<std::vector<plan::Intent>> loadVersion(int version);
  /// The released versions newer than `after`, ascending; only the newest carries full content, the others
  /// only resource ids (enough for plan::foldVersions).
  llvm::Expected<std::vector<plan::VersionSnapshot>> releasedVersionsAfter(int after);
  /// The rps rows (orphans excluded) after clearing is_deploying (§6.10: a restart clears it); the deploy
  /// actions of those resources still open (a previous scheduler stopped or died first) end `unavailable`.
  llvm::Expected<std::unordered_map<std::string, PersistedState>> loadPersistedAndClearDeploying();
  /// Takes (deletes and returns) this environment's pending requests in id order. When the connection dies
  /// around the COMMIT, it asks a fresh connection whether the rows are gone (only this process deletes them)
  /// and returns them if so, so a request is neither lost nor taken twice.
  llvm::Expected<std::vector<Request>> takeRequests();
  /// Prepares a dryrun row: creates it when the server did not, and returns the resources of `version` still
  /// to run (those not pre-filled; undefined/BLOCKED/paused ones pre-filled here when we created the row).
  llvm::Expected<std::vector<plan::Intent>> prepareDryrun(const std::string& dryrunId, int version,
                                                          const std::map<std::string, bool>& pausedAgents);
  /// The bytes of a stored file (table `file`, keyed by sha1 hex); nullopt when there is no such file.
  llvm::Expected<std::optional<std::string>> readFile(const std::string& sha1hex);
  /// Stores a file an executor offered (a resource's current content, for diffs); the caller verified that
  /// `sha1hex` is its hash. A file already there is left as it is.
  llvm::Error storeFile(const std::string& sha1hex, const std::string& content);
  /// One Python file of a version's handler code (docs/pybridge.md): module, the module's code version, the
  /// path inside the module ("plugins/x.py") and the content's sha1 (table `file`).
  struct CodeFile {
    std::string module, moduleVersion, path, hash;
  };
  /// The handler code of `version` for `agent`: the modules linked to the version (version_code, from
  /// codebatched) plus those linked to the agent (agent_modules), sorted by module and path; empty = none.
  llvm::Expected<std::vector<CodeFile>> loadCode(int version, const std::string& agent);
  /// Writes one batch of effects in one transaction, under the environment row lock (migration 008). When the
  /// environment was deleted, or cleared since ensureSchedulerRow, it writes nothing and environmentGone()
  /// turns true for good: this process's state is stale and it should stop.
  llvm::Error write(const Effects& e);
  /// write() with an idempotency key (migration 009): `seq` numbers the batch within this process (epoch()).
  /// A batch whose key is already stored was written by an earlier attempt whose COMMIT answer was lost: it
  /// writes nothing and succeeds. Resend a failed batch with the same `seq`.
  llvm::Error write(const Effects& e, int64_t seq);
  /// This process's random batch epoch (a uuid), the same for every connection.
  static const std::string& epoch();
  static bool environmentGone();

  /// Starts listening on channel inmanta_scheduler (for this environment's payload).
  llvm::Error listen();
  /// Waits up to `ms` for a notification for this environment; true if one arrived.
  llvm::Expected<bool> waitNotification(int ms);

 private:
  struct Impl;
  explicit SchedulerStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Splits one Effects for parallel writers: `version` (to be written first, alone: it resets the deploy
/// columns of new resources) and `shards` Effects partitioned by resource id (starts, finishes, blocked
/// changes of one resource always land in the same shard, so each shard keeps the per-resource order within
/// and across batches); dry runs, facts and the log go to shard 0. Shards may be empty.
struct SplitEffects {
  std::optional<Effects> version;
  std::vector<Effects> shards;
};
SplitEffects splitForWriters(Effects e, size_t shards);

/// A TimePoint as an ISO-8601 UTC text PostgreSQL accepts as timestamptz.
std::string isoTime(TimePoint t);
/// PostgreSQL text-array literal of `items` (quoted and escaped).
std::string pgArray(const std::vector<std::string>& items);
/// The same literal built item by item (no vector of copies first).
class ArrayText {
 public:
  void add(std::string_view item);
  /// The literal of the items added since the last take.
  std::string take();

 private:
  std::string text_;
};
/// Rows per statement of a version's rps write (SchedulerStore::write).
constexpr size_t kVersionChunk = 5000;

} // namespace inm::scheduler::pg

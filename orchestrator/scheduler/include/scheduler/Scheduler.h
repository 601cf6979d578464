// The per-environment resource scheduler as a state machine (orchestrator.md §5.1, §5.3, §6): intent,
// per-resource deploy state, dirty set, per-agent priority queues, requires ordering across agents, timers,
// events, pause and halt. It does no I/O: it hands work to an `Executor`, takes the time from a `Clock`, and
// queues every state change it makes as `Effects` which the host drains (`takeEffects`) and writes to
// PostgreSQL in one transaction per batch. Invariant: it is touched from one strand only; every method
// returns after a bounded amount of work and never calls back into the host except `Executor::submit`.
#pragma once

#include "cron/Cron.h"
#include "plan/Plan.h"
#include "scheduler/IdIndex.h"
#include "scheduler/Work.h"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace inm::scheduler {

using cron::CronSpec; // timer settings are shared with the compile service (orchestrator/cron)
using cron::TimePoint;
using cron::TimerSetting;

/// Real world vs the latest intent (§5.1).
enum class Compliance : uint8_t { Compliant, HasUpdate, NonCompliant, Undefined };
/// The last handler run (§5.1).
enum class HandlerResult : uint8_t { New, Successful, Failed, Skipped };
/// Whether a resource may be scheduled (§5.1).
enum class Blocked : uint8_t { NotBlocked, Blocked, TemporarilyBlocked };

const char* toString(Compliance c);
const char* toString(HandlerResult r);
const char* toString(Blocked b);
std::optional<HandlerResult> parseHandlerResult(const std::string& s);
std::optional<Blocked> parseBlocked(const std::string& s);

/// The source of time (a fake one in tests).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

/// Environment settings the scheduler obeys (§6.7, §10; `agent_parallelism` is ours).
struct Settings {
  TimerSetting deployInterval{600, std::nullopt};
  TimerSetting repairInterval{86400, std::nullopt};
  int agentParallelism = 1; ///< concurrent tasks per agent (1 = the reference's strict serial)
};

/// One resource's persisted state, read back at start (a `resource_persistent_state` row, §6.10).
struct PersistedState {
  std::string lastHandlerRun = "NEW";
  std::optional<bool> lastHandlerRunCompliant;
  std::string blocked = "NOT_BLOCKED";
  std::optional<std::string> lastDeployedHash;
  std::optional<TimePoint> lastHandlerRunAt, lastSuccess, lastProducedEvents;
  /// Start of the newest deploy action of this resource with a change other than nochange (§6.6 reload).
  std::optional<TimePoint> lastChangeStarted;
};

/// A deploy (or dry-run, fact) that started: write the action row (status deploying) and rps.is_deploying.
struct ActionStart {
  std::string actionId, resourceId, agent;
  int version = 0;
  TaskKind kind = TaskKind::Deploy;
  TimePoint started;
  nlohmann::json messages; ///< log lines as a tree (dry runs and facts: an empty array)
  /// A deploy's "Start run because …" line as the text of a JSON array (a tree costs ~5x its text while
  /// thousands of starts wait for the writer); when set, `messages` is unused.
  std::string messagesText;
  uint64_t seq = 0; ///< order among all effects (starts, finishes, blocked changes)
  /// Every line (messagesText parsed, or messages): for tests and logs, not the hot path.
  nlohmann::json lines() const;
};

/// A finished deploy: close the action row, update the rps result columns.
struct DeployFinish {
  std::string actionId, resourceId;
  int version = 0;
  std::string status; ///< as reported (skipped_for_dependency kept for the action row)
  std::string change;
  nlohmann::json changes, messages;
  std::string messagesText; ///< LogLines before `messages`, a JSON array's text (WorkResult::messagesText)
  /// Every line (messagesText parsed, then messages): for tests and logs, not the hot path.
  nlohmann::json lines() const;
  TimePoint started, finished;
  std::string deployedHash; ///< the hash this run deployed (-> last_deployed_attribute_hash)
  bool stale = false;       ///< the intent changed (or the resource left) while it ran
  bool removed = false;     ///< the resource is no longer managed: log only
  HandlerResult handlerResult = HandlerResult::New;
  bool compliant = false; ///< last_handler_run_compliant (non-stale only)
  Blocked blocked = Blocked::NotBlocked;
  bool sendEvent = false;
  uint64_t seq = 0; ///< order among all effects
};

/// A change of the blocked column outside a deploy's own finish (recovery, repair, a version).
struct BlockedWrite {
  std::string resourceId;
  Blocked blocked = Blocked::NotBlocked;
  uint64_t seq = 0;
};

/// A processed version: rps intent columns, orphan marks, scheduler.last_processed_model_version.
struct VersionWrite {
  int version = 0;
  struct Row {
    std::string resourceId, agent, hash;
    bool undefined = false, fresh = false; ///< fresh = NEW: reset the deploy columns
    Blocked blocked = Blocked::NotBlocked; ///< after the version's BLOCKED recomputation
  };
  std::vector<Row> rows; ///< new and updated resources
  struct Orphan {
    std::string resourceId;
    int after = 0; ///< orphaned_after: the last version that had it
  };
  std::vector<Orphan> orphans; ///< deleted resources
};

/// A dry-run result for one resource (dryrun.resources[rvid], todo - 1, plus a `dryrun` action).
struct DryrunWrite {
  std::string dryrunId, resourceId, actionId;
  int version = 0;
  nlohmann::json changes;
  std::string diffStatus;
  nlohmann::json messages;
  TimePoint started, finished;
  std::string status;
};

/// Facts reported for a resource (`parameter` rows, source fact) plus a getfact action when actionId is set.
struct FactWrite {
  std::string resourceId, actionId;
  int version = 0;
  nlohmann::json facts, messages;
  TimePoint started, finished;
  std::string status;
};

/// Everything the state machine changed since the last `takeEffects`. Effects of one kind are in order;
/// across kinds, `seq` orders starts, finishes and blocked changes (a writer must apply, per resource, the
/// latest). Versions processed since the last take are merged into one VersionWrite (the newest number).
struct Effects {
  std::optional<VersionWrite> version;
  std::vector<BlockedWrite> blocked; ///< blocked column changes outside deploys
  std::vector<ActionStart> starts;
  std::vector<DeployFinish> finishes;
  std::vector<DryrunWrite> dryruns;
  std::vector<FactWrite> facts;
  std::vector<std::string> log; ///< human log lines (warnings, decisions) for the process log
  bool empty() const {
    return !version && blocked.empty() && starts.empty() && finishes.empty() && dryruns.empty() &&
           facts.empty() && log.empty();
  }
};

/// Counters for tests and benchmarks.
struct Stats {
  uint64_t deploysStarted = 0, deploysFinished = 0, staleResults = 0, batches = 0;
};

/// The state machine.
class SchedulerState {
 public:
  SchedulerState(Executor& executor, const Clock& clock, std::function<std::string()> newUuid = {});
  SchedulerState(const SchedulerState&) = delete; // lookup_ refers to this object
  SchedulerState& operator=(const SchedulerState&) = delete;

  /// Settings changed (or first set): re-arms timers.
  void setSettings(const Settings& s);
  const Settings& settings() const { return settings_; }

  /// Rebuilds state after a start from the last processed version's intent and the rps rows (§6.10). Call
  /// once, before anything else; resources without a row count as new.
  void restore(int version, std::vector<plan::Intent> intents,
               const std::unordered_map<std::string, PersistedState>& persisted);
  /// After restore and any newer versions: schedules all dirty resources at INTERVAL_DEPLOY (start) and arms
  /// timers.
  void startDeploying();

  /// The intent this scheduler manages (input to plan::foldVersions).
  plan::ManagedIntent managedIntent() const;
  /// The same intent read in place (no copy; valid while the state is not changed).
  const plan::ManagedLookup& managedLookup() const { return lookup_; }
  int managedVersion() const { return version_; }
  /// Applies a folded change set; `newest` is the full content of cs.toVersion.
  void applyVersion(const plan::ChangeSet& cs, const std::vector<plan::Intent>& newest);
  /// The same, moving the change set's intents into the state (its intent lists are left empty).
  void applyVersion(plan::ChangeSet&& cs);

  /// User deploy (dirty only, USER_DEPLOY) or repair (all non-BLOCKED, USER_REPAIR), optionally limited to
  /// agents (§6.8). A repair requested while an earlier one still has work queued or running joins that run:
  /// resources whose deploy started since the run began (and are not dirty again) are not repaired twice
  /// (docs/deploy.md "A deploy during a repair").
  void userDeploy(const std::vector<std::string>& agents, bool repair);
  /// Agent pause flags (§6.10); unknown agents are remembered for later.
  void setAgentPaused(const std::string& agent, bool paused);
  /// Halt: nothing new starts until resume (running work finishes).
  void setHalted(bool halted);
  /// Back-pressure from the host: while set, nothing new starts (the writer is behind; bounds memory).
  void setBackpressure(bool on);
  /// The host is stopping: from now on nothing new starts, ever (running work may still report its result).
  /// Unlike setHalted it is not undone by a request, and it writes nothing (a restart schedules what is
  /// left).
  void stopStarting() { stopping_ = true; }
  /// Global cap on tasks in flight over all agents (0 = none): bounds the work items, executor requests and
  /// frames held at once, whatever the number of agents times `agent_parallelism`. Free slots go round robin
  /// over the agents with ready work.
  void setMaxInFlight(size_t n);
  /// How many start/finish records wait in the current Effects.
  size_t pendingEffects() const { return effects_.starts.size() + effects_.finishes.size(); }
  /// Dry-run `resources` (already filtered by the caller) of `version` into dryrun row `dryrunId` (§6.11).
  void requestDryrun(const std::string& dryrunId, int version, const std::vector<plan::Intent>& resources);
  /// Fact refresh for one resource (§6.12); ignored for unknown or BLOCKED resources.
  void requestFacts(const std::string& resourceId);

  /// Results from the executor (any order, any batch size).
  void onResults(std::vector<WorkResult> results);
  /// Fires due timers and cron ticks.
  void fireTimers();
  /// The next instant fireTimers has something to do, if any.
  std::optional<TimePoint> nextTimer() const;

  /// Hands ready tasks to the executor (called by every entry point above; harmless to call again).
  void pump();

  /// Everything since the last take. With `holdRunningStarts` > 0, starts of deploys still running that
  /// began less than that long ago stay for the next take (so a start and its finish are usually written as
  /// one completed action row); 0 takes everything (shutdown, tests).
  Effects takeEffects(std::chrono::milliseconds holdRunningStarts = std::chrono::milliseconds(0));
  /// Starts a take kept back (they need a later take even if nothing else happens).
  size_t heldStarts() const;
  const Stats& stats() const { return stats_; }

  // ----- Read-only views for tests, the progress line and the process log -----
  struct View {
    Compliance compliance;
    HandlerResult lastResult;
    Blocked blocked;
    bool scheduled, ready, running, timerArmed;
    Priority priority;
    std::optional<TimePoint> timerDue;
  };
  std::optional<View> view(const std::string& resourceId) const;
  bool dirty(const std::string& resourceId) const;
  size_t inFlight() const { return running_.size(); }
  size_t queuedDeploys() const;
  size_t resourceCount() const;

 private:
  struct QKey {
    int prio;
    uint64_t seq;
    TaskKind kind;
    uint64_t ref; // resource index (Deploy) or side task id
    bool operator<(const QKey& o) const { return prio != o.prio ? prio < o.prio : seq < o.seq; }
  };

  struct Res {
    std::string id;
    uint32_t agent = 0;
    std::string hash;
    bool undefined = false, present = false, sendEvent = false, receiveEvents = true;
    std::shared_ptr<const nlohmann::json> attributes;  // parsed (tests), or null and then:
    std::shared_ptr<const std::string> attributesText; // compact JSON, parsed when dispatched
    std::vector<std::string> requireIds;
    std::vector<uint32_t> requires_, provides;
    uint64_t generation = 0;
    Compliance compliance = Compliance::HasUpdate;
    HandlerResult lastResult = HandlerResult::New;
    Blocked blocked = Blocked::NotBlocked;
    bool lastCompliant = false, hasRun = false;
    std::optional<TimePoint> lastDeployed, lastSuccess, lastProducedEvents;
    std::optional<TimePoint> lastChangeStarted; // newest deploy start with change != nochange (§6.6 reload)
    // scheduling
    bool scheduled = false, ready = false, running = false;
    int prio = 0;
    uint64_t seq = 0;
    std::shared_ptr<const std::string> reason; // shared among the resources of one cause (internReason)
    std::vector<uint32_t> blockedOn; // direct requires that are scheduled or running (+ itself while running)
    bool timerArmed = false;
    TimePoint timerDue{};
    bool timerRepair = false;
    uint64_t lastStartSerial = 0; // startSerial_ when its last deploy started (0 = never in this process)
    bool inRepairRun = false;     // scheduled by the current user repair run
  };
  struct AgentQ {
    std::string name;
    bool paused = false;
    uint32_t inFlight = 0;
    std::set<QKey> ready;
  };
  struct SideTask {
    TaskKind kind;
    uint32_t res = UINT32_MAX; // RefreshFact
    std::string resourceId;
    uint32_t agent = 0;
    int version = 0;
    std::shared_ptr<const nlohmann::json> attributes;
    std::shared_ptr<const std::string> attributesText;
    std::string dryrunId;
  };
  struct Running {
    uint64_t taskId = 0;
    TaskKind kind = TaskKind::Deploy;
    uint32_t res = UINT32_MAX;
    uint32_t agent = 0;
    uint64_t generation = 0;
    int prio = 0;
    int version = 0;
    std::string hash, actionId, resourceId, dryrunId;
    TimePoint started;
  };

  uint32_t slotFor(const std::string& id);
  void reserveSlots(size_t n); // res_ and index_ room for n resources
  /// The slot of `id` (present or not), if it ever had one.
  std::optional<uint32_t> findSlot(std::string_view id) const {
    return index_.find(id, [this](uint32_t k) -> const std::string& { return res_[k].id; });
  }
  uint32_t agentFor(const std::string& name);
  void setIntent(Res& r, const plan::Intent& i);
  void setIntent(Res& r, plan::Intent&& i);
  void resetFresh(Res& r);
  void rebuildGraph();
  void recomputeBlocked(bool recordEffects);
  void recomputeBlockedOn();
  bool isDirty(const Res& r) const;
  void scheduleDeploy(uint32_t idx, Priority p, const std::string& reason);
  std::shared_ptr<const std::string> internReason(const std::string& reason);
  void unscheduleDeploy(uint32_t idx);
  void makeReady(uint32_t idx);
  void releaseDependents(uint32_t idx);
  void armTimer(uint32_t idx);
  void cancelTimer(uint32_t idx);
  void startTask(AgentQ& a, const QKey& k, std::vector<WorkItem>& batch);
  std::string dependencyState(const Res& d) const;
  void finishDeploy(Running& t, WorkResult& r);
  void finishSide(Running& t, const WorkResult& r);
  void armCron();
  void noteBlocked(const Res& r);

  class Lookup : public plan::ManagedLookup {
   public:
    explicit Lookup(const SchedulerState& s) : s_(s) {}
    std::optional<plan::ManagedRef> find(const std::string& id) const override;
    void forEach(const std::function<void(const std::string&, const plan::ManagedRef&)>& fn) const override;

   private:
    const SchedulerState& s_;
  };

  Executor& executor_;
  const Clock& clock_;
  Lookup lookup_{*this};
  std::function<std::string()> newUuid_;
  Settings settings_;
  int version_ = 0;
  bool halted_ = false, backpressure_ = false, stopping_ = false;
  std::vector<Res> res_;
  IdIndex index_; // id -> slot in res_; the ids are the records' own (stored once)
  std::vector<AgentQ> agents_;
  std::unordered_map<std::string, uint32_t> agentIndex_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> reasons_; // the fixed causes, shared
  std::unordered_map<uint64_t, Running> running_;
  std::unordered_map<uint64_t, SideTask> side_;
  std::set<std::pair<TimePoint, uint32_t>> timers_;
  std::optional<TimePoint> cronDeployDue_, cronRepairDue_;
  uint64_t nextSeq_ = 1, nextTask_ = 1, effectSeq_ = 1;
  uint64_t startSerial_ = 0, repairRunFrom_ = 0; // deploy starts so far; startSerial_ when the repair began
  Effects effects_;
  Stats stats_;
  std::set<uint32_t> pumpAgents_; // agents that may have startable work
  size_t maxInFlight_ = 0;        // 0 = no global cap
  uint32_t nextAgent_ = 0;        // round robin start of the next pump
};

} // namespace inm::scheduler

// The scheduler::Executor implementations of the scheduler host (SchedulerHost.cpp): the real one,
// which sends work to `inmanta executor` child processes (one per code blueprint) or to external agents'
// sessions, and the in-process NullResource test double (`--executor null`). Both deliver results on the
// scheduler's io_context thread, never from another thread. Private to schedhost/.
#pragma once

#include "ExternalAgents.h"
#include "executor/ExecutorClient.h"
#include "executor/Handler.h"
#include "scheduler/Scheduler.h"
#include "store/SchedulerStore.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace inm::schedhost {

/// TEST DOUBLE, not a real executor (`--executor null`): runs std::testing::NullResource in-process (the
/// dependency gate, then `fail`), answers `unavailable` for any other type. Used by tests that need exact
/// timing and by the benchmarks to measure the scheduler alone. INM_NULL_EXECUTOR_DELAY_MS delays each batch.
class InProcessNullExecutor : public scheduler::Executor {
 public:
  InProcessNullExecutor(boost::asio::io_context& ioc,
                        std::function<void(std::vector<scheduler::WorkResult>)> deliver);
  void submit(std::vector<scheduler::WorkItem> batch) override;

 private:
  static scheduler::WorkResult run(const scheduler::WorkItem& w);
  boost::asio::io_context& ioc_;
  std::function<void(std::vector<scheduler::WorkResult>)> deliver_;
  int delayMs_ = 0;
};

/// Where the handler code of a version comes from (the scheduler's pg layer, on the state machine's thread).
struct CodeSource {
  std::function<llvm::Expected<std::vector<scheduler::pg::SchedulerStore::CodeFile>>(
      int version, const std::string& agent)>
      load;
  std::function<llvm::Expected<std::optional<std::string>>(const std::string& hash)> readFile;
  std::string dir; ///< <state dir>/executor-code: one directory per blueprint
};

/// The real executors: work goes to `inmanta executor` child processes through executor::ExecutorPool, one
/// process per code blueprint. A blueprint is the set of (module, path, file hash) of the Python handler code
/// registered with the work item's version for its agent (docs/deploy.md "Blueprints"): no code is the
/// blueprint "builtin-handlers" (std's C++ handlers only, no interpreter); other code is laid out once under
/// <state dir>/executor-code/<blueprint>/<module>/plugins/ and its executor starts with `--python-code` of
/// it, so new code means a new executor and the deploys of version V run V's code. Agents with the same code
/// share a process; a dead process fails its in-flight work as `unavailable` and is restarted on the next
/// batch.
class ProcessExecutor : public scheduler::Executor {
 public:
  ProcessExecutor(boost::asio::io_context& ioc, executor::ExecutorOptions options,
                  executor::FileProvider files,
                  std::function<void(std::vector<scheduler::WorkResult>)> deliver, CodeSource code);
  /// Work of external agents goes to their sessions instead of the pool (docs/deploy.md "External agents").
  void setExternalAgents(ExternalAgents* externals) { externals_ = externals; }
  /// Where executors' `put_file` offers go (current contents for diffs).
  void setFileSink(executor::FileSink sink) { pool_.setFileSink(std::move(sink)); }
  /// autostart_agent_map (agent -> URI text): an ssh:// agent gets an executor of its own, keyed by blueprint
  /// and URI, so a changed URI means a new executor at that agent's next deploy (the old one retires idle).
  void setAgentUris(std::map<std::string, std::string> uris) { agentUris_ = std::move(uris); }
  /// Writes one autostart_agent_map entry (uri nullopt = remove) and calls `reply` (from any thread) with ""
  /// or the error. Set: std::AgentConfig work is applied here instead of in an executor (std.md §4).
  using AgentUriWriter = std::function<void(const std::string& agent, std::optional<std::string> uri,
                                            std::function<void(std::string error)> reply)>;
  void setAgentUriWriter(AgentUriWriter w) { writeAgentUri_ = std::move(w); }
  void submit(std::vector<scheduler::WorkItem> batch) override;
  /// Stops the retirement timer and the executor processes; `done` runs when they are gone.
  void shutdown(std::function<void()> done);
  /// Retires executors idle for `retention` (the reference's executor-retention-time): an executor of code
  /// that no longer runs stops; the next work for its blueprint starts it again. Checked every retention/2 (≥
  /// 50 ms).
  void retireIdle(std::chrono::milliseconds retention, std::function<void(const std::string&)> log);

 private:
  static constexpr const char* kBuiltin = "builtin-handlers";

  void armRetirement();
  executor::ExecutorOptions withKeyArguments(executor::ExecutorOptions o);
  /// The blueprint of (version, agent), read from the database once per pair and laid out once per blueprint.
  std::optional<std::string> blueprintOf(int version, const std::string& agent, std::string* error);
  /// Writes the files of a blueprint to <code dir>/<key>/<module>/<path> (into a temporary directory renamed
  /// into place, so a half-written tree is never used); an existing complete tree is reused.
  std::optional<std::string> materialise(const std::string& key,
                                         const std::vector<scheduler::pg::SchedulerStore::CodeFile>& files,
                                         std::string* error);

  boost::asio::io_context& ioc_;
  CodeSource code_;
  std::map<std::pair<int, std::string>, std::string> blueprints_; ///< (version, agent) -> blueprint key
  std::map<std::string, std::string> codeDirs_;                   ///< blueprint key -> its --python-code dir
  std::map<std::string, std::string> agentUris_;                  ///< autostart_agent_map
  AgentUriWriter writeAgentUri_;
  /// A std::AgentConfig action: compared with agentUris_, written through writeAgentUri_ unless a dry run.
  void applyAgentConfig(const executor::DeployRequest& r,
                        std::function<void(const executor::ActionResult&)> done);
  /// The pool key of (blueprint, agent): the blueprint for a local agent, "<blueprint>|<agent>|<uri>" for an
  /// ssh:// one; nullopt with `error` set when the agent's URI does not parse.
  std::optional<std::string> executorKey(const std::string& blueprint, const std::string& agent,
                                         std::string* error);
  /// ssh:// executor key -> (blueprint, "agent=uri" for --agent-uri).
  std::map<std::string, std::pair<std::string, std::string>> remoteKeys_;
  executor::ExecutorPool pool_;
  ExternalAgents* externals_ = nullptr;
  std::function<void(std::vector<scheduler::WorkResult>)> deliver_;
  std::unordered_map<std::string, uint64_t> taskOf_;
  std::vector<scheduler::WorkResult> pending_;
  bool flushQueued_ = false;
  boost::asio::steady_timer retireTimer_{ioc_};
  std::chrono::milliseconds retention_{0};
  std::function<void(const std::string&)> log_;
};

/// The executor the state machine holds: set to one of the above once main has chosen.
class ExecutorRef : public scheduler::Executor {
 public:
  scheduler::Executor* target = nullptr;
  void submit(std::vector<scheduler::WorkItem> batch) override { target->submit(std::move(batch)); }
};

} // namespace inm::schedhost

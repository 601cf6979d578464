// The scheduler process of one environment (`inmanta scheduler`, docs/deploy.md "The scheduler") as a
// library: requests in (scheduler_request rows + NOTIFY, read by store/SchedulerStore.h), the pure state
// machine (scheduler/) between, effects out (to the ordered writer, store/SchedulerStore.h), and the
// executors the state machine hands work to
// (`inmanta executor` children, external agents' sessions, or the in-process test double).
// tools/SchedulerMain.cpp only turns flags and configuration into HostOptions and calls runScheduler.
// Invariant: everything the process needs is in HostOptions, decoded and checked before the first database
// connection; runScheduler returns an exit code and has stopped every thread and child it started.
#pragma once

#include "config/Config.h"
#include "store/SchedulerStore.h"

#include <llvm/Support/Error.h>

#include <chrono>
#include <string>
#include <vector>

namespace inm::schedhost {

/// Everything the scheduler process of one environment needs, decoded from its flags and configuration.
struct HostOptions {
  std::string environment;            ///< the environment's uuid (--environment)
  scheduler::pg::DbParams db;         ///< [database]
  std::string executorKind;           ///< "process" (`inmanta executor` children) or "null" (test double)
  int executorThreads = 4;            ///< --executor-threads: threads of each executor process
  long maxInFlight = 2000;            ///< --max-in-flight: tasks in flight over all agents
  std::chrono::seconds stopGrace{10}; ///< [scheduler] stop_grace: running deploys' time to report on stop
  std::string stateDir;               ///< [config] state-dir: executor code lives under it
  std::string agentSocketPath;        ///< where the server relays external agents (empty: none)
  std::vector<std::string> executorArguments; ///< extra executor flags ([agent] ssh-known-hosts-file, …)
  /// [agent] failover-timeout: an external session silent this long is closed.
  std::chrono::milliseconds failoverTimeout{10000};
  /// [agent] executor-retention-time: an idle executor is kept this long (0 keeps them).
  std::chrono::milliseconds executorRetention{60000};
  int verbose = 0; ///< 1: every request and log line; 2: also every write's timing
};

/// Fills the configuration part of `options` ([scheduler], [database], [agent], [config]) from `cfg`.
/// `options.executorKind` set by a flag wins over [scheduler] executor. The error names the setting.
llvm::Error readConfig(const config::Config& cfg, HostOptions& options);

/// Runs the scheduler until SIGINT/SIGTERM (or the environment is deleted), then stops: running deploys get
/// the stop grace, the writer flushes, executors are reaped. Returns the process exit code (0, or 1 when it
/// could not start; the reason is printed to stderr).
int runScheduler(const HostOptions& options);

} // namespace inm::schedhost

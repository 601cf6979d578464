// The process host of `inmanta server` (orchestrator/server, inm_server): from a loaded configuration to a
// running server — options decoded, schema migrated, the one-server lock taken, store -> service -> api on
// one io_context with the compile service, the periodic jobs (report retention, version purge, fact renewal,
// lock check), the scheduler processes started, and the stop sequence on SIGTERM/SIGINT. The verb's entry
// (tools/ServerMain.cpp) parses the command line and supplies the scheduler supervisor. Sits above api/ and
// compile/; nothing below includes it. Invariant: every failure is one `inmanta server: …` line on stderr and
// a non-zero exit code, never an exception.
#pragma once

#include "service/Service.h"
#include "store/Store.h"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace inm::config {
class Config;
}

namespace inm::server {

/// The scheduler child processes the server keeps running (one per environment): the service's control,
/// plus what the host's stop sequence needs.
class SchedulerProcesses : public service::SchedulerControl {
 public:
  /// SIGTERM every child; `allGone` runs once, on the io_context, when no child is left.
  virtual void stopAll(std::function<void()> allGone) = 0;
  /// SIGKILL and reap every remaining child (last thing before exit).
  virtual void killAll() = 0;
};

/// What a supervisor of scheduler processes is started with.
struct SchedulerProcessOptions {
  std::string executable;               ///< this binary (children run `<executable> scheduler …`)
  std::vector<std::string> configFiles; ///< the server's -c files, passed on
  store::DbSettings db;                 ///< the server's database settings
  std::chrono::seconds killAfter{20};   ///< SIGTERM to SIGKILL: [scheduler] stop_grace + a margin
};

/// Makes the supervisor when [server] start_schedulers is on.
using SchedulerProcessFactory = std::function<std::unique_ptr<SchedulerProcesses>(
    boost::asio::io_context& io, SchedulerProcessOptions options)>;

/// How the verb was called, besides the configuration.
struct ServerRun {
  std::vector<std::string> configFiles; ///< -c FILE, in order
  bool listRoutes = false;              ///< print the route table with its policy as JSON and exit 0
  SchedulerProcessFactory schedulers;   ///< required unless start_schedulers is off
};

/// This binary's path (/proc/self/exe), or "inmanta" when it cannot be read.
std::string selfExecutable();

/// Runs the server until it is stopped; the process exit code (0 stopped by a signal, 1 configuration,
/// database or bind error, 3 the server lock was lost to another server).
int runServer(const config::Config& cfg, const ServerRun& run);

} // namespace inm::server

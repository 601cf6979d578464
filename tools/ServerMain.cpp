// `inmanta server [-c FILE]…`: the orchestrator server's entry. Reads the command line and the configuration
// files and hands them to the server host (orchestrator/server, server::runServer) with the scheduler
// supervisor of this binary (tools/SchedulerSupervisor.h), which runs `inmanta scheduler` children.
// Invariant: the exit code is the host's (0 after a signal, 1 on a configuration, database or bind error, 3
// when the server lock was lost), 2 for an unknown argument.
#include "SchedulerSupervisor.h"
#include "Verbs.h"
#include "config/Config.h"
#include "server/ServerHost.h"

#include <llvm/Support/raw_ostream.h>

namespace inm::tools {

namespace {

/// The supervisor as the host sees it.
class Supervisor final : public server::SchedulerProcesses {
 public:
  Supervisor(boost::asio::io_context& io, SupervisorOptions options) : supervisor_(io, std::move(options)) {}
  void ensureRunning(const std::string& env) override { supervisor_.ensureRunning(env); }
  void stop(const std::string& env) override { supervisor_.stop(env); }
  bool running(const std::string& env) const override { return supervisor_.running(env); }
  void stopAll(std::function<void()> allGone) override { supervisor_.stopAll(std::move(allGone)); }
  void killAll() override { supervisor_.killAll(); }

 private:
  SchedulerSupervisor supervisor_;
};

} // namespace

int serverMain(const std::vector<std::string>& args, int verbose) {
  std::vector<std::string> configFiles;
  bool listRoutes = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-c" || a == "--config") && i + 1 < args.size())
      configFiles.push_back(args[++i]);
    else if (a.rfind("--config=", 0) == 0)
      configFiles.push_back(a.substr(9));
    else if (a == "--list-routes") // hidden: the route table with its authorisation policy, as JSON
      listRoutes = true;
    else if (a == "-h" || a == "--help") {
      llvm::outs()
          << "usage: inmanta server [-c FILE]...\n  runs the orchestrator server (see docs/server.md)\n";
      return 0;
    } else {
      llvm::errs() << "inmanta server: unknown argument '" << a << "'\n";
      return 2;
    }
  }
  llvm::Expected<config::Config> cfg = config::Config::load(configFiles);
  if (!cfg) {
    llvm::errs() << "inmanta server: " << llvm::toString(cfg.takeError()) << "\n";
    return 1;
  }
  server::ServerRun run;
  run.configFiles = configFiles;
  run.listRoutes = listRoutes;
  run.schedulers = [](boost::asio::io_context& io, server::SchedulerProcessOptions o) {
    SupervisorOptions so;
    so.executable = std::move(o.executable);
    so.configFiles = std::move(o.configFiles);
    so.db = std::move(o.db);
    so.killAfter = o.killAfter;
    return std::unique_ptr<server::SchedulerProcesses>(std::make_unique<Supervisor>(io, std::move(so)));
  };
  (void)verbose;
  return server::runServer(*cfg, run);
}

} // namespace inm::tools

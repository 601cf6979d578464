// `inmanta scheduler --environment <uuid> [-c cfg]`: the per-environment scheduler process (docs/deploy.md).
// Wiring only: flags and configuration become schedhost::HostOptions, and the scheduler host
// (orchestrator/schedhost) runs the process — requests in, the state machine, effects out, executors.
// Invariant: a usage error exits 2 before anything is read; a configuration error exits 1 before the
// database is touched.
#include "Verbs.h"
#include "api/HttpServer.h"
#include "config/Config.h"
#include "schedhost/SchedulerHost.h"

#include <cstdlib>
#include <iostream>
#include <optional>

namespace inm::tools {

namespace {

int usage(const std::string& msg) {
  if (!msg.empty()) std::cerr << "inmanta scheduler: " << msg;
  std::cerr << "\nusage: inmanta scheduler --environment <uuid> [-c FILE]... [--executor process|null] "
               "[--executor-threads N] [--max-in-flight N]\n";
  return 2;
}

} // namespace

int schedulerMain(const std::vector<std::string>& args, int verbose) {
  schedhost::HostOptions o;
  o.verbose = verbose;
  std::string& env = o.environment;
  std::vector<std::string> cfgFiles;
  std::string& executorKind = o.executorKind; // --executor, else [scheduler] executor, else "process"
  // Tasks in flight over all agents (docs/deploy.md "Memory"): 100 agents × agent_parallelism 1000 would
  // otherwise hold every deploy of a 100k version as a work item, a request and a frame at once.
  o.maxInFlight = 2000;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (a == "--environment" || a == "-e") {
      auto v = value();
      if (!v) return usage("--environment needs a value");
      env = *v;
    } else if (a.rfind("--environment=", 0) == 0) {
      env = a.substr(14);
    } else if (a == "-c" || a == "--config") {
      auto v = value();
      if (!v) return usage("-c needs a file");
      cfgFiles.push_back(*v);
    } else if (a == "--executor") {
      auto v = value();
      if (!v) return usage("--executor needs a value");
      executorKind = *v;
    } else if (a == "--executor-threads") {
      auto v = value();
      if (!v || std::atoi(v->c_str()) < 1) return usage("--executor-threads needs a positive integer");
      o.executorThreads = std::atoi(v->c_str());
    } else if (a == "--max-in-flight") {
      auto v = value();
      if (!v || std::atol(v->c_str()) < 1) return usage("--max-in-flight needs a positive integer");
      o.maxInFlight = std::atol(v->c_str());
    } else if (a == "-h" || a == "--help") {
      usage("");
      return 0;
    } else {
      return usage("unknown argument '" + a + "'");
    }
  }
  if (env.empty()) return usage("--environment is required");
  if (!executorKind.empty() && executorKind != "null" && executorKind != "process")
    return usage("unknown --executor '" + executorKind +
                 "' (process: `inmanta executor` children; null: the "
                 "in-process NullResource test double)");

  auto cfg = config::Config::load(cfgFiles);
  if (!cfg) {
    std::cerr << "inmanta scheduler: " << llvm::toString(cfg.takeError()) << "\n";
    return 1;
  }
  if (llvm::Error err = schedhost::readConfig(*cfg, o)) {
    std::cerr << "inmanta scheduler: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  // External agents (docs/deploy.md): the server relays `inmanta agent` connections to this socket.
  if (o.executorKind == "process") o.agentSocketPath = api::agentSocketPath(o.stateDir, env);
  return schedhost::runScheduler(o);
}

} // namespace inm::tools

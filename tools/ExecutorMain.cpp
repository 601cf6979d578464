// `inmanta executor [--threads N] [--file-timeout S]`: the executor process the scheduler starts (orchestrator.md
// §7). It speaks the framed protocol of docs/deploy.md ("Executor protocol") on stdin/stdout and runs the std
// handlers; stdout carries frames only, diagnostics go to stderr. Not meant to be run by hand.
#include "executor/ExecutorHost.h"
#include "Verbs.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace inm::tools {

int executorMain(const std::vector<std::string>& args, int verbose) {
  executor::HostOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> const std::string* {
      if (i + 1 >= args.size()) {
        std::cerr << "inmanta executor: " << flag << " needs a value\n";
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--threads") {
      const std::string* v = value("--threads");
      if (!v) return 2;
      char* end = nullptr;
      long n = std::strtol(v->c_str(), &end, 10);
      if (*end || n < 1 || n > 256) {
        std::cerr << "inmanta executor: --threads must be an integer between 1 and 256, got '" << *v << "'\n";
        return 2;
      }
      options.threads = static_cast<int>(n);
    } else if (a == "--file-timeout") {
      const std::string* v = value("--file-timeout");
      if (!v) return 2;
      char* end = nullptr;
      double s = std::strtod(v->c_str(), &end);
      if (*end || s <= 0) {
        std::cerr << "inmanta executor: --file-timeout must be a positive number of seconds, got '" << *v << "'\n";
        return 2;
      }
      options.fileTimeoutSeconds = s;
    } else if (a == "--help" || a == "-h") {
      std::cerr << "usage: inmanta executor [--threads N] [--file-timeout SECONDS]\n"
                   "Started by the scheduler; speaks the executor protocol on stdin/stdout.\n";
      return 0;
    } else {
      std::cerr << "inmanta executor: unknown argument '" << a << "'\n";
      return 2;
    }
  }
  executor::HandlerRegistry registry;
  executor::registerStdHandlers(registry);
  std::fflush(stdout);
  return executor::runExecutorHost(0, 1, registry, options);
}

}  // namespace inm::tools

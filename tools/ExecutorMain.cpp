// `inmanta executor [--threads N] [--file-timeout S]`: the executor process the scheduler starts
// (orchestrator.md §7). It speaks the framed protocol of docs/deploy.md ("Executor protocol") on stdin/stdout
// and runs the std handlers; stdout carries frames only, diagnostics go to stderr. Not meant to be run by
// hand.
// `--python-artifact FILE` (the version's artifact: its `python_code` is written to a private directory) or
// `--python-code DIR` (modules laid out as DIR/<module>/plugins/) adds the `@provider` handlers of that
// Python code (pybridge/, docs/pybridge.md); without them no interpreter starts. Code that carries a `std`
// module (the project's own std) replaces the native std handlers. `--agent-uri NAME=URI` makes
// an agent deploy on an ssh:// host (with `--ssh-known-hosts`/`--ssh-identity` from the server config).
#include "Verbs.h"
#include "executor/ExecutorHost.h"
#include "pybridge/PyHandlers.h"

#include <llvm/Support/FileSystem.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace inm::tools {

int executorMain(const std::vector<std::string>& args, int verbose) {
  executor::HostOptions options;
  std::string pythonArtifact, pythonCode;
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
        std::cerr << "inmanta executor: --file-timeout must be a positive number of seconds, got '" << *v
                  << "'\n";
        return 2;
      }
      options.fileTimeoutSeconds = s;
    } else if (a == "--python-artifact" || a == "--python-code") {
      const std::string* v = value(a.c_str());
      if (!v) return 2;
      (a == "--python-artifact" ? pythonArtifact : pythonCode) = *v;
    } else if (a == "--agent-uri") {
      // NAME=URI: the agent deploys on that host (docs/deploy.md "Agentless over SSH").
      const std::string* v = value("--agent-uri");
      if (!v) return 2;
      size_t eq = v->find('=');
      auto uri = model::parseAgentUri(eq == std::string::npos ? "" : v->substr(eq + 1));
      if (eq == std::string::npos || eq == 0 || !uri) {
        std::cerr << "inmanta executor: --agent-uri needs NAME=URI, got '" << *v << "'"
                  << (uri ? std::string() : ": " + llvm::toString(uri.takeError())) << "\n";
        return 2;
      }
      options.agentUris[v->substr(0, eq)] = *uri;
    } else if (a == "--ssh-known-hosts" || a == "--ssh-identity") {
      const std::string* v = value(a.c_str());
      if (!v) return 2;
      (a == "--ssh-known-hosts" ? options.ssh.knownHostsFile : options.ssh.identityFile) = *v;
    } else if (a == "--help" || a == "-h") {
      std::cerr
          << "usage: inmanta executor [--threads N] [--file-timeout SECONDS] [--python-artifact FILE | "
             "--python-code DIR] [--agent-uri NAME=URI]... [--ssh-known-hosts FILE] [--ssh-identity FILE]\n"
             "Started by the scheduler; speaks the executor protocol on stdin/stdout.\n";
      return 0;
    } else {
      std::cerr << "inmanta executor: unknown argument '" << a << "'\n";
      return 2;
    }
  }
  executor::HandlerRegistry registry;
  // The version's Python code: a private copy for the artifact form, removed when the executor ends.
  std::string codeDir = pythonCode;
  llvm::SmallString<128> tmpDir;
  if (!pythonArtifact.empty()) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("inmanta-executor-code", tmpDir)) {
      std::cerr << "inmanta executor: cannot create a directory for the Python code: " << ec.message()
                << "\n";
      return 2;
    }
    codeDir = std::string(tmpDir.str());
  }
  int rc = 0;
  if (codeDir.empty()) executor::registerStdHandlers(registry);
  if (!codeDir.empty()) {
    llvm::Expected<std::vector<pybridge::PythonModule>> modules =
        pythonArtifact.empty()
            ? llvm::Expected<std::vector<pybridge::PythonModule>>(pybridge::modulesInDir(codeDir))
            : pybridge::materializeCode(pythonArtifact, codeDir);
    // Code of the project's own std (docs/modules.md "The std module"): its providers are std's handlers,
    // the native ones belong to the built-in std and are not registered.
    if (modules && std::none_of(modules->begin(), modules->end(),
                                [](const pybridge::PythonModule& m) { return m.name == "std"; }))
      executor::registerStdHandlers(registry);
    llvm::Error err = modules ? pybridge::registerPythonHandlers(*modules, registry) : modules.takeError();
    if (err) {
      std::cerr << "inmanta executor: " << llvm::toString(std::move(err)) << "\n";
      rc = 2;
    }
  }
  if (rc == 0) {
    std::fflush(stdout);
    rc = executor::runExecutorHost(0, 1, registry, options);
  }
  if (!tmpDir.empty()) (void)llvm::sys::fs::remove_directories(tmpDir);
  return rc;
}

} // namespace inm::tools

// `inmanta compile-service-run`: runs the compile service (orchestrator/compile) without the HTTP server, for
// integration tests, benchmarks and operators who want to drain a queue by hand. This entry parses the flags;
// compile::drainQueues (compile/QueueDrain.h) recovers unfinished runs, optionally queues one request, keeps
// the auto_full_compile crons running for --serve seconds, and returns once every queue is idle. Invariant:
// a usage mistake exits 2 before anything connects.
#include "Verbs.h"
#include "compile/QueueDrain.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <unistd.h>

namespace inm::tools {
namespace {

const char* kUsage =
    "usage: inmanta compile-service-run --db CONNINFO --state-dir DIR [-e ENV --request [--update] "
    "[--no-export]\n"
    "         [--metadata JSON] [--env-var K=V]...] [--serve SECONDS] [--timeout SECONDS] [--compiler PATH]\n"
    "         [--server-address H --server-port P] [--token T] [--git-username U] [--git-token T]\n"
    "         [--git-ssh-key FILE] [--retention SECONDS]\n"
    "Drains the compile queues of the database (see docs/autonomous.md) and exits when they are idle.\n";

int usageError(const std::string& msg) {
  llvm::errs() << "inmanta compile-service-run: " << msg << "\n" << kUsage;
  return 2;
}

std::string selfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : "inmanta";
}

} // namespace

int compileServiceRunMain(const std::vector<std::string>& args, int verbose) {
  compile::CompileServiceOptions opts;
  opts.compilerBinary = selfPath();
  compile::CompileRequest req;
  bool doRequest = false;
  compile::DrainOptions drain;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      llvm::outs() << kUsage;
      return 0;
    }
    if (a == "--db") {
      if (!value(opts.dbConnection)) return usageError("--db needs a connection string");
      continue;
    }
    if (a == "--state-dir") {
      if (!value(opts.stateDir)) return usageError("--state-dir needs a directory");
      continue;
    }
    if (a == "-e") {
      if (!value(req.environment)) return usageError("-e needs an environment id");
      continue;
    }
    if (a == "--request") {
      doRequest = true;
      continue;
    }
    if (a == "--update") {
      req.forceUpdate = true;
      continue;
    }
    if (a == "--no-export") {
      req.doExport = false;
      continue;
    }
    if (a == "--metadata") {
      if (!value(v)) return usageError("--metadata needs JSON");
      req.metadata = nlohmann::json::parse(v, nullptr, false);
      if (!req.metadata.is_object()) return usageError("--metadata: not a JSON object: " + v);
      continue;
    }
    if (a == "--env-var") {
      if (!value(v) || v.find('=') == std::string::npos) return usageError("--env-var needs KEY=VALUE");
      req.envVars[v.substr(0, v.find('='))] = v.substr(v.find('=') + 1);
      continue;
    }
    if (a == "--serve" || a == "--timeout" || a == "--server-port" || a == "--retention") {
      if (!value(v)) return usageError(a + " needs a number");
      char* end = nullptr;
      double n = std::strtod(v.c_str(), &end);
      if (!end || *end || n < 0) return usageError(a + ": not a number: " + v);
      if (a == "--serve")
        drain.serveSeconds = n;
      else if (a == "--timeout")
        opts.compileTimeout = std::chrono::seconds(long(n));
      else if (a == "--retention")
        drain.retention = long(n);
      else
        opts.serverPort = int(n);
      continue;
    }
    if (a == "--compiler") {
      if (!value(opts.compilerBinary)) return usageError("--compiler needs a path");
      continue;
    }
    if (a == "--server-address") {
      if (!value(opts.serverAddress)) return usageError("--server-address needs a host");
      continue;
    }
    if (a == "--token") {
      if (!value(opts.internalToken)) return usageError("--token needs a token");
      continue;
    }
    if (a == "--git-username") {
      if (!value(opts.git.username)) return usageError("--git-username needs a value");
      continue;
    }
    if (a == "--git-token") {
      if (!value(opts.git.password)) return usageError("--git-token needs a value");
      continue;
    }
    if (a == "--git-ssh-key") {
      if (!value(opts.git.sshKey)) return usageError("--git-ssh-key needs a file");
      continue;
    }
    return usageError("unknown argument " + a);
  }
  if (opts.dbConnection.empty()) return usageError("--db is required");
  if (opts.stateDir.empty()) return usageError("--state-dir is required");
  if (doRequest && req.environment.empty()) return usageError("--request needs -e ENV");
  if (auto ec = llvm::sys::fs::create_directories(opts.stateDir))
    return llvm::errs() << "inmanta compile-service-run: cannot create " << opts.stateDir << ": "
                        << ec.message() << "\n",
           1;
  llvm::SmallString<256> abs(opts.stateDir);
  (void)llvm::sys::fs::make_absolute(abs);
  opts.stateDir = abs.str().str();
  if (req.metadata.empty())
    req.metadata = {{"type", "api"}, {"message", "Recompile trigger through compile-service-run"}};

  if (doRequest) drain.request = req;
  return compile::drainQueues(std::move(opts), drain);
}

} // namespace inm::tools

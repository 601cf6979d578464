// The `inmanta` binary's entry: the start-up step (tools/StartUp.h), then the dispatch on the program name
// (`inmanta-cli`, `inmanta-compile` / `inmanta-export` as `inmanta compile|export`) and on the first
// non-option argument (the verbs of tools/Verbs.cpp). `compile` and `export` are the compiler driver,
// driver/ (driver/CompileOptions.h parses their command line, driver/Compile.h runs them); this file prints
// the help, the command list and the version from the verb table. Exit codes: the verb's; 2 on bad usage.
// Invariant: every return from main flushes stdout and stderr and turns a failed write into exit 1.
#include "StartUp.h"
#include "Verbs.h"
#include "driver/Compile.h"
#include "driver/CompileOptions.h"
#include "support/Limits.h"

#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace inm;

namespace {

int usage(const std::string& msg) {
  llvm::errs() << "inmanta: " << msg << "\n(run 'inmanta --help' for usage)\n";
  return 2;
}

int driverMain(int argc, char** argv) {
  tools::prepareProcess(argc, argv); // huge pages, stack, tcmalloc: at most one exec (tools/StartUp.h)
  initStackGuard();
  auto env = [](const char* name) -> const char* { return std::getenv(name); };
  if (std::string err = applyLimitsFromEnv(env); !err.empty()) return usage(err);
  driver::CompileOptions opts;
  if (std::string err = driver::readEnvSwitches(opts); !err.empty()) return usage(err);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string prog = llvm::sys::path::filename(argv[0]).str();
  if (prog == "inmanta-compile") opts.command = "compile";
  if (prog == "inmanta-export") opts.command = "export";
  if (prog == "inmanta-cli") {
    if (!tools::kCliMain) return usage("inmanta-cli is not built yet");
    return tools::kCliMain(args);
  }
  // Orchestrator verbs: the first non-option argument names one. Global -v flags and the reference's global
  // `-c FILE` / `--config FILE` may precede it; the config flags are handed on to the verb in front of its
  // own.
  if (opts.command.empty()) {
    tools::VerbCall call = tools::findVerb(args);
    for (const tools::Verb* v = tools::kVerbs; v->name && !call.name.empty(); ++v) {
      if (call.name != v->name) continue;
      for (size_t i = call.index + 1; i < args.size(); ++i)
        if ((args[i] == "--help" || args[i] == "-h") && tools::printCommandHelp(llvm::outs(), v->name))
          return 0;
      if (!v->run) break; // compile, export: the compiler below
      std::vector<std::string> verbArgs = call.globalConfig;
      verbArgs.insert(verbArgs.end(), args.begin() + long(call.index) + 1, args.end());
      return v->run(verbArgs, opts.verbose + call.verbose);
    }
  }

  driver::ParsedArgs parsed = driver::parseCompileArgs(args, opts);
  switch (parsed.action) {
  case driver::ParsedArgs::Action::Help:
    if (!tools::printCommandHelp(llvm::outs(), opts.command)) tools::printHelp(llvm::outs());
    return 0;
  case driver::ParsedArgs::Action::ListVerbs:
    for (const tools::Verb* v = tools::kVerbs; v->name; ++v) llvm::outs() << v->name << "\n";
    return 0;
  case driver::ParsedArgs::Action::Version:
    llvm::outs() << "inmanta " << driver::kCompilerVersion << "\n";
    return 0;
  case driver::ParsedArgs::Action::Usage: return usage(parsed.message);
  case driver::ParsedArgs::Action::Run: break;
  }
  if (opts.command.empty()) {
    tools::printHelp(llvm::errs());
    return 2;
  }
  if (opts.command != "compile" && opts.command != "export")
    return usage(tools::unknownCommand(opts.command));
  return driver::runCompileCommand(opts);
}

} // namespace

/// Every return from main goes through here: a failed write to stdout/stderr becomes exit 1 with a message
/// (stdout) instead of LLVM's "IO failure on output stream" abort when the streams are destroyed.
int main(int argc, char** argv) {
  int rc = driverMain(argc, argv);
  llvm::outs().flush();
  std::fflush(stdout);
  if (llvm::outs().has_error()) {
    llvm::errs() << "inmanta: error: cannot write to standard output: " << llvm::outs().error().message()
                 << "\n";
    llvm::outs().clear_error();
    rc = 1;
  }
  llvm::errs().flush();
  if (llvm::errs().has_error()) {
    llvm::errs().clear_error();
    rc = 1;
  }
  return rc;
}

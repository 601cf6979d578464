// The command line of `inmanta compile` / `inmanta export` read into driver::CompileOptions (see
// driver/CompileOptions.h): the flags of both commands, the push flags of export, the resource limits
// (--max-NAME, support/Limits.h) and the reference's options we accept and ignore with a note. Invariant: the
// first --help, --list-verbs, --version or usage error ends the reading, in argument order, so the notes for
// the options before it are printed exactly as far as the reading went.
#include "driver/CompileOptions.h"
#include "support/Limits.h"

#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace inm::driver {

std::string readEnvSwitches(CompileOptions& opts) {
  if (const char* v = std::getenv("INM_PARSER")) {
    std::optional<frontend::ParserMode> mode = frontend::parserModeFromName(v);
    if (!mode)
      return std::string("INM_PARSER: unknown parser '") + v + "' (antlr, fast-strict or fast-check)";
    opts.parse.mode = *mode;
  }
  if (const char* v = std::getenv("INM_DUMP_RANGES"); v && *v && *v != '0') opts.dump.ranges = true;
  if (const char* v = std::getenv("INM_EVAL_STATS"); v && *v) opts.evalStats = true;
  return "";
}

namespace {

ParsedArgs stop(ParsedArgs::Action action, std::string message = "") {
  return ParsedArgs{action, std::move(message)};
}
ParsedArgs usage(std::string message) { return stop(ParsedArgs::Action::Usage, std::move(message)); }

} // namespace

ParsedArgs parseCompileArgs(const std::vector<std::string>& args, CompileOptions& opts) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= args.size()) return std::string();
      (void)flag;
      return args[++i];
    };
    if (a == "--help" || a == "-h") return stop(ParsedArgs::Action::Help);
    if (a == "--list-verbs") return stop(ParsedArgs::Action::ListVerbs);
    if (a == "--version") return stop(ParsedArgs::Action::Version);
    if (a == "-v" || a == "-vv" || a == "-vvv" || a == "-vvvv") {
      opts.verbose += int(a.size()) - 1;
      continue;
    }
    if (a == "--no-cache" || a == "-X" || a == "--experimental-data-trace") continue;
    // Plain switches.
    const std::pair<const char*, bool*> switches[] = {
        {"--syntax-only", &opts.syntaxOnly},     {"--builtin-std", &opts.builtinStd},
        {"--dump-ast", &opts.dumpAst},           {"--dump-ir", &opts.dumpIr},
        {"--dump-model", &opts.dumpModel},       {"--diagnostics-format=json", &opts.json},
        {"--warnings=ignore", &opts.warningsOff}};
    auto sw =
        std::find_if(std::begin(switches), std::end(switches), [&](const auto& e) { return a == e.first; });
    if (sw != std::end(switches)) {
      *sw->second = true;
      continue;
    }
    if (a == "--diagnostics-format=text") {
      opts.json = false;
      continue;
    }
    if (a.rfind("--warnings=", 0) == 0) continue;
    if (a == "-d") {
      opts.deploy = opts.push.release = true;
      continue;
    }
    // export push flags (and the value-taking flags of the reference that we accept and ignore)
    auto need = [&](std::string& into) -> bool {
      into = value(a.c_str());
      return !into.empty();
    };
    if (a == "-c" || a == "--config") {
      std::string f;
      if (!need(f)) return usage(a + " needs a file");
      opts.push.configFiles.push_back(f);
      continue;
    }
    if (a == "-e") {
      if (!need(opts.push.environment)) return usage("-e needs an environment id");
      continue;
    }
    if (a == "--server_address" || a == "--server-address") {
      if (!need(opts.push.serverAddress)) return usage(a + " needs a host");
      continue;
    }
    if (a == "--server_port" || a == "--server-port") {
      if (!need(opts.push.serverPort)) return usage(a + " needs a port");
      continue;
    }
    if (a == "--token") {
      if (!need(opts.push.token)) return usage("--token needs a token");
      continue;
    }
    if (a == "--ssl-ca-cert") {
      if (!need(opts.push.sslCaCert)) return usage("--ssl-ca-cert needs a file");
      continue;
    }
    if (a == "--ssl") {
      opts.push.ssl = 1;
      continue;
    }
    if (a == "--no-ssl") {
      opts.push.ssl = 0;
      continue;
    }
    if (a == "-m" || a == "--metadata") {
      if (!need(opts.push.metadata)) return usage(a + " needs JSON");
      continue;
    }
    if (a == "--partial") {
      opts.push.partial = true;
      continue;
    }
    if (a == "--delete-resource-set") {
      std::string set;
      if (!need(set)) return usage("--delete-resource-set needs a set name");
      opts.push.deleteResourceSets.push_back(set);
      continue;
    }
    if (a == "--export-plugin") {
      std::string ignored;
      if (!need(ignored)) return usage(a + " needs a value");
      llvm::errs() << "inmanta: note: ignoring option " << a << "\n";
      continue;
    }
    if (a == "-f") {
      opts.mainFile = value("-f");
      if (opts.mainFile.empty()) return usage("-f needs a file");
      continue;
    }
    if (a == "-j") {
      opts.exportFile = value("-j");
      if (opts.exportFile.empty()) return usage("-j needs a file");
      continue;
    }
    if (a == "--export-json") {
      opts.exportFile = value("");
      if (opts.exportFile.empty()) return usage("--export-json needs a file");
      continue;
    }
    if (a.rfind("--export-json=", 0) == 0) {
      opts.exportFile = a.substr(14);
      continue;
    }
    if (a == "--export-compile-data") {
      opts.compileData = true;
      continue;
    }
    if (a == "--export-compile-data-file") {
      opts.compileDataFile = value("");
      if (opts.compileDataFile.empty()) return usage("--export-compile-data-file needs a file");
      continue;
    }
    if (a == "--project") {
      opts.projectDir = value("--project");
      continue;
    }
    if (a.rfind("--max-", 0) == 0) {
      size_t eq = a.find('=');
      std::string name = a.substr(6, eq == std::string::npos ? std::string::npos : eq - 6);
      std::string v = eq == std::string::npos ? value(a.c_str()) : a.substr(eq + 1);
      if (std::string err = setLimit(name, v); !err.empty()) return usage(err);
      continue;
    }
    if (!a.empty() && a[0] != '-' && opts.command.empty()) {
      opts.command = a;
      continue;
    }
    if (!a.empty() && a[0] == '-' && opts.command.empty()) return usage("unknown option " + a);
    // Unknown options of the reference's compile/export are accepted and ignored, with a note.
    if (!a.empty() && a[0] == '-') {
      llvm::errs() << "inmanta: note: ignoring option " << a << "\n";
      continue;
    }
    return usage("unexpected argument " + a);
  }
  // `compile --export-json F` (the CI form of inmanta-compile) compiles and writes the artifact like export
  // -j.
  if (opts.command == "compile" && !opts.exportFile.empty()) opts.command = "export";
  return stop(ParsedArgs::Action::Run);
}

} // namespace inm::driver

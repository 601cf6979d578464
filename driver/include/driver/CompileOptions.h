// The options of `inmanta compile` / `inmanta export` (the compiler driver, library inm_driver): what the
// command line and the stages' testing switches in the environment say, read into one CompileOptions before
// anything runs. tools/InmantaMain.cpp hands the arguments after the global dispatch to parseCompileArgs and
// prints the help, the command list and the version itself (the verb table is tools'); everything else of the
// command line is decided here. Invariant: parsing has no effect but the options, the "ignoring option" notes
// on stderr and the resource limits it sets (support/Limits.h).
#pragma once

#include "frontend/Frontend.h"

#include <string>
#include <vector>

namespace inm::driver {

/// The compiler's version, printed by `inmanta --version` and sent with an export.
inline constexpr const char* kCompilerVersion = "0.1.0";

/// The push-related flags of `inmanta export`, as given (empty = not given).
struct PushFlags {
  std::vector<std::string> configFiles; // -c FILE (global)
  std::string environment;              // -e
  std::string serverAddress;            // --server_address
  std::string serverPort;               // --server_port
  std::string token;                    // --token
  std::string sslCaCert;                // --ssl-ca-cert
  std::string metadata;                 // -m / --metadata (JSON object)
  int ssl = -1;                         // --ssl = 1, --no-ssl = 0, unset = -1
  bool partial = false;
  bool release = false; // -d
  std::vector<std::string> deleteResourceSets;
};

struct CompileOptions {
  std::string command;
  std::string mainFile = "main.cf";
  std::string projectDir = ".";
  std::string exportFile;      // export -j FILE (--export-json FILE)
  bool compileData = false;    // --export-compile-data: write the diagnostics as JSON
  std::string compileDataFile; // --export-compile-data-file FILE (default compile_data.json)
  bool syntaxOnly = false;
  bool builtinStd = false; // --builtin-std (docs/modules.md "The std module")
  bool dumpAst = false;
  bool dumpIr = false;
  bool dumpModel = false;
  bool json = false;
  bool warningsOff = false;
  bool deploy = false;
  int verbose = 0;
  PushFlags push; // export to a server (no -j)
  // Testing switches of the stages, read from the environment only here (docs/testing.md):
  frontend::ParseOptions parse; // INM_PARSER=antlr|fast-strict|fast-check
  frontend::DumpOptions dump;   // INM_DUMP_RANGES=1: --dump-ast appends every store, field and range
  bool evalStats = false;       // INM_EVAL_STATS=1: evaluation statistics on stderr
};

/// The stages' testing switches from the environment (compatibility: they were read inside the libraries).
/// An error text for a bad value, else "".
std::string readEnvSwitches(CompileOptions& opts);

/// What the command line asks for once parsed.
struct ParsedArgs {
  enum class Action {
    Run,       ///< run opts.command (may still be empty or unknown: the caller checks it against its verbs)
    Help,      ///< --help / -h: the usage of opts.command, or the general help when it has none
    ListVerbs, ///< --list-verbs
    Version,   ///< --version
    Usage,     ///< bad usage: `message` says why (exit 2)
  };
  Action action = Action::Run;
  std::string message;
};

/// Reads the compile/export command line (every argument of the program; the first non-option argument is
/// the command) into `opts`. Stops at the first --help, --list-verbs, --version or usage error, in argument
/// order. `compile --export-json F` becomes `export` (the CI form of inmanta-compile).
ParsedArgs parseCompileArgs(const std::vector<std::string>& args, CompileOptions& opts);

} // namespace inm::driver

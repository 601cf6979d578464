// The `inmanta` binary's commands: `compile` and `export` (the compiler, driver/ via tools/InmantaMain.cpp),
// the orchestrator verbs (server, scheduler, executor, agent, deploy, …) and the `inmanta-cli` program. Each
// verb lives in its own tools/<Verb>Main.cpp and is listed once in Verbs.cpp with its one-line help and its
// full usage (`inmanta VERB --help`); InmantaMain.cpp dispatches to it when the first non-option argument
// names it. Invariant: a verb gets the arguments after its name (global -v flags before the verb are passed
// as `verbose`) and returns the exit code; `inmanta VERB --help` prints the row's usage and exits 0.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace inm::tools {

/// One command: its name, one line of help, its entry point (nullptr: the compiler's own compile/export)
/// and its usage: the synopsis line and every option, printed by `inmanta NAME --help`. Declare the usage in
/// the row, next to the name, so that adding a verb adds its help.
struct Verb {
  const char* name;
  const char* help;
  int (*run)(const std::vector<std::string>& args, int verbose);
  const char* usage = nullptr; ///< nullptr: the verb prints its own help (`--help` is passed to it)
};

/// Every command, in help order; ends with a {nullptr, nullptr, nullptr} row.
extern const Verb kVerbs[];

/// `inmanta-cli` (also `inmanta cli …`): the API client (tools/CliMain.cpp); nullptr until it exists.
extern int (*const kCliMain)(const std::vector<std::string>& args);

/// The general help (`inmanta --help`): every command with its line, then the compiler's own options.
void printHelp(llvm::raw_ostream& os);

/// The usage of command `name` (`inmanta NAME --help`); false when it has none of its own.
bool printCommandHelp(llvm::raw_ostream& os, llvm::StringRef name);

/// "unknown command 'x'", with the nearest command when one is close.
std::string unknownCommand(const std::string& name);

} // namespace inm::tools

// The `inmanta` binary's orchestrator verbs (server, scheduler, executor, agent, deploy, …) and the
// `inmanta-cli` program. Each verb lives in its own tools/<Verb>Main.cpp and is listed once in Verbs.cpp;
// InmantaMain.cpp dispatches to it when the first non-option argument names it. Invariant: a verb gets the
// arguments after its name (global -v flags before the verb are passed as `verbose`) and returns the exit
// code.
#pragma once

#include <string>
#include <vector>

namespace inm::tools {

/// One verb: its name, one line of help, and its entry point.
struct Verb {
  const char* name;
  const char* help;
  int (*run)(const std::vector<std::string>& args, int verbose);
};

/// Every orchestrator verb, in help order; ends with a {nullptr, nullptr, nullptr} row.
extern const Verb kVerbs[];

/// `inmanta-cli` (also `inmanta cli …`): the API client (tools/CliMain.cpp); nullptr until it exists.
extern int (*const kCliMain)(const std::vector<std::string>& args);

} // namespace inm::tools

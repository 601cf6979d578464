// The start-up step of the `inmanta` binary (docs/deploy.md "Start-up and allocator"): which verb a command
// line names, found by one function for the driver's dispatch and for the process set-up, and the set-up
// itself — the environment and limits a process can only take at exec time are prepared once and the process
// re-executes itself at most once. Invariant: the re-executed image removes the one-shot marker first, so
// every child it starts (e.g. the scheduler's executors) makes its own start-up decision.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace inm::tools {

/// Where the verb sits in `inmanta [-v…] [-c FILE | --config FILE]… VERB args…`.
struct VerbCall {
  std::string name; ///< the first non-option argument; "" when an option other than those comes first
  size_t index = 0; ///< its index in the arguments
  int verbose = 0;  ///< the -v levels in front of it
  std::vector<std::string> globalConfig; ///< the `-c FILE` pairs in front of it, as "-c", FILE
};

/// `args` are the arguments without the program name. The name found may be no verb at all (then the
/// arguments are the compiler's, e.g. a project directory); the caller checks it against its verb table.
VerbCall findVerb(const std::vector<std::string>& args);

/// What the start-up step wants for a process: whether to raise the stack limit and turn on huge pages for
/// malloc (every verb; not when the caller set INM_REEXEC_DONE or the environment already has them), and
/// whether to preload tcmalloc (the scheduler and executor verbs of `inmanta`, in builds that have it).
struct StartUpPlan {
  std::string verb;           ///< the verb (findVerb), "" for the compiler or another program name
  bool fastAllocator = false; ///< preload tcmalloc (scheduler, executor)
  bool decommit = false;      ///< with TCMALLOC_AGGRESSIVE_DECOMMIT (executor, unless the caller set it)
  bool childrenAreCommands = false; ///< executor, agent: the caller's stack limit is set back after the exec
};
StartUpPlan planStartUp(int argc, char** argv);

/// The start-up step, first thing in main: in the re-executed image, restores what the caller's children
/// must see (LD_PRELOAD and the decommit switch; the marker goes); otherwise prepares the environment and
/// limits and re-executes once when anything changed. Any failure carries on in this process as it is.
void prepareProcess(int argc, char** argv);

} // namespace inm::tools

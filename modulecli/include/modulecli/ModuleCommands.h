// The commands of `inmanta project …` and `inmanta module …` for v1 modules (docs/modules.md), as a library
// (modulecli/, inm_modulecli) over projectmgr/ (install, inspect, freeze) and frontend/ (the std module's
// folder). The verbs' entries are tools/ModuleMain.cpp. Invariant: progress and tables on stdout,
// "warning: …" / "error: …" lines on stderr; the result is the exit code (0 success, 1 failure, 2 bad usage).
#pragma once

#include <string>
#include <vector>

namespace inm::modulecli {

/// `inmanta project install|update|freeze|init …`; `args` start with the sub-command.
int runProject(const std::vector<std::string>& args);
/// `inmanta module list|add|status|verify|freeze|create …`; `args` start with the sub-command.
int runModule(const std::vector<std::string>& args);

} // namespace inm::modulecli

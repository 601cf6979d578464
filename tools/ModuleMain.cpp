// The `inmanta project …` and `inmanta module …` verbs for v1 modules (docs/modules.md), the verbs' entries:
// the commands live in modulecli/ (modulecli/ModuleCommands.h) and act on the project in the current
// directory. Invariant: the exit code is the command's (0 success, 1 failure, 2 bad usage).
#include "Verbs.h"
#include "modulecli/ModuleCommands.h"

namespace inm::tools {

int projectMain(const std::vector<std::string>& args, int /*verbose*/) { return modulecli::runProject(args); }

int moduleMain(const std::vector<std::string>& args, int /*verbose*/) { return modulecli::runModule(args); }

} // namespace inm::tools

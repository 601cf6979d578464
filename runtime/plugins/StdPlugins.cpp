// STUB — replaced by the std plugin implementations (issue #6).
#include "runtime/Plugins.h"
namespace inm::runtime {
void registerStdPlugins(PluginRegistry&) {}
} // namespace inm::runtime

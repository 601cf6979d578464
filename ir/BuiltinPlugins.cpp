// STUB — the signatures of the native std plugins (written with the plugin implementations, issue #6).
#include "ir/Lower.h"
namespace inm::ir {
const std::vector<PluginSpec>& builtinPluginSpecs() { static std::vector<PluginSpec> v; return v; }
} // namespace inm::ir

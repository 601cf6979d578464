// The plugin registry; see Plugins.h. std plugin implementations live in plugins/*.cpp.
#include "runtime/Plugins.h"

namespace inm::runtime {

void PluginRegistry::add(std::string fullName, PluginFn fn) {
  fns_.emplace_back(std::move(fullName), std::move(fn));
}

const PluginFn* PluginRegistry::find(llvm::StringRef fullName) const {
  for (const auto& [name, fn] : fns_)
    if (name == fullName) return &fn;
  return nullptr;
}

const PluginRegistry& PluginRegistry::builtins() {
  static const PluginRegistry reg = [] {
    PluginRegistry r;
    registerStdPlugins(r);
    return r;
  }();
  return reg;
}

} // namespace inm::runtime

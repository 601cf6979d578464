// STUB — replaced by declaration lowering (issue #5).
#include <algorithm>
#include "ir/Lower.h"
namespace inm::ir {
Program lower(const frontend::Project& project, StringTable& strings, DiagnosticEngine&) {
  Program p; p.strings = &strings; p.project = &project; return p;
}
void dumpIr(const Program&, const SourceManager&, llvm::raw_ostream&) {}
bool Program::isSubtype(EntityId sub, EntityId super) const {
  const auto& a = entities[sub].ancestors;
  return std::binary_search(a.begin(), a.end(), super);
}
NamespaceId Program::findNamespace(llvm::StringRef name) const {
  for (uint32_t i = 0; i < namespaces.size(); ++i)
    if (namespaces[NamespaceId{i}].name == name) return NamespaceId{i};
  return NamespaceId{};
}
} // namespace inm::ir

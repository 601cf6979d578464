// Type-name resolution shared by lowering and the passes (language.md §3.4 steps 1-2): primitive names,
// then the current namespace and its parents (never std implicitly), or a qualified name through the
// file's visible namespaces. Also the small Program queries (isSubtype, findNamespace, attr) and the
// reference spelling of declared types. Invariant: pure lookups, no diagnostics are reported here.
#include "ir/Lower.h"

#include <algorithm>

namespace inm::ir {

bool primitiveType(llvm::StringRef name, BaseType& out) {
  static const std::pair<const char*, BaseType> kPrims[] = {
      {"string", BaseType::String}, {"int", BaseType::Int},       {"float", BaseType::Float},
      {"bool", BaseType::Bool},     {"number", BaseType::Number}, {"list", BaseType::List},
      {"dict", BaseType::Dict}};
  for (const auto& [n, b] : kPrims)
    if (name == n) {
      out = b;
      return true;
    }
  return false;
}

LookupResult lookupType(const Program& program, NamespaceId ns, llvm::StringRef name, TypeEntry& out,
                        TypeMiss& miss) {
  const StringTable& strings = *program.strings;
  size_t sep = name.rfind("::");
  if (sep == llvm::StringRef::npos) {
    BaseType b;
    if (primitiveType(name, b)) {
      out = TypeEntry{TypeKind::Primitive, uint32_t(b)};
      return LookupResult::Found;
    }
    StringId sid = strings.lookup(name);
    if (sid.valid())
      for (NamespaceId cur = ns; cur.valid(); cur = program.namespaces[cur].parent) {
        const Namespace& n = program.namespaces[cur];
        auto it = n.types.find(sid.index);
        if (it != n.types.end()) {
          out = it->second;
          return LookupResult::Found;
        }
      }
    miss = {name.str(), program.namespaces[ns].name, {}};
    return LookupResult::NotFound;
  }
  llvm::StringRef prefix = name.substr(0, sep), shortName = name.substr(sep + 2);
  StringId prefixId = strings.lookup(prefix);
  const Namespace& cur = program.namespaces[ns];
  auto vit = prefixId.valid() ? cur.visible.find(prefixId.index) : cur.visible.end();
  if (vit == cur.visible.end()) {
    miss = {name.str(), cur.name, prefix.str()};
    return LookupResult::MissingImport;
  }
  const Namespace& target = program.namespaces[vit->second];
  StringId sid = strings.lookup(shortName);
  if (sid.valid()) {
    auto it = target.types.find(sid.index);
    if (it != target.types.end()) {
      out = it->second;
      return LookupResult::Found;
    }
  }
  miss = {name.str(), target.name, {}};
  return LookupResult::NotFound;
}

std::string typeName(const Program& program, const Type& type) {
  static const char* kNames[] = {"string", "int", "float", "number", "bool", "list", "dict", "any"};
  std::string s;
  if (type.base == BaseType::Entity)
    s = program.entities[type.entity].fullName;
  else if (type.base == BaseType::Typedef)
    s = program.typedefs[type.typedefId].fullName;
  else
    s = kNames[int(type.base)];
  if (type.isList) s += "[]";
  if (type.nullable) s += "?";
  return s;
}

std::string missingIndexAttrLine(const Program& program, const Entity& e, uint32_t slot) {
  const Attribute& a = program.attrs[e.slots[slot]];
  const char* kind = a.isRelation ? "relation" : "attribute";
  std::string name = program.strings->str(a.name).str();
  return std::string("\n\t* Missing ") + kind + " '" + name + "'. The " + kind + " " + e.fullName + "." +
         name + " is part of an index.";
}

bool Program::isSubtype(EntityId sub, EntityId super) const {
  const auto& a = entities[sub].ancestors;
  return std::binary_search(a.begin(), a.end(), super);
}

NamespaceId Program::findNamespace(llvm::StringRef name) const {
  for (uint32_t i = 0; i < namespaces.size(); ++i)
    if (namespaces[NamespaceId{i}].name == name) return NamespaceId{i};
  return NamespaceId{};
}

const Attribute& Program::attr(EntityId e, StringId name, bool* found) const {
  int s = slotOf(e, name);
  if (s < 0) {
    if (found) *found = false;
    static const Attribute kNone;
    return kNone;
  }
  if (found) *found = true;
  return attrs[entities[e].slots[uint32_t(s)]];
}

} // namespace inm::ir

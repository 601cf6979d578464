// Type-name resolution shared by lowering and the passes (language.md §3.4 steps 1-2): primitive names,
// then the current namespace and its parents (never std implicitly), or a qualified name through the
// file's visible namespaces. Also the small Program queries (isSubtype, findNamespace, attr) and the
// reference spelling of declared types. Invariant: pure lookups, no diagnostics are reported here.
#include "ir/Lower.h"
#include "support/Suggest.h"

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

std::string suggestType(const Program& program, NamespaceId ns, llvm::StringRef name, unsigned kinds) {
  const StringTable& strings = *program.strings;
  auto addTypes = [&](Suggester& s, const Namespace& n) {
    for (const auto& [nameIndex, entry] : n.types)
      if (kinds & typeKindBit(entry.kind)) s.add(strings.str(StringId{nameIndex}));
  };
  size_t sep = name.rfind("::");
  if (sep == llvm::StringRef::npos) {
    Suggester s(name);
    if (kinds & typeKindBit(TypeKind::Primitive))
      for (const char* p : {"string", "int", "float", "bool", "number", "list", "dict"}) s.add(p);
    for (NamespaceId cur = ns; cur.valid(); cur = program.namespaces[cur].parent)
      addTypes(s, program.namespaces[cur]);
    return s.best();
  }
  llvm::StringRef prefix = name.substr(0, sep), shortName = name.substr(sep + 2);
  const Namespace& cur = program.namespaces[ns];
  StringId prefixId = strings.lookup(prefix);
  auto vit = prefixId.valid() ? cur.visible.find(prefixId.index) : cur.visible.end();
  if (vit != cur.visible.end()) {
    Suggester s(shortName);
    addTypes(s, program.namespaces[vit->second]);
    std::string best = s.best();
    return best.empty() ? best : prefix.str() + "::" + best;
  }
  // The prefix is not visible: a visible namespace with a near name that has the type.
  Suggester s(prefix);
  for (const auto& [nameIndex, target] : cur.visible) {
    StringId sid = strings.lookup(shortName);
    auto it = sid.valid() ? program.namespaces[target].types.find(sid.index)
                          : program.namespaces[target].types.end();
    if (it != program.namespaces[target].types.end() && (kinds & typeKindBit(it->second.kind)))
      s.add(strings.str(StringId{nameIndex}));
  }
  std::string best = s.best();
  return best.empty() ? best : best + "::" + shortName.str();
}

std::string suggestAttribute(const Program& program, EntityId e, llvm::StringRef name) {
  Suggester s(name);
  for (AttrId a : program.entities[e].slots) s.add(program.strings->str(program.attrs[a].name));
  return s.best();
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

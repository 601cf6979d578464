// `inmanta compile --dump-ir`: a deterministic text rendering of the checked declarations — namespaces
// (with visible names), entities (parents, slots with types/multiplicities/defaults, indexes,
// implements), typedefs, implementations and plugins — used by the lit goldens of test/lang/decl.
// Invariant: output depends only on the Program, never on hash-map iteration order (keys are sorted).
#include "frontend/Frontend.h"
#include "ir/Lower.h"

#include <algorithm>

namespace inm::ir {

namespace {

std::string multText(const frontend::Multiplicity& m) {
  std::string s = "[" + std::to_string(m.low);
  if (m.high == frontend::Multiplicity::kUnbounded)
    s += ":]";
  else if (m.high == m.low)
    s += "]";
  else
    s += ":" + std::to_string(m.high) + "]";
  return s;
}

std::string exprText(const Program& p, const CodeRef& c) {
  if (!c.valid() || !c.expr.valid()) return "";
  return frontend::reprExpr(p.ast(c.file), c.expr, *p.strings);
}

std::string locText(const SourceManager& sm, SourceRange r) {
  if (!r.valid()) return "<builtin>";
  llvm::StringRef path = sm.path(r.file);
  size_t slash = path.rfind('/');
  if (slash != llvm::StringRef::npos) path = path.substr(slash + 1);
  return path.str() + ":" + std::to_string(r.line) + ":" + std::to_string(r.col);
}

} // namespace

void dumpIr(const Program& p, const SourceManager& sm, llvm::raw_ostream& os) {
  const StringTable& s = *p.strings;
  // Namespaces in name order.
  std::vector<NamespaceId> nss;
  for (uint32_t i = 0; i < p.namespaces.size(); ++i) nss.push_back(NamespaceId{i});
  std::sort(nss.begin(), nss.end(),
            [&](NamespaceId a, NamespaceId b) { return p.namespaces[a].name < p.namespaces[b].name; });
  for (NamespaceId id : nss) {
    const Namespace& n = p.namespaces[id];
    if (n.file == UINT32_MAX && n.name != "std") continue;
    bool isStd = n.name == "std";
    os << "namespace " << n.name;
    if (n.parent.valid()) os << " parent " << p.namespaces[n.parent].name;
    os << "\n";
    std::vector<std::pair<std::string, std::string>> vis;
    for (const auto& [k, v] : n.visible) vis.push_back({s.str(StringId{k}).str(), p.namespaces[v].name});
    std::sort(vis.begin(), vis.end());
    os << "  visible";
    for (const auto& [k, v] : vis) os << " " << k << (k == v ? "" : "=" + v);
    os << "\n";
    if (isStd) {
      os << "  (std contents omitted)\n";
      continue;
    }
    std::vector<std::pair<std::string, TypeEntry>> types;
    for (const auto& [k, v] : n.types) types.push_back({s.str(StringId{k}).str(), v});
    std::sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [name, te] : types) {
      switch (te.kind) {
      case TypeKind::Entity: {
        const Entity& e = p.entities[EntityId{te.index}];
        os << "  entity " << e.fullName << " @" << locText(sm, e.range) << "\n";
        if (!e.parents.empty()) {
          os << "    parents";
          for (EntityId par : e.parents) os << " " << p.entities[par].fullName;
          os << "\n";
        }
        for (size_t i = 0; i < e.slots.size(); ++i) {
          const Attribute& a = p.attrs[e.slots[i]];
          os << "    slot " << i << " " << s.str(a.name) << ": " << typeName(p, a.type);
          if (a.isRelation) {
            os << " " << multText(a.mult);
            if (a.inverse.valid())
              os << " inverse " << p.entities[p.attrs[a.inverse].owner].fullName << "."
                 << s.str(p.attrs[a.inverse].name);
            if (!a.annotations.empty()) os << " annotations " << a.annotations.size();
          }
          if (a.owner != EntityId{te.index}) os << " from " << p.entities[a.owner].fullName;
          if (i < e.defaults.size() && e.defaults[i].valid()) os << " = " << exprText(p, e.defaults[i]);
          os << "\n";
        }
        for (IndexId ix : e.indexes) {
          const Index& x = p.indexes[ix];
          os << "    index " << p.entities[x.entity].fullName << "(";
          for (size_t j = 0; j < x.attrNames.size(); ++j) os << (j ? ", " : "") << s.str(x.attrNames[j]);
          os << ")\n";
        }
        for (ImplementId im : e.implements) {
          const Implement& m = p.implements[im];
          os << "    implement for " << p.entities[m.entity].fullName << " using";
          for (ImplId impl : m.impls) os << " " << p.impls[impl].fullName;
          if (m.usesParents) os << " parents";
          if (m.when.valid()) os << " when " << exprText(p, m.when);
          os << "\n";
        }
        if (!e.subtypes.empty()) {
          os << "    subtypes";
          for (EntityId sub : e.subtypes) os << " " << p.entities[sub].fullName;
          os << "\n";
        }
        break;
      }
      case TypeKind::Typedef: {
        const Typedef& t = p.typedefs[TypedefId{te.index}];
        static const char* kNames[] = {"string", "int", "float", "number", "bool", "list", "dict", "any"};
        os << "  typedef " << t.fullName << " as " << (int(t.base) < 8 ? kNames[int(t.base)] : "?");
        if (t.constraint.valid()) os << " matching " << exprText(p, t.constraint);
        os << "\n";
        break;
      }
      case TypeKind::Implementation: {
        const Implementation& im = p.impls[ImplId{te.index}];
        os << "  implementation " << im.fullName << " for "
           << (im.entity.valid() ? p.entities[im.entity].fullName : std::string("?")) << " statements "
           << (im.body.stmtEnd - im.body.stmtBegin) << "\n";
        break;
      }
      case TypeKind::Plugin: {
        const Plugin& pl = p.plugins[PluginId{te.index}];
        os << "  plugin " << pl.fullName << "(";
        for (size_t j = 0; j < pl.params.size(); ++j) {
          const PluginParam& pp = pl.params[j];
          os << (j ? ", " : "")
             << (pp.isVarArgs  ? "*"
                 : pp.isKwArgs ? "**"
                               : "")
             << s.str(pp.name) << ": " << typeName(p, pp.type) << (pp.hasDefault ? " = ..." : "");
        }
        os << ") -> " << typeName(p, pl.returnType) << "\n";
        break;
      }
      case TypeKind::Primitive: break;
      }
    }
  }
  if (!p.precedence.empty()) {
    os << "precedence\n";
    for (const PrecedenceRule& r : p.precedence)
      os << "  " << p.entities[p.attrs[r.before].owner].fullName << "." << s.str(p.attrs[r.before].name)
         << " before " << p.entities[p.attrs[r.after].owner].fullName << "." << s.str(p.attrs[r.after].name)
         << "\n";
  }
}

} // namespace inm::ir

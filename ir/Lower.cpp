// Entry of the ir stage (phase 2 "define types" of language.md §5.1, first half): one Namespace per
// source-file namespace with its parent link and visible names (self, std, imports), std::Entity with
// its requires/provides relation, every type name (entities, typedefs, implementations, builtin
// plugins) registered per namespace with duplicate detection. LowerDecls.cpp then resolves the bodies.
// Invariant: after lower(), Program::files[i] describes project.files[i] and has a resolution table
// sized to that file's expressions.
#include "LowerContext.h"
#include "support/Suggest.h"

namespace inm::ir {

using frontend::DeclKind;

NamespaceId LowerContext::getNamespace(llvm::StringRef name) {
  auto it = nsByName.find(name);
  if (it != nsByName.end()) return it->second;
  Namespace n;
  n.name = name.str();
  size_t sep = name.rfind("::");
  if (sep != llvm::StringRef::npos) n.parent = getNamespace(name.substr(0, sep));
  NamespaceId id = program.namespaces.add(std::move(n));
  nsByName[name] = id;
  Namespace& ns = program.namespaces[id];
  ns.visible[strings.intern(name).index] = id;
  return id;
}

bool LowerContext::defineType(NamespaceId ns, StringId name, TypeEntry entry, SourceRange range,
                              const std::string& what) {
  Namespace& n = program.namespaces[ns];
  uint64_t key = (uint64_t(ns.index) << 32) | name.index;
  auto [it, inserted] = n.types.try_emplace(name.index, entry);
  if (inserted) {
    typeRanges[key] = range;
    return true;
  }
  SourceRange first = typeRanges.lookup(key);
  // The reference names the definition being added "original" and the earlier one "duplicate".
  std::string subject = what.empty() ? "Type " + n.name + "::" + strings.str(name).str() : what;
  Diagnostic& d = first.valid() && range.valid()
                      ? diags.error(DiagKind::DuplicateType, range, subject, loc(range), loc(first))
                      : diags.error(DiagKind::DuplicateTypeNoLoc, range, subject);
  d.locWithColumn = true;
  if (first.valid()) d.note(makeDiag(DiagKind::FirstDefinedHere, first));
  return false;
}

bool LowerContext::resolve(NamespaceId ns, StringId name, SourceRange range, TypeEntry& out,
                           llvm::StringRef reportedIn) {
  TypeMiss miss;
  llvm::StringRef text = strings.str(name);
  LookupResult r = lookupType(program, ns, text, out, miss);
  if (r == LookupResult::Found) {
    if (out.kind == TypeKind::Primitive && BaseType(out.index) == BaseType::Number &&
        program.namespaces[ns].name != "std") {
      Diagnostic& d = diags.error(DiagKind::TypeDeprecation, range);
      d.locWithColumn = true;
    }
    return true;
  }
  Diagnostic& d = r == LookupResult::MissingImport
                      ? diags.error(DiagKind::MissingImport, range, miss.type, miss.ns, miss.module,
                                    diags.sources().path(range.file))
                      : diags.error(DiagKind::TypeNotFound, range, miss.type, miss.ns);
  d.locWithColumn = true;
  d.reportedIn = reportedIn.str();
  addDidYouMean(d, suggestType(program, ns, text, kAnyTypeKinds));
  return false;
}

namespace {

void setupNamespaces(LowerContext& cx) {
  Program& p = cx.program;
  NamespaceId stdNs = cx.getNamespace("std");
  p.files.resize(cx.project.files.size());
  for (uint32_t i = 0; i < cx.project.files.size(); ++i) {
    const frontend::SourceFile& f = cx.project.files[i];
    NamespaceId ns = cx.getNamespace(f.ns);
    Namespace& n = p.namespaces[ns];
    if (n.file == UINT32_MAX) n.file = i;
    FileInfo& fi = p.files[i];
    fi.source = &f;
    fi.ns = ns;
    fi.resolved.assign(f.ast.exprs.size(), Resolved{});
  }
  // Visible names: own full name (set by getNamespace), std, imports.
  StringId stdName = cx.strings.intern("std");
  for (uint32_t i = 0; i < cx.project.files.size(); ++i) {
    const frontend::SourceFile& f = cx.project.files[i];
    Namespace& n = p.namespaces[p.files[i].ns];
    n.visible[stdName.index] = stdNs;
    llvm::DenseMap<uint32_t, bool> imported;
    for (frontend::DeclId did : f.ast.topDecls) {
      const frontend::Decl& d = f.ast.decls[did];
      if (d.kind != DeclKind::Import) continue;
      auto it = cx.nsByName.find(cx.strings.str(d.name));
      if (it == cx.nsByName.end()) continue; // the loader reported the missing module
      StringId visible = d.alias.valid() && d.alias != StringTable::empty() ? d.alias : d.name;
      bool isStd = !(d.alias.valid() && d.alias != StringTable::empty()) && it->second == stdNs;
      if (imported.count(visible.index) && !isStd) {
        Diagnostic& diag = cx.diags.error(DiagKind::DuplicateImport, d.range);
        diag.locWithColumn = true;
        continue;
      }
      imported[visible.index] = true;
      p.namespaces[p.files[i].ns].visible[visible.index] = it->second;
    }
  }
}

void createStdEntity(LowerContext& cx) {
  Program& p = cx.program;
  NamespaceId stdNs = cx.getNamespace("std");
  Entity e;
  e.name = cx.strings.intern("Entity");
  e.fullName = "std::Entity";
  e.ns = stdNs;
  p.stdEntity = p.entities.add(std::move(e));
  cx.defineType(stdNs, p.entities[p.stdEntity].name, TypeEntry{TypeKind::Entity, p.stdEntity.index}, {}, "");
  Attribute req, prov;
  req.name = cx.strings.intern("requires");
  prov.name = cx.strings.intern("provides");
  for (Attribute* a : {&req, &prov}) {
    a->owner = p.stdEntity;
    a->isRelation = true;
    a->type.base = BaseType::Entity;
    a->type.entity = p.stdEntity;
    a->mult = frontend::Multiplicity{0, frontend::Multiplicity::kUnbounded};
  }
  AttrId r = p.attrs.add(req), v = p.attrs.add(prov);
  p.attrs[r].inverse = v;
  p.attrs[v].inverse = r;
  p.entities[p.stdEntity].ownAttrs = {r, v};
}

void registerTypes(LowerContext& cx) {
  Program& p = cx.program;
  for (uint32_t i = 0; i < cx.project.files.size(); ++i) {
    const frontend::Ast& ast = cx.project.files[i].ast;
    NamespaceId ns = p.files[i].ns;
    const std::string& nsName = p.namespaces[ns].name;
    for (frontend::DeclId did : ast.topDecls) {
      const frontend::Decl& d = ast.decls[did];
      llvm::StringRef name = d.name.valid() ? cx.strings.str(d.name) : "";
      const std::string fullName = nsName + "::" + name.str(); // entity, typedef, implementation
      const SourceRange at = d.nameRange.valid() ? d.nameRange : d.range;
      switch (d.kind) {
      case DeclKind::Entity: {
        Entity e;
        e.name = d.name;
        e.fullName = fullName;
        e.ns = ns;
        e.doc = d.doc;
        e.range = at;
        EntityId id = p.entities.add(std::move(e));
        cx.defineType(ns, d.name, TypeEntry{TypeKind::Entity, id.index}, p.entities[id].range,
                      "Entity " + p.entities[id].fullName);
        break;
      }
      case DeclKind::Typedef: {
        Typedef t;
        t.name = d.name;
        t.fullName = fullName;
        t.ns = ns;
        t.range = at;
        BaseType b;
        if (primitiveType(name, b)) {
          Diagnostic& w = cx.diags.error(DiagKind::CompilerRuntimeWarn, t.range, name.str());
          w.locWithColumn = true;
        }
        TypedefId id = p.typedefs.add(std::move(t));
        cx.defineType(ns, d.name, TypeEntry{TypeKind::Typedef, id.index}, p.typedefs[id].range,
                      "TypeConstraint " + p.typedefs[id].fullName);
        break;
      }
      case DeclKind::Implementation: {
        Implementation impl;
        impl.name = d.name;
        impl.fullName = fullName;
        impl.ns = ns;
        impl.range = at;
        impl.body = CodeRef{i, {}, d.bodyBegin, d.bodyEnd};
        ImplId id = p.impls.add(std::move(impl));
        cx.defineType(ns, d.name, TypeEntry{TypeKind::Implementation, id.index}, p.impls[id].range,
                      "Implementation " + p.impls[id].fullName + " for type " +
                          (d.forEntity.valid() ? cx.strings.str(d.forEntity).str() : std::string()));
        break;
      }
      default: break;
      }
    }
  }
}

void registerPlugins(LowerContext& cx, llvm::ArrayRef<PluginSpec> specs) {
  Program& p = cx.program;
  for (const PluginSpec& spec : specs) {
    Plugin plugin;
    std::string fullName;
    if (!parsePluginSignature(p, cx.strings, spec.signature, plugin, fullName)) continue;
    size_t sep = fullName.rfind("::");
    if (sep == std::string::npos) continue;
    auto it = cx.nsByName.find(fullName.substr(0, sep));
    if (it == cx.nsByName.end() || p.namespaces[it->second].file == UINT32_MAX) continue;
    plugin.ns = it->second;
    plugin.name = cx.strings.intern(fullName.substr(sep + 2));
    plugin.fullName = fullName;
    plugin.allowUnknown = spec.allowUnknown;
    plugin.deprecated = spec.deprecated;
    StringId name = plugin.name;
    PluginId id = p.plugins.add(std::move(plugin));
    cx.defineType(it->second, name, TypeEntry{TypeKind::Plugin, id.index}, spec.range, "");
  }
}

} // namespace

Program lower(const frontend::Project& project, StringTable& strings, DiagnosticEngine& diags,
              llvm::ArrayRef<PluginSpec> extraPlugins, bool nativeStdPlugins) {
  Program p;
  p.strings = &strings;
  p.project = &project;
  LowerContext cx(p, strings, diags, project);
  setupNamespaces(cx);
  createStdEntity(cx);
  registerTypes(cx);
  if (nativeStdPlugins) registerPlugins(cx, builtinPluginSpecs());
  registerPlugins(cx, extraPlugins);
  lowerDecls(cx);
  return p;
}

} // namespace inm::ir

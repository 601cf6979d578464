// Second half of phase 2 "define types" (language.md §5.1): with every type name registered, resolve
// each declaration's references — typedef bases and constraints, entity parents (cycles broken and
// reported), attributes, relation ends (inverse links), implementation targets, implement statements,
// index declarations. Checks needing inherited attributes run later in passes/. Invariant: every
// stored EntityId/TypedefId/ImplId is valid; unresolvable references are reported and dropped.
#include "LowerContext.h"

#include <llvm/ADT/DenseSet.h>

namespace inm::ir {

using frontend::Decl;
using frontend::DeclKind;

namespace {

struct DeclWalker {
  LowerContext& cx;
  Program& p;
  uint32_t file = 0;
  NamespaceId ns;
  const frontend::Ast* ast = nullptr;
  /// The reference's rendering of the declaration being resolved, which it names in "reported in" when a
  /// type it references is missing: `Entity(Host)`, `Implementation(i)`, `Implement(Host)`; empty for
  /// typedefs, relations and indexes, which it reports by location only.
  std::string declRepr;

  bool entityOf(StringId name, SourceRange range, EntityId& out) {
    TypeEntry t;
    if (!cx.resolve(ns, name, range, t, declRepr)) return false;
    if (t.kind != TypeKind::Entity) {
      Diagnostic& d = cx.diags.error(DiagKind::NotAnEntity, range, cx.strings.str(name).str());
      d.locWithColumn = true;
      return false;
    }
    out = EntityId{t.index};
    return true;
  }

  void typedefDecl(const Decl& d, TypedefId id) {
    Typedef& td = p.typedefs[id];
    td.constraint = d.expr.valid() ? CodeRef{file, d.expr, 0, 0} : CodeRef{};
    TypeEntry t;
    SourceRange r = d.nameRange.valid() ? d.nameRange : d.range;
    if (!d.forEntity.valid() || !cx.resolve(ns, d.forEntity, r, t)) return;
    if (t.kind == TypeKind::Primitive) {
      td.base = BaseType(t.index);
    } else if (t.kind == TypeKind::Typedef && TypedefId{t.index} != id) {
      td.base = p.typedefs[TypedefId{t.index}].base;
    } else {
      cx.diags.error(DiagKind::TypedefOnNonPrimitive, r, td.fullName, cx.strings.str(d.forEntity).str())
          .locWithColumn = true;
    }
  }

  void entityParents(const Decl& d, EntityId id) {
    declRepr = "Entity(" + cx.strings.str(d.name).str() + ")";
    Entity& e = p.entities[id];
    for (uint32_t i = d.nameBegin; i < d.nameEnd; ++i) {
      const frontend::NameRef& n = ast->names[i];
      EntityId parent;
      if (!entityOf(n.name, n.range, parent)) continue;
      if (std::find(e.parents.begin(), e.parents.end(), parent) != e.parents.end()) {
        cx.diags.error(DiagKind::SameParentTwice, n.range).locWithColumn = true;
        continue;
      }
      p.entities[id].parents.push_back(parent);
    }
    if (d.nameBegin == d.nameEnd && id != p.stdEntity) p.entities[id].parents.push_back(p.stdEntity);
  }

  Type attrType(const frontend::TypeRef& tr, bool& ok) {
    Type t;
    t.isList = tr.isList;
    t.nullable = tr.nullable;
    TypeEntry te;
    ok = cx.resolve(ns, tr.name, tr.range, te, declRepr);
    if (!ok) return t;
    if (te.kind == TypeKind::Primitive)
      t.base = BaseType(te.index);
    else if (te.kind == TypeKind::Typedef) {
      t.base = BaseType::Typedef;
      t.typedefId = TypedefId{te.index};
    } else {
      cx.diags.error(DiagKind::InvalidAttributeType, tr.range, cx.strings.str(tr.name).str()).locWithColumn =
          true;
      ok = false;
    }
    return t;
  }

  void duplicateAttr(EntityId owner, AttrId first, SourceRange at, StringId name) {
    const Entity& e = p.entities[owner];
    Diagnostic& diag = cx.diags.error(DiagKind::DuplicateAttribute, at, cx.strings.str(name).str(),
                                      cx.strings.str(e.name).str(), cx.loc(p.attrs[first].range), cx.loc(at));
    diag.locWithColumn = true;
    diag.note(makeDiag(DiagKind::FirstDefinedHere, p.attrs[first].range));
  }

  AttrId findOwn(EntityId e, StringId name) {
    for (AttrId a : p.entities[e].ownAttrs)
      if (p.attrs[a].name == name) return a;
    return AttrId{};
  }

  void entityAttrs(const Decl& d, EntityId id) {
    declRepr = "Entity(" + cx.strings.str(d.name).str() + ")";
    for (uint32_t i = d.attrBegin; i < d.attrEnd; ++i) {
      const frontend::AttrDecl& ad = ast->attrs[i];
      bool ok = true;
      Attribute a;
      a.name = ad.name;
      a.owner = id;
      a.type = attrType(ad.type, ok);
      a.range = ad.nameRange.valid() ? ad.nameRange : ad.range;
      a.undefDefault = ad.undef;
      if (ad.defaultValue.valid()) a.defaultValue = CodeRef{file, ad.defaultValue, 0, 0};
      if (AttrId prev = findOwn(id, ad.name); prev.valid()) {
        duplicateAttr(id, prev, a.range, ad.name);
        continue;
      }
      if (!ok) continue;
      AttrId aid = p.attrs.add(std::move(a));
      p.entities[id].ownAttrs.push_back(aid);
    }
  }

  void relationDecl(const Decl& d) {
    declRepr.clear();
    EntityId left, right;
    bool okL = entityOf(d.left.entity, d.left.entityRange, left);
    bool okR = entityOf(d.right.entity, d.right.entityRange, right);
    if (!okL || !okR) return;
    std::vector<CodeRef> anns;
    for (uint32_t i = d.annBegin; i < d.annEnd; ++i) anns.push_back(CodeRef{file, ast->exprLists[i], 0, 0});
    auto makeEnd = [&](EntityId owner, const frontend::RelationEnd& end, EntityId target) -> AttrId {
      if (AttrId prev = findOwn(owner, end.name); prev.valid()) {
        Diagnostic& diag = cx.diags.error(DiagKind::RelationNameTaken, end.nameRange,
                                          cx.strings.str(end.name).str(), p.entities[owner].fullName);
        diag.locWithColumn = true;
        diag.note(makeDiag(DiagKind::FirstDefinedHere, p.attrs[prev].range));
        return AttrId{};
      }
      Attribute a;
      a.name = end.name;
      a.owner = owner;
      a.isRelation = true;
      a.type.base = BaseType::Entity;
      a.type.entity = target;
      a.mult = end.mult;
      a.annotations = anns;
      a.range = end.nameRange.valid() ? end.nameRange : d.range;
      AttrId aid = p.attrs.add(std::move(a));
      p.entities[owner].ownAttrs.push_back(aid);
      return aid;
    };
    bool bidirectional = d.right.name.valid() && d.right.name != StringTable::empty();
    // `A.b [m1] -- B.c [m2]`: A gets b (type B), B gets c (type A).
    AttrId l = makeEnd(left, d.left, right);
    if (!bidirectional || !l.valid()) return;
    if (left == right && d.left.name == d.right.name) {
      p.attrs[l].inverse = l;
      return;
    }
    AttrId r = makeEnd(right, d.right, left);
    if (!r.valid()) return;
    p.attrs[l].inverse = r;
    p.attrs[r].inverse = l;
  }

  void implementationDecl(const Decl& d, ImplId id) {
    declRepr = "Implementation(" + cx.strings.str(d.name).str() + ")";
    SourceRange nameAt = d.nameRange.valid() ? d.nameRange : d.range;
    // A missing type is reported where it is written; "not an entity" on the implementation's name.
    TypeEntry t;
    if (!cx.resolve(ns, d.forEntity, d.forRange.valid() ? d.forRange : nameAt, t, declRepr)) return;
    if (t.kind != TypeKind::Entity) {
      cx.diags.error(DiagKind::NotAnEntity, nameAt, cx.strings.str(d.forEntity).str()).locWithColumn = true;
      return;
    }
    p.impls[id].entity = EntityId{t.index};
  }

  void implementDecl(const Decl& d) {
    Implement im;
    im.ns = ns;
    im.range = d.nameRange.valid() ? d.nameRange : d.range;
    declRepr = "Implement(" + cx.strings.str(d.name).str() + ")";
    if (!entityOf(d.name, d.nameRange.valid() ? d.nameRange : d.range, im.entity)) return;
    for (uint32_t i = d.nameBegin; i < d.nameEnd; ++i) {
      const frontend::NameRef& n = ast->names[i];
      if (cx.strings.str(n.name) == "parents") {
        im.usesParents = true;
        continue;
      }
      TypeEntry t;
      if (!cx.resolve(ns, n.name, n.range, t, declRepr)) continue;
      if (t.kind != TypeKind::Implementation) {
        cx.diags
            .error(DiagKind::ImplementTypeMismatch, n.range, cx.strings.str(n.name).str(),
                   p.entities[im.entity].fullName)
            .locWithColumn = true;
        continue;
      }
      im.impls.push_back(ImplId{t.index});
    }
    if (d.expr.valid()) im.when = CodeRef{file, d.expr, 0, 0};
    p.implements.add(std::move(im));
  }

  void indexDecl(const Decl& d) {
    declRepr.clear();
    Index ix;
    ix.range = d.nameRange.valid() ? d.nameRange : d.range;
    if (!entityOf(d.name, ix.range, ix.entity)) return;
    ix.writtenName = d.name;
    for (uint32_t i = d.nameBegin; i < d.nameEnd; ++i) ix.attrNames.push_back(ast->names[i].name);
    ix.range = d.range;
    p.indexes.add(std::move(ix));
  }
};

/// Breaks inheritance cycles (reported as CycleException) so later passes can walk parents safely.
void checkCycles(LowerContext& cx) {
  Program& p = cx.program;
  std::vector<uint8_t> state(p.entities.size(), 0); // 0 new, 1 on stack, 2 done
  std::vector<std::pair<EntityId, uint32_t>> stack;
  for (uint32_t root = 0; root < p.entities.size(); ++root) {
    if (state[root]) continue;
    stack.push_back({EntityId{root}, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [e, next] = stack.back();
      Entity& ent = p.entities[e];
      if (next < ent.parents.size()) {
        EntityId par = ent.parents[next];
        if (state[par.index] == 1) {
          // The reference lists the loop from the entity that closes it back up to the repeated parent.
          std::string loop;
          for (size_t i = stack.size(); i-- > 0;) {
            if (!loop.empty()) loop += ',';
            loop += p.entities[stack[i].first].fullName;
            if (stack[i].first == par) break;
          }
          Diagnostic& d = cx.diags.error(DiagKind::Cycle, ent.range, loop);
          d.reportedIn = fmt::format("Entity({})", cx.strings.str(ent.name).str());
          ent.parents.erase(ent.parents.begin() + next);
          continue;
        }
        ++next;
        if (state[par.index] == 0) {
          state[par.index] = 1;
          stack.push_back({par, 0});
        }
        continue;
      }
      state[e.index] = 2;
      stack.pop_back();
    }
  }
}

} // namespace

void lowerDecls(LowerContext& cx) {
  Program& p = cx.program;
  // Store indices follow registration order in Lower.cpp (entities after std::Entity, same file order).
  uint32_t nextEntity = 1, nextTypedef = 0, nextImpl = 0;
  struct Pending {
    uint32_t file;
    const Decl* decl;
    uint32_t index;
  };
  std::vector<Pending> ents, tds, impls;
  for (uint32_t i = 0; i < cx.project.files.size(); ++i) {
    const frontend::Ast& ast = cx.project.files[i].ast;
    for (frontend::DeclId did : ast.topDecls) {
      const Decl& d = ast.decls[did];
      if (d.kind == DeclKind::Entity)
        ents.push_back({i, &d, nextEntity++});
      else if (d.kind == DeclKind::Typedef)
        tds.push_back({i, &d, nextTypedef++});
      else if (d.kind == DeclKind::Implementation)
        impls.push_back({i, &d, nextImpl++});
    }
  }
  auto walker = [&](uint32_t file) {
    return DeclWalker{cx, p, file, p.files[file].ns, &cx.project.files[file].ast, {}};
  };
  for (const Pending& t : tds) walker(t.file).typedefDecl(*t.decl, TypedefId{t.index});
  for (const Pending& e : ents) walker(e.file).entityParents(*e.decl, EntityId{e.index});
  checkCycles(cx);
  for (const Pending& e : ents) walker(e.file).entityAttrs(*e.decl, EntityId{e.index});
  for (uint32_t i = 0; i < cx.project.files.size(); ++i) {
    DeclWalker w = walker(i);
    for (frontend::DeclId did : w.ast->topDecls)
      if (w.ast->decls[did].kind == DeclKind::Relation) w.relationDecl(w.ast->decls[did]);
  }
  for (const Pending& im : impls) walker(im.file).implementationDecl(*im.decl, ImplId{im.index});
  for (uint32_t i = 0; i < cx.project.files.size(); ++i) {
    DeclWalker w = walker(i);
    for (frontend::DeclId did : w.ast->topDecls) {
      const Decl& d = w.ast->decls[did];
      if (d.kind == DeclKind::Implement)
        w.implementDecl(d);
      else if (d.kind == DeclKind::Index)
        w.indexDecl(d);
    }
  }
  // std::none
  NamespaceId stdNs = p.findNamespace("std");
  if (stdNs.valid()) {
    StringId none = cx.strings.lookup("none");
    auto it = none.valid() ? p.namespaces[stdNs].types.find(none.index) : p.namespaces[stdNs].types.end();
    if (it != p.namespaces[stdNs].types.end() && it->second.kind == TypeKind::Implementation)
      p.stdNone = ImplId{it->second.index};
  }
}

} // namespace inm::ir

// Pass 1: entity layout (language.md §4.4, §5.6). Visits entities parents-first and computes every
// "computed by passes" field of ir::Entity: ancestors, slots (inherited first, parent order, then own),
// slotByName, defaults (own, then parents left to right; `undef` removes), indexes (own, validated, then
// inherited), implements (own, plus parents' when `using parents`), subtypes. Reports attribute
// redeclaration conflicts, bad index attributes and implementations used for unrelated entities.
// Invariant: linear in the total number of slots; parent cycles were already broken by ir::lower.
#include "Passes.h"
#include "support/Limits.h"

#include <fmt/format.h>

#include <algorithm>

namespace inm::passes {

using namespace ir;

namespace {

bool sameType(const Type& a, const Type& b) {
  return a.base == b.base && a.isList == b.isList && a.nullable == b.nullable && a.typedefId == b.typedefId &&
         a.entity == b.entity;
}

std::vector<EntityId> topoOrder(const Program& p) {
  std::vector<EntityId> order;
  order.reserve(p.entities.size());
  std::vector<uint8_t> seen(p.entities.size(), 0);
  std::vector<std::pair<EntityId, uint32_t>> stack;
  for (uint32_t root = 0; root < p.entities.size(); ++root) {
    if (seen[root]) continue;
    seen[root] = 1;
    stack.push_back({EntityId{root}, 0});
    while (!stack.empty()) {
      auto& [e, next] = stack.back();
      const Entity& ent = p.entities[e];
      if (next < ent.parents.size()) {
        EntityId par = ent.parents[next++];
        if (!seen[par.index]) {
          seen[par.index] = 1;
          stack.push_back({par, 0});
        }
        continue;
      }
      order.push_back(e);
      stack.pop_back();
    }
  }
  return order;
}

struct Layout {
  Program& p;
  DiagnosticEngine& diags;
  std::vector<std::vector<IndexId>> ownIndexes;
  std::vector<std::vector<ImplementId>> ownImplements;

  std::string str(StringId s) { return p.strings->str(s).str(); }

  void addSlot(Entity& e, AttrId a) {
    e.slotByName[p.attrs[a].name.index] = uint32_t(e.slots.size());
    e.slots.push_back(a);
  }

  void slots(EntityId id) {
    Entity& e = p.entities[id];
    for (EntityId par : e.parents)
      for (AttrId a : p.entities[par].slots) {
        auto it = e.slotByName.find(p.attrs[a].name.index);
        if (it == e.slotByName.end()) {
          addSlot(e, a);
          continue;
        }
        AttrId prev = e.slots[it->second];
        if (prev == a) continue;
        const Attribute &x = p.attrs[prev], &y = p.attrs[a];
        if (x.isRelation != y.isRelation || (!x.isRelation && !sameType(x.type, y.type))) {
          Diagnostic& d = diags.error(DiagKind::IncompatibleInherited, e.range, str(x.name),
                                      p.entities[x.owner].fullName, p.entities[y.owner].fullName);
          d.locWithColumn = true;
        }
      }
    for (AttrId a : e.ownAttrs) {
      const Attribute& own = p.attrs[a];
      auto it = e.slotByName.find(own.name.index);
      if (it == e.slotByName.end()) {
        addSlot(e, a);
        continue;
      }
      const Attribute& inh = p.attrs[e.slots[it->second]];
      if (own.isRelation || inh.isRelation) {
        Diagnostic& d = diags.error(DiagKind::RelationNameTaken, own.range, str(own.name),
                                    p.entities[inh.owner].fullName);
        d.locWithColumn = true;
        d.note(makeDiag(DiagKind::FirstDefinedHere, inh.range));
        continue;
      }
      if (!sameType(own.type, inh.type)) {
        Diagnostic& d = diags.error(DiagKind::IncompatibleAttributes, own.range,
                                    diags.formatLoc(own.range, true), diags.formatLoc(inh.range, true));
        d.locWithColumn = true;
        d.note(makeDiag(DiagKind::FirstDefinedHere, inh.range));
        continue;
      }
      e.slots[it->second] = a;
    }
  }

  void defaults(EntityId id) {
    Entity& e = p.entities[id];
    e.defaults.assign(e.slots.size(), CodeRef{});
    for (uint32_t i = 0; i < e.slots.size(); ++i) {
      const Attribute& a = p.attrs[e.slots[i]];
      if (a.isRelation) continue;
      if (a.owner == id) {
        if (a.undefDefault) continue;
        if (a.defaultValue.valid()) {
          e.defaults[i] = a.defaultValue;
          continue;
        }
      }
      for (EntityId par : e.parents) {
        const Entity& pe = p.entities[par];
        auto it = pe.slotByName.find(a.name.index);
        if (it != pe.slotByName.end() && pe.defaults[it->second].valid()) {
          e.defaults[i] = pe.defaults[it->second];
          break;
        }
      }
    }
  }

  void indexes(EntityId id) {
    Entity& e = p.entities[id];
    for (IndexId ix : ownIndexes[id.index]) {
      const Index& x = p.indexes[ix];
      bool ok = true;
      // The reference stops at the first bad attribute and reports it in `index T(a, b)` at the index's line.
      auto report = [&](DiagKind kind, StringId n) {
        std::string attrs;
        for (StringId a : x.attrNames) attrs += (attrs.empty() ? "" : ", ") + str(a);
        Diagnostic& d = diags.error(kind, x.range, str(n), e.fullName);
        d.reportedIn = "index " + str(x.writtenName) + "(" + attrs + ")";
        ok = false;
      };
      for (StringId n : x.attrNames) {
        int s = p.slotOf(id, n);
        if (s < 0) {
          report(DiagKind::IndexAttributeNotDefined, n);
          break;
        }
        const Attribute& a = p.attrs[e.slots[uint32_t(s)]];
        if (a.isRelation && a.isOptional()) {
          report(DiagKind::IndexOptionalRelation, n);
          break;
        }
        if (a.isMulti() || (!a.isRelation && a.type.isList)) {
          report(DiagKind::Index, n);
          break;
        }
      }
      if (ok) e.indexes.push_back(ix);
    }
    for (EntityId par : e.parents)
      for (IndexId ix : p.entities[par].indexes)
        if (std::find(e.indexes.begin(), e.indexes.end(), ix) == e.indexes.end()) e.indexes.push_back(ix);
  }

  void implements(EntityId id) {
    Entity& e = p.entities[id];
    bool usesParents = false;
    for (ImplementId im : ownImplements[id.index]) {
      e.implements.push_back(im);
      usesParents |= p.implements[im].usesParents;
    }
    if (!usesParents) return;
    for (EntityId par : e.parents)
      for (ImplementId im : p.entities[par].implements)
        if (std::find(e.implements.begin(), e.implements.end(), im) == e.implements.end())
          e.implements.push_back(im);
  }

  void checkImplement(ImplementId id) {
    Implement& im = p.implements[id];
    if (im.usesParents && im.when.valid()) {
      Diagnostic& d = diags.error(DiagKind::ConditionalImplementWithParents, im.range);
      d.reportedIn = "Implement(" +
                     p.entities[im.entity].fullName.substr(p.entities[im.entity].fullName.rfind(':') + 1) +
                     ")";
      d.locWithColumn = true;
    }
    std::vector<ImplId> kept;
    for (ImplId impl : im.impls) {
      EntityId target = p.impls[impl].entity;
      if (target.valid() && p.isSubtype(im.entity, target)) {
        kept.push_back(impl);
        continue;
      }
      Diagnostic& d = diags.error(DiagKind::ImplementTypeMismatch, im.range, p.impls[impl].fullName,
                                  p.entities[im.entity].fullName);
      d.locWithColumn = true;
    }
    im.impls = std::move(kept);
  }
};

} // namespace

void layoutEntities(Program& p, DiagnosticEngine& diags) {
  Layout l{p, diags, {}, {}};
  l.ownIndexes.resize(p.entities.size());
  l.ownImplements.resize(p.entities.size());
  for (uint32_t i = 0; i < p.indexes.size(); ++i)
    l.ownIndexes[p.indexes[IndexId{i}].entity.index].push_back(IndexId{i});
  for (uint32_t i = 0; i < p.implements.size(); ++i)
    l.ownImplements[p.implements[ImplementId{i}].entity.index].push_back(ImplementId{i});
  // Inheritance depth is bounded (Limits::maxInheritance): every entity copies its ancestors' slots, so a
  // chain of N entities costs N^2 time and memory.
  std::vector<uint32_t> depth(p.entities.size(), 1);
  for (EntityId id : topoOrder(p)) {
    Entity& e = p.entities[id];
    for (EntityId par : e.parents) depth[id.index] = std::max(depth[id.index], depth[par.index] + 1);
    if (depth[id.index] > limits().maxInheritance) {
      diags.error(DiagKind::NestedTooDeep, e.range,
                  fmt::format("the inheritance chain of {} is deeper than {} levels (--max-inheritance)",
                              e.fullName, limits().maxInheritance));
      return;
    }
    e.ancestors.clear();
    e.ancestors.push_back(id);
    for (EntityId par : e.parents) {
      const auto& pa = p.entities[par].ancestors;
      e.ancestors.insert(e.ancestors.end(), pa.begin(), pa.end());
      p.entities[par].subtypes.push_back(id);
    }
    std::sort(e.ancestors.begin(), e.ancestors.end());
    e.ancestors.erase(std::unique(e.ancestors.begin(), e.ancestors.end()), e.ancestors.end());
    l.slots(id);
    l.defaults(id);
    l.indexes(id);
  }
  for (uint32_t i = 0; i < p.implements.size(); ++i) l.checkImplement(ImplementId{i});
  for (EntityId id : topoOrder(p)) l.implements(id);
}

} // namespace inm::passes

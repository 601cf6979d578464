// Entity construction and indexes (language spec §5.6): a constructor waits only for its index attributes
// and `**` dicts, matches existing instances through every index of the entity (reusing a match), creates
// the instance otherwise, then assigns the other keyword arguments and defaults as separate units (so they
// may refer to the instance) and schedules the applicable implement statements.
// Invariant: an instance is registered in every index of its entity (inherited ones included) as soon as
// it is created; index lookups blocked on a key are woken when that key is registered.
#include "Evaluator.h"
#include "ir/Lower.h"
#include "support/Limits.h"

#include <fmt/format.h>

#include <algorithm>

namespace inm::runtime {

InstanceId Evaluator::createInstance(Ctx& ctx, ir::EntityId e, SourceRange at) {
  InstanceId inst = model_.addInstance(e, at, slots_.size()); // model storage = our slot array
  slots_.beginInstance(e);
  instHasImpl_.push_back(0);
  firstImplDone_.push_back(kNone);
  const ir::Entity& ent = prog_.entities[e];
  for (uint32_t s = 0; s < ent.slots.size(); ++s) {
    const ir::Attribute& a = prog_.attrs[ent.slots[s]];
    SlotKind kind = SlotKind::Single;
    if (a.isRelation) {
      if (a.mult.low == 0 && a.mult.high == 1)
        kind = SlotKind::Optional;
      else if (!(a.mult.low == 1 && a.mult.high == 1))
        kind = SlotKind::List;
    }
    SlotId sid = slots_.newSlot(kind, inst.index, ent.slots[s].index);
    if (kind == SlotKind::List && a.mult.low > 0) slots_.meta(sid).lowBound = true;
    if (kind != SlotKind::Single) {
      for (const ir::PrecedenceRule& r : prog_.precedence)
        if (r.before == ent.slots[s] || r.after == ent.slots[s]) slots_.meta(sid).policy = true;
    }
  }
  for (uint32_t s = 0; s < ent.slots.size(); ++s) maybeQueueForFreeze(attrSid(inst, s));
  (void)ctx;
  return inst;
}

void Evaluator::scheduleImplements(InstanceId inst) {
  const ir::Entity& ent = prog_.entities[model_.entityOf(inst)];
  for (ir::ImplementId iid : ent.implements) {
    const ir::Implement& imp = prog_.implements[iid];
    uint32_t nsFile = prog_.namespaces[imp.ns].file;
    uint32_t file = imp.when.valid() ? imp.when.file : nsFile;
    if (file == UINT32_MAX) file = 0;
    ScopeId parent = nsFile == UINT32_MAX ? ScopeId{} : scopes_.ns(nsFile);
    if (!imp.when.valid()) {
      for (ir::ImplId impl : imp.impls) emitImplementation(inst, impl);
      instHasImpl_[inst.index] = 1;
      continue;
    }
    UnitId u = newUnit(UnitKind::Implement, scopes_.newEmptyScope(parent, file, inst.index), file,
                       imp.when.expr.index);
    units_[u].inst = inst;
    units_[u].aux = iid.index;
    enqueue(u);
  }
}

Status Evaluator::evalKwargs(Ctx& ctx, const Expr& e, ExprId id,
                             llvm::SmallVectorImpl<std::pair<StringId, Value>>& out, bool) {
  for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
    const frontend::Arg& a = ctx.ast->args[i];
    Value v;
    Status st = eval(ctx, a.value, v);
    if (st != Status::Ok) return st;
    if (a.kind == frontend::ArgKind::Spread) {
      if (v.isUnknown()) continue;
      if (v.kind != ValueKind::Dict) return fail(ctx, a.value, DiagKind::DoubleStarOnNonDict);
      for (uint32_t k = 0; k < v.d->size; ++k)
        out.emplace_back(strings_.lookup(v.d->entries[k].key->str()), v.d->entries[k].value);
    } else {
      out.emplace_back(a.name, v);
    }
  }
  (void)id;
  return Status::Ok;
}

void Evaluator::blockOnIndex(Ctx& ctx, llvm::ArrayRef<Value> key, ir::EntityId e, uint32_t index,
                             const std::string& keyText, ExprId node) {
  if (!ctx.unit.valid()) return;
  units_[ctx.unit].waited = true;
  indexes_.waitFor(key, IndexTables::PendingLookup{e, index, keyText, ctx.unit, ctx.file, node.index});
}

Status Evaluator::evalConstructor(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  if (memoGet(ctx, id.index, out)) return Status::Ok;
  const ir::Resolved& r = prog_.files[ctx.file].resolved.size() > id.index
                              ? prog_.files[ctx.file].resolved[id.index]
                              : ir::Resolved{};
  if (r.kind != ir::Resolved::Entity) return failTypeNotFound(ctx, e, id);
  ir::EntityId ent{r.index};
  const ir::Entity& E = prog_.entities[ent];

  // Index attribute names of this entity.
  llvm::SmallVector<uint32_t, 8> indexSlots;
  for (ir::IndexId ix : E.indexes)
    for (StringId n : prog_.indexes[ix].attrNames) {
      int s = prog_.slotOf(ent, n);
      if (s >= 0 && std::find(indexSlots.begin(), indexSlots.end(), uint32_t(s)) == indexSlots.end())
        indexSlots.push_back(uint32_t(s));
    }
  auto isIndexSlot = [&](uint32_t s) {
    return std::find(indexSlots.begin(), indexSlots.end(), s) != indexSlots.end();
  };

  // Explicit keyword arguments (by slot), ** dicts evaluated now, index attributes evaluated now.
  struct Given {
    uint32_t slot;
    ExprId expr; // explicit kwarg expression (valid) or ** value (invalid expr)
    Value value;
    bool evaluated = false;
  };
  llvm::SmallVector<Given, 16> given;
  for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
    const frontend::Arg& a = ctx.ast->args[i];
    if (a.kind == frontend::ArgKind::Spread) {
      Value d;
      Status st = eval(ctx, a.value, d);
      if (st != Status::Ok) return st;
      if (d.isUnknown()) continue;
      if (d.kind != ValueKind::Dict) return fail(ctx, a.value, DiagKind::DoubleStarOnNonDict);
      for (uint32_t k = 0; k < d.d->size; ++k) {
        llvm::StringRef key = d.d->entries[k].key->str();
        StringId kid = strings_.lookup(key);
        int s = kid.valid() ? prog_.slotOf(ent, kid) : -1;
        if (s < 0) return failAttrMissing(ctx, id.index, false, DiagKind::NoAttribute, ent, key);
        for (const Given& g : given)
          if (g.slot == uint32_t(s))
            return fail(ctx, id, DiagKind::ConstructorAttributeTwice, key.str(), strings_.str(E.name).str());
        given.push_back(Given{uint32_t(s), ExprId{}, d.d->entries[k].value, true});
      }
      continue;
    }
    int s = prog_.slotOf(ent, a.name);
    if (s < 0) return failAttrMissing(ctx, id.index, false, DiagKind::NoAttribute, ent, strings_.str(a.name));
    for (const Given& g : given)
      if (g.slot == uint32_t(s))
        return fail(ctx, id, DiagKind::ConstructorAttributeAlreadySet, strings_.str(a.name).str(),
                    strings_.str(E.name).str());
    given.push_back(Given{uint32_t(s), a.value, Value(), false});
  }
  // Implicit inverse: x.b = E(...) where E's end of the relation is an index attribute.
  int hintSlot = -1;
  if (ctx.hintAttr != kNone) {
    const ir::Attribute& ha = prog_.attrs[ir::AttrId{ctx.hintAttr}];
    int s = prog_.slotOf(ent, ha.name);
    if (s >= 0 && E.slots[uint32_t(s)] == ir::AttrId{ctx.hintAttr}) hintSlot = s;
  }
  for (Given& g : given) {
    if (g.evaluated || !isIndexSlot(g.slot)) continue;
    uint32_t savedAttr = ctx.hintAttr;
    InstanceId savedInst = ctx.hintInst;
    const ir::Attribute& a = prog_.attrs[E.slots[g.slot]];
    ctx.hintAttr = a.isRelation && a.inverse.valid() ? a.inverse.index : kNone;
    ctx.hintInst = InstanceId{};
    Status st = eval(ctx, g.expr, g.value);
    ctx.hintAttr = savedAttr;
    ctx.hintInst = savedInst;
    if (st != Status::Ok) return st;
    g.evaluated = true;
  }
  auto findGiven = [&](uint32_t s) -> Given* {
    for (Given& g : given)
      if (g.slot == s) return &g;
    return nullptr;
  };

  // Look the key up in every index.
  InstanceId found;
  llvm::SmallVector<Value, 8> keyVals;                      // the keys of every index, one after the other
  llvm::SmallVector<std::pair<uint32_t, uint32_t>, 4> keys; // (IndexId, its key's start in keyVals)
  for (ir::IndexId ix : E.indexes) {
    uint32_t keyBegin = uint32_t(keyVals.size());
    bool complete = true;
    for (StringId n : prog_.indexes[ix].attrNames) {
      uint32_t s = uint32_t(prog_.slotOf(ent, n));
      Value v;
      if (Given* g = findGiven(s))
        v = g->value;
      else if (int(s) == hintSlot)
        v = Value::instance(ctx.hintInst);
      else if (E.defaults[s].valid()) {
        Ctx dctx = ctx;
        dctx.file = E.defaults[s].file;
        dctx.ast = &prog_.ast(dctx.file);
        dctx.scope = scopes_.ns(dctx.file);
        Status st = eval(dctx, E.defaults[s].expr, v);
        if (st != Status::Ok) return st;
      } else {
        complete = false;
        break;
      }
      if (v.isUnknown()) {
        complete = false;
        break;
      }
      const ir::Attribute& a = prog_.attrs[E.slots[s]];
      if (a.type.base == ir::BaseType::Float && v.isInt()) v = intAsFloat(v);
      keyVals.push_back(v);
    }
    if (!complete) {
      // Attributes neither given (`**dict` included), hinted nor defaulted: listed as the static check does.
      std::string missing;
      llvm::SmallVector<uint32_t, 4> seen;
      for (ir::IndexId other : E.indexes)
        for (StringId n : prog_.indexes[other].attrNames) {
          int ms = prog_.slotOf(ent, n);
          if (ms < 0 || findGiven(uint32_t(ms)) || ms == hintSlot || E.defaults[uint32_t(ms)].valid())
            continue;
          if (std::find(seen.begin(), seen.end(), uint32_t(ms)) != seen.end()) continue;
          seen.push_back(uint32_t(ms));
          missing += ir::missingIndexAttrLine(prog_, E, uint32_t(ms));
        }
      if (missing.empty()) missing = fmt::format(" index attributes of {} are not all set", E.fullName);
      return fail(ctx, id, DiagKind::IndexAttributeMissing, missing);
    }
    InstanceId hit = indexes_.find(ix.index, llvm::ArrayRef<Value>(keyVals).drop_front(keyBegin));
    if (hit.valid()) {
      if (found.valid() && found != hit)
        return fail(ctx, id, DiagKind::IndexCollision, E.fullName, describeInst(hit));
      found = hit;
    }
    keys.emplace_back(ix.index, keyBegin);
  }
  auto keyOf = [&](size_t k) {
    uint32_t end = k + 1 < keys.size() ? keys[k + 1].second : uint32_t(keyVals.size());
    return llvm::ArrayRef<Value>(keyVals).slice(keys[k].second, end - keys[k].second);
  };
  SourceRange at = e.range;
  // Values without an expression of their own (`**dict` entries, defaults) are set at the constructor, which
  // the reference locates by line.
  SourceRange lineAt = at;
  lineAt.col = 0;
  InstanceId inst;
  bool isNew = false;
  if (found.valid()) {
    if (model_.entityOf(found) != ent)
      return fail(ctx, id, DiagKind::IndexMatchWrongType, describeInst(found), E.fullName);
    inst = found;
    // Register keys of indexes that did not know it yet (other indexes of the same instance).
    for (size_t k = 0; k < keys.size(); ++k) indexes_.add(keys[k].first, keyOf(k), inst);
    model_.addCreatedAt(inst, at);
  } else {
    if (model_.instances().size() >= limits().maxInstances)
      return fail(ctx, id, DiagKind::InstanceLimit, E.fullName, limits().maxInstances);
    inst = createInstance(ctx, ent, at);
    isNew = true;
    for (size_t k = 0; k < keys.size(); ++k) {
      llvm::SmallVector<UnitId, 2> woken;
      indexes_.addAndWake(keys[k].first, keyOf(k), inst, woken);
      for (UnitId w : woken) enqueue(w);
    }
  }
  Value self = Value::instance(inst);
  memoPut(ctx, id.index, self);
  out = self;

  // Index attributes (known now), then the rest as units, then defaults.
  for (uint32_t s : indexSlots) {
    Value v;
    if (Given* g = findGiven(s))
      v = g->value;
    else if (int(s) == hintSlot)
      v = Value::instance(ctx.hintInst);
    else
      continue; // defaults below
    const ir::Attribute& a = prog_.attrs[E.slots[s]];
    if (a.type.base == ir::BaseType::Float && v.isInt()) v = intAsFloat(v);
    SourceRange vr = lineAt;
    if (Given* g = findGiven(s); g && g->expr.valid()) vr = valueAt(*ctx.ast, g->expr);
    Status st = assignAttr(ctx, inst, s, v, vr, id.index, false);
    if (st != Status::Ok) return st;
  }
  for (Given& g : given) {
    if (isIndexSlot(g.slot)) continue;
    if (g.evaluated) {
      Status st = assignAttr(ctx, inst, g.slot, g.value, lineAt, id.index, false);
      if (st != Status::Ok) return st;
      continue;
    }
    UnitId u = newUnit(UnitKind::AttrAssign, ctx.scope, ctx.file, g.expr.index);
    units_[u].inst = inst;
    units_[u].aux = g.slot;
    units_[u].origin = id.index;
    SlotId sid = attrSid(inst, g.slot);
    if (slots_.meta(sid).kind == SlotKind::List || slots_.meta(sid).kind == SlotKind::Optional) {
      units_[u].promise = sid;
      acquirePromise(sid);
    }
    // Assign now when the value is available (as the reference does); otherwise the unit waits.
    runUnit(u);
    if (aborted()) return Status::Error;
  }
  for (uint32_t s = 0; s < E.slots.size(); ++s) {
    if (findGiven(s) || int(s) == hintSlot || !E.defaults[s].valid()) continue;
    if (!isNew && isIndexSlot(s)) continue;
    const ir::CodeRef& d = E.defaults[s];
    Ctx dctx;
    dctx.unit = ctx.unit;
    dctx.file = d.file;
    dctx.ast = &prog_.ast(d.file);
    dctx.scope = scopes_.ns(d.file);
    dctx.iterKey = ctx.iterKey ^ (uint64_t(s + 1) << 20);
    Value v;
    Status st = eval(dctx, d.expr, v);
    if (st != Status::Ok) return st;
    st = assignAttr(ctx, inst, s, v, lineAt, id.index, false);
    if (st != Status::Ok) return st;
  }
  if (isNew) scheduleImplements(inst);
  return Status::Ok;
}

Status Evaluator::evalIndexLookup(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  ir::EntityId ent;
  llvm::SmallVector<std::pair<StringId, Value>, 4> kw;
  if (e.kind == ExprKind::ShortIndexLookup) {
    Value base;
    Status st = eval(ctx, e.a, base);
    if (st != Status::Ok) return st;
    if (base.isUnknown()) {
      out = Value::unknown();
      return Status::Ok;
    }
    if (base.kind != ValueKind::Instance)
      return fail(ctx, id, DiagKind::AttributeOfNonEntity, strings_.str(e.name).str(),
                  model_.display(base, true));
    ir::EntityId be = model_.entityOf(base.instanceId());
    int slot = prog_.slotOf(be, e.name);
    if (slot < 0)
      return failAttrMissing(ctx, id.index, false, DiagKind::AttributeNotFound, be, strings_.str(e.name));
    const ir::Attribute& rel = prog_.attrs[prog_.entities[be].slots[uint32_t(slot)]];
    if (!rel.isRelation || !rel.inverse.valid())
      return fail(ctx, id, DiagKind::ShortIndexLookupUnidirectional, prog_.entities[rel.owner].fullName,
                  strings_.str(rel.name).str());
    ent = rel.type.entity;
    kw.emplace_back(prog_.attrs[rel.inverse].name, base);
  } else {
    const ir::Resolved& r = prog_.files[ctx.file].resolved.size() > id.index
                                ? prog_.files[ctx.file].resolved[id.index]
                                : ir::Resolved{};
    if (r.kind != ir::Resolved::Entity) return failTypeNotFound(ctx, e, id);
    ent = ir::EntityId{r.index};
  }
  Status st = evalKwargs(ctx, e, id, kw, true);
  if (st != Status::Ok) return st;
  for (size_t i = 0; i < kw.size(); ++i)
    for (size_t j = i + 1; j < kw.size(); ++j)
      if (kw[i].first == kw[j].first)
        return fail(ctx, id, DiagKind::IndexLookupAttributeTwice, strings_.str(kw[i].first).str());
  for (auto& [n, v] : kw)
    if (v.isUnknown()) {
      out = Value::unknown();
      return Status::Ok;
    }
  const ir::Entity& E = prog_.entities[ent];
  for (ir::IndexId ix : E.indexes) {
    const auto& names = prog_.indexes[ix].attrNames;
    if (names.size() != kw.size()) continue;
    llvm::SmallVector<Value, 4> vals;
    bool match = true;
    for (StringId n : names) {
      auto it = std::find_if(kw.begin(), kw.end(), [&](auto& p) { return p.first == n; });
      if (it == kw.end()) {
        match = false;
        break;
      }
      Value v = it->second;
      int s = prog_.slotOf(ent, n);
      if (s >= 0 && prog_.attrs[E.slots[uint32_t(s)]].type.base == ir::BaseType::Float && v.isInt())
        v = intAsFloat(v);
      vals.push_back(v);
    }
    if (!match) continue;
    InstanceId hit = indexes_.find(ix.index, vals);
    if (hit.valid() && prog_.isSubtype(model_.entityOf(hit), ent)) {
      out = Value::instance(hit);
      return Status::Ok;
    }
    std::string text = "[";
    for (size_t i = 0; i < names.size(); ++i) {
      auto kit = std::find_if(kw.begin(), kw.end(), [&](auto& p) { return p.first == names[i]; });
      text +=
          (i ? ", " : "") + fmt::format("('{}', {})", strings_.str(names[i]).str(), model_.repr(kit->second));
    }
    text += "]";
    blockOnIndex(ctx, vals, ent, ix.index, text, id);
    ctx.blockedOn = SlotId{};
    return Status::Blocked;
  }
  std::string names;
  for (size_t i = 0; i < kw.size(); ++i) names += (i ? ", " : "") + strings_.str(kw[i].first).str();
  return fail(ctx, id, DiagKind::NoIndexForLookup, E.fullName, names);
}

} // namespace inm::runtime

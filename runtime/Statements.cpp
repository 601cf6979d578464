// Statement execution and attribute writes of the evaluation engine: assignments (variables, attributes,
// relations with bidirectional sync and gradual forwarding), for loops (over lists, or gradually over
// relations), if statements with eager promises, constructor keyword-argument units and implementations.
// Invariant: every write to an instance attribute goes through assignAttr/addToRelation, which validate
// the value and wrap failures in the reference's AttributeException.
#include "Evaluator.h"

#include <fmt/format.h>

#include <algorithm>

namespace inm::runtime {

using frontend::StmtKind;

Status Evaluator::execStmt(Ctx& ctx, UnitId unitId) {
  const Stmt& s = ctx.ast->stmts[StmtId{units_[unitId].node}];
  ctx.reportStmt = units_[unitId].node;
  switch (s.kind) {
  case StmtKind::Assign: return execAssign(ctx, s, unitId);
  case StmtKind::For: return execFor(ctx, s, unitId);
  case StmtKind::If: return execIf(ctx, s, unitId);
  case StmtKind::ExprStmt: {
    Value v;
    return eval(ctx, s.value, v);
  }
  }
  return Status::Ok;
}

Status Evaluator::gradualSource(Ctx& ctx, ExprId id, SlotId& sidOut) {
  sidOut = SlotId{};
  const Expr& e = ctx.ast->exprs[id];
  SlotId sid;
  if (e.kind == ExprKind::AttrRef) {
    Value base;
    Status st = eval(ctx, e.a, base);
    if (st != Status::Ok) return st;
    if (base.kind != ValueKind::Instance) return Status::Ok;
    int slot = prog_.slotOf(model_.entityOf(base.instanceId()), e.name);
    if (slot < 0) return Status::Ok;
    sid = attrSid(base.instanceId(), uint32_t(slot));
  } else if (e.kind == ExprKind::Name) {
    Value self;
    bool isSelf = false;
    sid = scopes_.lookupVar(ctx.scope, e.name, &self, &isSelf);
    if (isSelf) sid = SlotId{};
  } else if (e.kind == ExprKind::Conditional) {
    // `c ? a.rel : b.rel` propagates gradual mode: only the condition is needed up front. An unknown or
    // non-boolean condition is left to the eager evaluation (unknown result / its error).
    Value c;
    uint32_t savedAttr = ctx.hintAttr;
    ctx.hintAttr = kNone;
    Status st = eval(ctx, e.a, c);
    ctx.hintAttr = savedAttr;
    if (st != Status::Ok) return st;
    if (c.kind != ValueKind::Bool) return Status::Ok;
    return gradualSource(ctx, c.b ? e.b : e.c, sidOut);
  }
  if (sid.valid() && slots_.meta(sid).kind == SlotKind::List) sidOut = sid;
  return Status::Ok;
}

Status Evaluator::gradualFeed(Ctx& ctx, ExprId id, SlotId& sidOut, uint32_t& mapOut) {
  mapOut = kNone;
  const Expr& e = ctx.ast->exprs[id];
  if (e.kind == ExprKind::Conditional) {
    Value c;
    uint32_t savedAttr = ctx.hintAttr;
    ctx.hintAttr = kNone;
    Status st = eval(ctx, e.a, c);
    ctx.hintAttr = savedAttr;
    if (st != Status::Ok) return st;
    sidOut = SlotId{};
    if (c.kind != ValueKind::Bool) return Status::Ok;
    return gradualFeed(ctx, c.b ? e.b : e.c, sidOut, mapOut);
  }
  if (e.kind == ExprKind::ListComprehension && e.loopEnd - e.loopBegin == 1 && !scopes_[ctx.scope].isStatic) {
    // `[e for x in src]`, src a relation or itself such a comprehension (`[a for a in [b for b in r]]`)
    ExprId iterable = ctx.ast->loops[e.loopBegin].iterable;
    uint32_t inner = kNone;
    if (ctx.ast->exprs[iterable].kind == ExprKind::ListComprehension)
      TRY(gradualFeed(ctx, iterable, sidOut, inner));
    else
      TRY(gradualSource(ctx, iterable, sidOut));
    if (!sidOut.valid()) return Status::Ok;
    mapOut = id.index;
    if (inner != kNone) innerMaps_[id.index] = inner; // keyed by the (immutable) outer comprehension's ExprId
    return Status::Ok;
  }
  return gradualSource(ctx, id, sidOut);
}

Status Evaluator::feedListLiteral(Ctx& ctx, UnitId unitId, InstanceId inst, uint32_t slot, ExprId valueExpr,
                                  uint32_t origin, bool originIsExpr, bool& handled) {
  handled = false;
  const Expr& e = ctx.ast->exprs[valueExpr];
  if (e.kind != ExprKind::List || scopes_[ctx.scope].isStatic) return Status::Ok;
  SlotId sid = attrSid(inst, slot);
  const ir::Attribute& attr = slotAttr(inst, slot);
  struct Item {
    SlotId src;
    uint32_t map = kNone;
    Value value;
  };
  llvm::SmallVector<Item, 4> items;
  bool anyFeed = false;
  // Pass 1 (nothing assigned yet, so a Blocked item is simply retried).
  for (uint32_t i = e.begin; i < e.end; ++i) {
    ExprId item = ctx.ast->exprLists[i];
    Item it;
    TRY(gradualFeed(ctx, item, it.src, it.map));
    if (it.src == sid) return Status::Ok; // feeds itself: leave it to the eager path
    if (it.src.valid()) {
      anyFeed = true;
    } else {
      uint32_t savedAttr = ctx.hintAttr;
      InstanceId savedInst = ctx.hintInst;
      if (attr.isRelation && attr.inverse.valid()) {
        ctx.hintAttr = attr.inverse.index;
        ctx.hintInst = inst;
      }
      Status st = eval(ctx, item, it.value);
      ctx.hintAttr = savedAttr;
      ctx.hintInst = savedInst;
      if (st != Status::Ok) return st;
    }
    items.push_back(it);
  }
  if (!anyFeed) return Status::Ok;
  handled = true;
  SourceRange at = ctx.ast->exprs[valueExpr].range;
  for (Item& it : items) {
    if (!it.src.valid()) {
      TRY(assignAttr(ctx, inst, slot, it.value, at, origin, !originIsExpr));
      continue;
    }
    // each forward holds a promise of its own on the target until its source is frozen
    SlotId saved = units_[unitId].promise;
    acquirePromise(sid);
    units_[unitId].promise = sid;
    startForward(ctx, unitId, inst, slot, it.src, it.map, origin, originIsExpr);
    units_[unitId].promise = saved;
  }
  return Status::Ok;
}

void Evaluator::startForward(Ctx& ctx, UnitId unitId, InstanceId inst, uint32_t slot, SlotId src,
                             uint32_t mapExpr, uint32_t origin, bool originIsExpr) {
  // The promise on the target moves to the forwarding unit, which holds it until the source is frozen.
  UnitId fw = newUnit(UnitKind::Forward, ctx.scope, ctx.file, origin);
  units_[fw].inst = inst;
  units_[fw].aux = slot;
  units_[fw].target = src;
  units_[fw].origin = origin;
  units_[fw].originIsExpr = originIsExpr;
  if (mapExpr != kNone) forwardMaps_[fw] = mapExpr;
  units_[fw].promise = units_[unitId].promise;
  units_[unitId].promise = SlotId{};
  addWaiter(src, fw, true);
  enqueue(fw);
}

Status Evaluator::execAssign(Ctx& ctx, const Stmt& s, UnitId unitId) {
  const Expr& t = ctx.ast->exprs[s.target];
  if (t.kind == ExprKind::Name) {
    llvm::StringRef name = strings_.str(t.name);
    SlotId sid;
    if (isQualified(t.name)) {
      if (!qualifiedVar(ctx.file, name, sid))
        return failVarMissing(ctx, units_[unitId].node, true, DiagKind::NamespaceNotFound,
                              diagText(DiagKind::NamespaceNotFound, name.rsplit("::").first.str()), name);
      if (!sid.valid())
        return failVarMissing(ctx, units_[unitId].node, true, DiagKind::VariableNotFound,
                              diagText(DiagKind::VariableNotFound, name.rsplit("::").second.str()), name);
    } else {
      sid = scopes_.ownVar(ctx.scope, t.name);
      if (!sid.valid()) // not declared in this block (should not happen): treat as not found
        return failStmt(ctx, units_[unitId].node, DiagKind::VariableNotFound, name.str());
    }
    Value v;
    Status st = eval(ctx, s.value, v);
    if (st != Status::Ok) return st;
    return setVariable(ctx, sid, v, valueAt(*ctx.ast, s.value), units_[unitId].node, true);
  }

  // attribute assignment: x.a = e / x.rel += e
  Value base;
  Status st = eval(ctx, t.a, base);
  if (st != Status::Ok) return st;
  if (base.isUnknown()) return Status::Ok;
  if (base.kind != ValueKind::Instance) {
    std::string what = frontend::reprExpr(*ctx.ast, t.a, strings_);
    return failStmt(ctx, units_[unitId].node, DiagKind::PlusAssignOnNonEntity, what, typeName(base),
                    model_.display(base, true));
  }
  InstanceId inst = base.instanceId();
  ir::EntityId ent = model_.entityOf(inst);
  int slot = prog_.slotOf(ent, t.name);
  if (slot < 0)
    return failAttrMissing(ctx, units_[unitId].node, true, DiagKind::AttributeNotFound, ent,
                           strings_.str(t.name));
  const ir::Attribute& attr = prog_.attrs[prog_.entities[ent].slots[uint32_t(slot)]];
  SlotId sid = attrSid(inst, uint32_t(slot));
  SlotKind kind = slots_.meta(sid).kind;
  if (s.plusAssign && kind != SlotKind::List)
    return failStmt(ctx, units_[unitId].node, DiagKind::PlusAssignOnSingle);
  if (kind == SlotKind::List || kind == SlotKind::Optional) {
    if (!units_[unitId].promise.valid()) {
      units_[unitId].promise = sid;
      acquirePromise(sid);
    }
  }
  if (kind == SlotKind::List) {
    SlotId src;
    uint32_t map = kNone;
    st = gradualFeed(ctx, s.value, src, map);
    if (st != Status::Ok) return st;
    if (src.valid() && src != sid) {
      // Relation-to-relation assignment (possibly through `?:` or a comprehension): forward values as they
      // arrive; the promise moves along.
      startForward(ctx, unitId, inst, uint32_t(slot), src, map, units_[unitId].node, false);
      return Status::Ok;
    }
    if (src == sid && map == kNone) return Status::Ok; // a.rel = a.rel adds nothing
    bool handled = false;
    TRY(feedListLiteral(ctx, unitId, inst, uint32_t(slot), s.value, units_[unitId].node, false, handled));
    if (handled) return Status::Ok;
  }
  Value v;
  uint32_t savedAttr = ctx.hintAttr;
  InstanceId savedInst = ctx.hintInst;
  if (attr.isRelation && attr.inverse.valid()) {
    ctx.hintAttr = attr.inverse.index;
    ctx.hintInst = inst;
  }
  std::vector<Diagnostic> captured;
  {
    Reporter::Capture into(report_, &captured);
    st = eval(ctx, s.value, v);
  }
  ctx.hintAttr = savedAttr;
  ctx.hintInst = savedInst;
  if (!captured.empty()) {
    Diagnostic err = std::move(captured.front());
    if (err.kind != DiagKind::OptionalValue) return failDiag(std::move(err));
    // Reading an unset optional for an attribute assignment: the reference reports it on the statement
    // and as the cause of not setting the attribute (AttributeException).
    err = diagAt(ctx.file, units_[unitId].node, true, std::move(err));
    return wrapAttrError(ctx, inst, uint32_t(slot), units_[unitId].node, true, std::move(err));
  }
  if (st != Status::Ok) return st;
  return assignAttr(ctx, inst, uint32_t(slot), v, valueAt(*ctx.ast, s.value), units_[unitId].node, true);
}

Status Evaluator::runForward(Ctx& ctx, UnitId unitId) {
  Unit& u0 = units_[unitId];
  SlotId src = u0.target;
  InstanceId inst = u0.inst;
  uint32_t slot = u0.aux, node = u0.origin;
  uint32_t mapExpr = kNone;
  if (!forwardMaps_.empty())
    if (auto it = forwardMaps_.find(unitId); it != forwardMaps_.end()) mapExpr = it->second;
  if (units_[unitId].progress < slots_.valueCount(src)) { // values arrived since the last run
    while (units_[unitId].progress < slots_.valueCount(src)) {
      uint32_t index = units_[unitId].progress;
      Value v = slots_.items(src)[index];
      bool isStmt = !units_[unitId].originIsExpr;
      if (mapExpr != kNone) {
        // `[e for x in src if g]` (possibly over such comprehensions, innermost first): the elements of this
        // value, each in a scope binding x; a Blocked element is retried from the same value (progress is not
        // advanced; constructors are memoised by iterKey).
        llvm::SmallVector<uint32_t, 2> chain;
        for (uint32_t m = mapExpr; m != kNone;) {
          chain.push_back(m);
          auto it = innerMaps_.find(m);
          m = it == innerMaps_.end() ? kNone : it->second;
        }
        // a constructor in the outermost element fills the inverse end with the target instance (eager path)
        const ir::Attribute& attr = slotAttr(inst, slot);
        uint32_t hint = attr.isRelation && attr.inverse.valid() ? attr.inverse.index : kNone;
        llvm::SmallVector<Value, 4> values{v};
        ScopeId savedScope = ctx.scope;
        InstanceId savedInst = ctx.hintInst;
        uint64_t savedKey = ctx.iterKey;
        Status st = Status::Ok;
        for (size_t level = chain.size(); level-- > 0 && st == Status::Ok;) {
          const Expr& ce = ctx.ast->exprs[ExprId{chain[level]}];
          llvm::SmallVector<Value, 4> next;
          for (size_t pos = 0; pos < values.size() && st == Status::Ok; ++pos) {
            ScopeId scope = scopes_.newScope(units_[unitId].scope, ctx.file, kNone, 0, 0,
                                             ctx.ast->loops[ce.loopBegin].var);
            SlotId var = scopes_.firstVar(scope);
            bindVar(var, values[pos]);
            ctx.scope = scope;
            ctx.iterKey = ((savedKey * 1000003u + index + 1) * 1000003u + level) * 1000003u + pos;
            ctx.hintInst = level == 0 && hint != kNone ? inst : savedInst;
            st = comprehensionElement(ctx, ce, ExprId{chain[level]}, level == 0 ? hint : kNone,
                                      values[pos].isUnknown(), next);
          }
          values = std::move(next);
        }
        ctx.hintInst = savedInst;
        ctx.scope = savedScope;
        ctx.iterKey = savedKey;
        if (st != Status::Ok) return st;
        ++units_[unitId].progress;
        if (values.empty()) continue;
        v = values.size() == 1 && values[0].kind != ValueKind::List ? values[0] : model_.arena().list(values);
      } else {
        ++units_[unitId].progress;
      }
      Status st = assignAttr(ctx, inst, slot, v, rangeOf(ctx.file, node, isStmt), node, isStmt);
      if (st != Status::Ok) return st;
    }
  }
  if (slots_.meta(src).state == kFrozen) return Status::Ok;
  ctx.blockedOn = SlotId{}; // already subscribed to every change of the source
  return Status::Blocked;
}

Status Evaluator::setVariable(Ctx& ctx, SlotId sid, const Value& v, SourceRange at, uint32_t node,
                              bool isStmt) {
  DiagOr<void> set = setSingle(sid, v, at);
  if (set) return Status::Ok;
  return failDiag(diagAt(ctx.file, node, isStmt, set.takeError()));
}

DiagOr<void> Evaluator::setSingle(SlotId sid, const Value& v, SourceRange at) {
  SlotMeta& m = slots_.meta(sid);
  if (m.state == kSet) {
    if (valuesEqual(slots_.value(sid), v) || (slots_.value(sid).isUnknown() && v.isUnknown())) return {};
    const PackedLoc old = slots_.setLoc(m.setAt);
    std::string oldAt =
        old.file == UINT32_MAX ? std::string("<unknown>")
        : old.col ? fmt::format("{}:{}:{}", diags_.sources().path(FileId{old.file}).str(), old.line, old.col)
                  : fmt::format("{}:{}", diags_.sources().path(FileId{old.file}).str(), old.line);
    std::string newAt = at.valid() ? diags_.formatLoc(at, at.col != 0) : std::string("<unknown>");
    return makeDiag(DiagKind::DoubleSet, SourceRange{}, model_.display(slots_.value(sid), true), oldAt,
                    model_.display(v, true), newAt);
  }
  slots_.value(sid) = v;
  m.state = kSet;
  if (at.valid()) m.setAt = slots_.internSetLoc(at);
  wake(sid);
  return {};
}

Status Evaluator::wrapAttrError(Ctx& ctx, InstanceId inst, uint32_t slot, uint32_t node, bool nodeIsStmt,
                                Diagnostic cause) {
  const ir::Entity& e = prog_.entities[model_.entityOf(inst)];
  llvm::StringRef name = strings_.str(prog_.attrs[e.slots[slot]].name);
  Diagnostic outer = diagAt(ctx.file, node, nodeIsStmt,
                            makeDiag(DiagKind::Attribute, SourceRange{}, name.str(), describeInst(inst)));
  outer.causedBy(std::move(cause));
  return failDiag(std::move(outer));
}

Diagnostic Evaluator::inverseFailure(InstanceId other, uint32_t oslot, Diagnostic cause) {
  const ir::Entity& e = prog_.entities[model_.entityOf(other)];
  Diagnostic d = makeDiag(DiagKind::Attribute, SourceRange{},
                          strings_.str(prog_.attrs[e.slots[oslot]].name).str(), describeInst(other));
  // The reference sets the other end through that instance, which it names as the statement; its location
  // is where the instance was constructed (a line).
  d.reportedIn = describeInst(other);
  d.range = model_.instance(other).createdAt;
  d.range.col = 0;
  d.causedBy(std::move(cause));
  return d;
}

Status Evaluator::failAttrAssign(Ctx& ctx, InstanceId inst, uint32_t slot, uint32_t node, bool nodeIsStmt,
                                 Diagnostic err) {
  if (err.kind != DiagKind::Attribute) {
    bool placed = err.range.valid() || !err.reportedIn.empty();
    return wrapAttrError(ctx, inst, slot, node, nodeIsStmt,
                         placed ? std::move(err) : diagAt(ctx.file, node, nodeIsStmt, std::move(err)));
  }
  // Already an attribute error (the other end of a relation): passed on, its causes placed at the node.
  for (Diagnostic& c : err.causes)
    if (!c.range.valid() && c.reportedIn.empty()) c = diagAt(ctx.file, node, nodeIsStmt, std::move(c));
  return failDiag(std::move(err));
}

Status Evaluator::assignAttr(Ctx& ctx, InstanceId inst, uint32_t slot, const Value& v, SourceRange at,
                             uint32_t node, bool nodeIsStmt) {
  SlotId sid = attrSid(inst, slot);
  SlotKind sk = slots_.meta(sid).kind;
  const ir::Attribute& attr = slotAttr(inst, slot);
  // The cause of an attribute error is placed at the reporting node unless it comes placed (a typedef's
  // constraint is reported at the typedef).
  auto cause = [&](Diagnostic d) {
    bool placed = d.range.valid() || !d.reportedIn.empty();
    return placed ? std::move(d) : diagAt(ctx.file, node, nodeIsStmt, std::move(d));
  };
  if (sk == SlotKind::List || sk == SlotKind::Optional) {
    DiagOr<void> added = addToRelation(inst, slot, v, at, false);
    if (!added) return failAttrAssign(ctx, inst, slot, node, nodeIsStmt, added.takeError());
    return Status::Ok;
  }
  // An equal value is already there: nothing to do (the reference compares before validating).
  if (slots_.meta(sid).state == kSet && valuesEqual(slots_.value(sid), v)) return Status::Ok;
  // Errors while evaluating a typedef's constraint are the cause of the attribute error, as reported.
  std::vector<Diagnostic> captured;
  DiagOr<void> valid = [&] {
    Reporter::Capture into(report_, &captured);
    return validate(attr.type, v, &ctx);
  }();
  if (!captured.empty()) return wrapAttrError(ctx, inst, slot, node, nodeIsStmt, std::move(captured.front()));
  if (!valid) return wrapAttrError(ctx, inst, slot, node, nodeIsStmt, cause(valid.takeError()));
  DiagOr<void> set = setSingle(sid, v, at);
  if (!set) return wrapAttrError(ctx, inst, slot, node, nodeIsStmt, cause(set.takeError()));
  if (attr.isRelation && attr.inverse.valid() && v.kind == ValueKind::Instance) {
    // [1] relation: keep the other end in sync.
    InstanceId other = v.instanceId();
    int oslot = prog_.slotOf(model_.entityOf(other), prog_.attrs[attr.inverse].name);
    if (oslot >= 0) {
      SlotId osid = attrSid(other, uint32_t(oslot));
      Value me = Value::instance(inst);
      DiagOr<void> synced;
      if (slots_.meta(osid).kind == SlotKind::Single) {
        if (!(other == inst && uint32_t(oslot) == slot)) synced = setSingle(osid, me, at);
      } else {
        synced = addToRelation(other, uint32_t(oslot), me, at, true);
      }
      if (!synced) {
        Diagnostic err = synced.takeError();
        if (err.kind != DiagKind::Attribute) err = inverseFailure(other, uint32_t(oslot), std::move(err));
        return failAttrAssign(ctx, inst, slot, node, nodeIsStmt, std::move(err));
      }
    }
  }
  return Status::Ok;
}

// Appends v to a relation slot that is not frozen: freezes it when it is optional or reaches its upper bound,
// otherwise wakes its waiters (gradual ones once it already had elements) and queues it for freezing.
void Evaluator::appendToRelation(SlotId sid, const ir::Attribute& attr, const Value& v) {
  CompactVec<Value>& xs = slots_.items(sid);
  bool wasEmpty = xs.empty();
  xs.push_back(v);
  if (slots_.meta(sid).kind == SlotKind::Optional ||
      (attr.mult.high != frontend::Multiplicity::kUnbounded && xs.size() >= attr.mult.high)) {
    freeze(sid);
    return;
  }
  if (wasEmpty)
    wake(sid);
  else
    wakeGradual(sid);
  maybeQueueForFreeze(sid);
}

DiagOr<void> Evaluator::addToRelation(InstanceId inst, uint32_t slot, const Value& v, SourceRange at,
                                      bool reverse) {
  SlotId sid = attrSid(inst, slot);
  const ir::Attribute& attr = slotAttr(inst, slot);
  if (v.kind == ValueKind::List) {
    for (const Value& item : v.items()) INM_TRY_DIAG(addToRelation(inst, slot, item, at, reverse));
    return {};
  }
  CompactVec<Value>& xs = slots_.items(sid);
  if (v.isUnknown()) {
    // An unknown is kept as an element (reference: a relation stores it like an instance, untyped, never
    // equal to another, counted for the bounds); it has no other end to keep in sync.
    SlotMeta& m = slots_.meta(sid);
    if (m.state == kFrozen) {
      if (m.kind == SlotKind::Optional && !xs.empty())
        return makeDiag(DiagKind::DoubleSetOptional, SourceRange{}, model_.display(xs[0], true),
                        model_.display(v, true));
      return makeDiag(DiagKind::ModifiedAfterFreeze, SourceRange{}, reverse ? " (reverse)" : "");
    }
    appendToRelation(sid, attr, v);
    return {};
  }
  if (v.isNull()) {
    if (!xs.empty()) {
      if (slots_.meta(sid).kind == SlotKind::Optional) {
        return makeDiag(DiagKind::DoubleSetOptional, SourceRange{}, model_.display(xs[0], true), "null");
      }
      std::string vals;
      for (size_t i = 0; i < xs.size(); ++i) vals += (i ? ", " : "") + model_.display(xs[i], false);
      return makeDiag(DiagKind::NullOnRelationWithValues, SourceRange{}, strings_.str(attr.name).str(),
                      describeInst(inst), vals);
    }
    freeze(sid);
    return {};
  }
  if (v.kind != ValueKind::Instance) {
    return makeDiag(DiagKind::InvalidRelationValueType, SourceRange{}, model_.display(v, true),
                    prog_.entities[attr.type.entity].fullName);
  }
  if (!prog_.isSubtype(model_.entityOf(v.instanceId()), attr.type.entity)) {
    return makeDiag(DiagKind::InvalidRelationClass, SourceRange{}, describeInst(v.instanceId()),
                    prog_.entities[attr.type.entity].fullName);
  }
  for (const Value& have : xs)
    if (have.inst == v.inst) return {}; // already present (also fine after freeze)
  SlotMeta& m = slots_.meta(sid);
  if (m.state == kFrozen) {
    if (m.kind == SlotKind::List && attr.mult.high != frontend::Multiplicity::kUnbounded &&
        xs.size() >= attr.mult.high) {
      return makeDiag(DiagKind::RelationArityExceeded, SourceRange{}, strings_.str(attr.name).str(),
                      describeInst(inst));
    }
    if (m.kind == SlotKind::Optional && !xs.empty()) {
      return makeDiag(DiagKind::DoubleSetOptional, SourceRange{}, model_.display(xs[0], true),
                      model_.display(v, true));
    }
    return makeDiag(DiagKind::ModifiedAfterFreeze, SourceRange{}, reverse ? " (reverse)" : "");
  }
  appendToRelation(sid, attr, v);
  if (!reverse && attr.inverse.valid()) {
    InstanceId other = v.instanceId();
    int oslot = prog_.slotOf(model_.entityOf(other), prog_.attrs[attr.inverse].name);
    if (oslot >= 0) {
      SlotId osid = attrSid(other, uint32_t(oslot));
      Value me = Value::instance(inst);
      DiagOr<void> synced = slots_.meta(osid).kind == SlotKind::Single
                                ? setSingle(osid, me, at)
                                : addToRelation(other, uint32_t(oslot), me, at, true);
      if (!synced) {
        Diagnostic err = synced.takeError();
        return err.kind == DiagKind::Attribute ? std::move(err)
                                               : inverseFailure(other, uint32_t(oslot), std::move(err));
      }
    }
  }
  return {};
}

// ---------------------------------------------------------------- for / if

Status Evaluator::takeEagerPromises(Ctx& ctx, UnitId unitId, uint32_t begin, uint32_t end) {
  units_.eagerSlots(unitId); // held from now on, even when empty, until the unit finishes
  const frontend::Ast& ast = *ctx.ast;
  const std::vector<StringId>& local = scopes_.declaredNames(ctx.file, begin, end);
  for (uint32_t i = begin; i < end; ++i) {
    const Stmt& s = ast.stmts[ast.stmtLists[i]];
    if (s.kind == StmtKind::If) {
      TRY(takeEagerPromises(ctx, unitId, s.bodyBegin, s.bodyEnd));
      TRY(takeEagerPromises(ctx, unitId, s.elseBegin, s.elseEnd));
      continue;
    }
    if (s.kind == StmtKind::For) {
      TRY(takeEagerPromises(ctx, unitId, s.bodyBegin, s.bodyEnd));
      continue;
    }
    if (s.kind != StmtKind::Assign) continue;
    const Expr& t = ast.exprs[s.target];
    if (t.kind != ExprKind::AttrRef) continue;
    const Expr& b = ast.exprs[t.a];
    if (b.kind != ExprKind::Name) continue;
    if (std::find(local.begin(), local.end(), b.name) != local.end()) continue;
    Value self;
    bool isSelf = false;
    SlotId vsid = scopes_.lookupVar(ctx.scope, b.name, &self, &isSelf);
    Value base;
    if (isSelf)
      base = self;
    else if (vsid.valid() && slotReady(vsid))
      base = slotValue(vsid);
    else
      continue;
    if (base.kind != ValueKind::Instance) continue;
    int slot = prog_.slotOf(model_.entityOf(base.instanceId()), t.name);
    if (slot <
        0) // the reference resolves eager promises when the block is reached: a missing attribute fails there
      return failAttrMissing(ctx, s.target.index, false, DiagKind::AttributeNotFound,
                             model_.entityOf(base.instanceId()), strings_.str(t.name));
    SlotId sid = attrSid(base.instanceId(), uint32_t(slot));
    if (slots_.meta(sid).kind != SlotKind::List && slots_.meta(sid).kind != SlotKind::Optional) continue;
    auto& held = units_.eagerSlots(unitId);
    if (std::find(held.begin(), held.end(), sid) != held.end()) continue;
    held.push_back(sid);
    acquirePromise(sid);
  }
  return Status::Ok;
}

void Evaluator::releaseEager(UnitId unitId) {
  for (SlotId sid : units_.takeEager(unitId)) releasePromise(sid);
}

Status Evaluator::forOverComprehension(Ctx& ctx, const Stmt& s, UnitId unitId, bool& handled) {
  handled = false;
  const Expr& e = ctx.ast->exprs[s.value];
  if (e.kind != ExprKind::ListComprehension || e.loopEnd - e.loopBegin != 1 || scopes_[ctx.scope].isStatic)
    return Status::Ok;
  const frontend::ComprehensionLoop& loop = ctx.ast->loops[e.loopBegin];
  SlotId iterSrc;
  TRY(gradualSource(ctx, loop.iterable, iterSrc));
  if (iterSrc.valid()) return Status::Ok; // over a relation: eager as before
  Value it;
  TRY(eval(ctx, loop.iterable, it));
  if (it.kind != ValueKind::List) return Status::Ok; // unknown or an error: the eager path reports it
  // Pass 1 (nothing emitted, so a Blocked element can simply be retried): guards, and each element either a
  // relation (its slot) or values.
  struct Piece {
    SlotId sid;
    llvm::SmallVector<Value, 2> values;
  };
  std::vector<Piece> pieces;
  bool anyRelation = false;
  ScopeId outer = ctx.scope;
  uint64_t outerKey = ctx.iterKey;
  ScopeId scope = scopes_.newScope(ctx.scope, ctx.file, kNone, 0, 0, loop.var);
  SlotId var = scopes_.firstVar(scope);
  uint32_t n = 0;
  Status st = Status::Ok;
  for (const Value& item : it.items()) {
    bindVar(var, item);
    ctx.scope = scope;
    ctx.iterKey = outerKey * 1000003u + (++n);
    Piece p{SlotId{}, {}};
    bool keep = true;
    for (uint32_t g = e.begin; g < e.end && keep; ++g) {
      Value gv;
      st = eval(ctx, ctx.ast->exprLists[g], gv);
      if (st != Status::Ok) break;
      if (gv.kind != ValueKind::Bool) { // unknown or not a boolean: the eager path decides / reports
        ctx.scope = outer;
        ctx.iterKey = outerKey;
        return Status::Ok;
      }
      keep = gv.b;
    }
    if (st == Status::Ok && keep) {
      st = gradualSource(ctx, e.a, p.sid);
      // not a relation: its values (comprehensionElement re-checks the guards, which hold)
      if (st == Status::Ok && !p.sid.valid())
        st = comprehensionElement(ctx, e, s.value, kNone, item.isUnknown(), p.values);
      if (p.sid.valid()) anyRelation = true;
    }
    ctx.scope = outer;
    ctx.iterKey = outerKey;
    if (st != Status::Ok) return st;
    if (keep) pieces.push_back(std::move(p));
  }
  if (!anyRelation) return Status::Ok;
  handled = true;
  for (Piece& p : pieces) {
    if (p.sid.valid()) {
      // a for unit of this statement whose source is preset to the relation: execFor's gradual path
      UnitId u = newUnit(UnitKind::Stmt, outer, ctx.file, units_[unitId].node);
      units_[u].aux = p.sid.index; // the preset source (execFor)
      Ctx sub = ctx;
      sub.unit = u;
      TRY(takeEagerPromises(sub, u, s.bodyBegin, s.bodyEnd));
      addWaiter(p.sid, u, true);
      enqueue(u);
      continue;
    }
    for (const Value& item : p.values) {
      if (item.isUnknown()) continue;
      ScopeId bodyScope = scopes_.newScope(outer, ctx.file, kNone, s.bodyBegin, s.bodyEnd, s.var);
      SlotId vs = scopes_.firstVar(bodyScope);
      bindVar(vs, item);
      emitBlock(bodyScope, ctx.file, s.bodyBegin, s.bodyEnd);
    }
  }
  return Status::Ok;
}

Status Evaluator::execFor(Ctx& ctx, const Stmt& s, UnitId unitId) {
  if (units_[unitId].aux == kNone) {
    SlotId src;
    Status st = gradualSource(ctx, s.value, src);
    if (st != Status::Ok) return st;
    if (!src.valid()) {
      bool handled = false;
      TRY(forOverComprehension(ctx, s, unitId, handled));
      if (handled) return Status::Ok;
    }
    if (src.valid()) {
      units_[unitId].aux = src.index; // the gradual source, kept across re-runs
      TRY(takeEagerPromises(ctx, unitId, s.bodyBegin, s.bodyEnd));
      addWaiter(src, unitId, true);
    }
  }
  SlotId src{units_[unitId].aux};
  if (src.valid()) {
    while (units_[unitId].progress < slots_.valueCount(src)) {
      Value item = slots_.items(src)[units_[unitId].progress++];
      if (item.isUnknown()) continue; // a for loop skips unknown elements
      ScopeId scope = scopes_.newScope(ctx.scope, ctx.file, kNone, s.bodyBegin, s.bodyEnd, s.var);
      bindVar(scopes_.firstVar(scope), item);
      emitBlock(scope, ctx.file, s.bodyBegin, s.bodyEnd);
    }
    if (slots_.meta(src).state == kFrozen) return Status::Ok;
    ctx.blockedOn = SlotId{};
    return Status::Blocked;
  }
  Value v;
  Status st = eval(ctx, s.value, v);
  if (st != Status::Ok) return st;
  if (v.isUnknown()) return Status::Ok;
  if (v.kind != ValueKind::List) {
    // The hint names the reference when the loop runs over a variable or attribute.
    frontend::ExprKind k = ctx.ast->exprs[s.value].kind;
    // The reference raises this on the loop statement: "reported in For(x)".
    if (k == frontend::ExprKind::Name || k == frontend::ExprKind::AttrRef)
      return failStmt(ctx, units_[unitId].node, DiagKind::ForOverReference,
                      frontend::reprExpr(*ctx.ast, s.value, strings_), msgValue(v));
    return failStmt(ctx, units_[unitId].node, DiagKind::ForOverNonList, msgValue(v));
  }
  for (const Value& item : v.items()) {
    if (item.isUnknown()) continue;
    ScopeId scope = scopes_.newScope(ctx.scope, ctx.file, kNone, s.bodyBegin, s.bodyEnd, s.var);
    SlotId vs = scopes_.firstVar(scope);
    bindVar(vs, item);
    emitBlock(scope, ctx.file, s.bodyBegin, s.bodyEnd);
  }
  return Status::Ok;
}

Status Evaluator::execIf(Ctx& ctx, const Stmt& s, UnitId unitId) {
  if (units_[unitId].eager == kNone) {
    TRY(takeEagerPromises(ctx, unitId, s.bodyBegin, s.bodyEnd));
    TRY(takeEagerPromises(ctx, unitId, s.elseBegin, s.elseEnd));
  }
  Value c;
  Status st = eval(ctx, s.value, c);
  if (st != Status::Ok) return st;
  if (c.isUnknown()) return Status::Ok;
  if (c.kind != ValueKind::Bool)
    return failStmt(ctx, units_[unitId].node, DiagKind::IfConditionNotBoolean, msgValue(c));
  uint32_t b = c.b ? s.bodyBegin : s.elseBegin;
  uint32_t e = c.b ? s.bodyEnd : s.elseEnd;
  if (b != e) emitBlock(scopes_.newScope(ctx.scope, ctx.file, kNone, b, e), ctx.file, b, e);
  return Status::Ok;
}

// ---------------------------------------------------------------- constructor arguments and implementations

Status Evaluator::runAttrAssign(Ctx& ctx, UnitId unitId) {
  InstanceId inst = units_[unitId].inst;
  uint32_t slot = units_[unitId].aux, origin = units_[unitId].origin;
  ExprId valueExpr{units_[unitId].node};
  ctx.parent = origin;
  SlotId sid = attrSid(inst, slot);
  const ir::Attribute& attr = slotAttr(inst, slot);
  if (slots_.meta(sid).kind == SlotKind::List) {
    SlotId src;
    uint32_t map = kNone;
    Status st = gradualFeed(ctx, valueExpr, src, map);
    if (st != Status::Ok) return st;
    if (src.valid() && src != sid) {
      // reports against the constructor expression, not a statement
      startForward(ctx, unitId, inst, slot, src, map, origin, true);
      return Status::Ok;
    }
    bool handled = false;
    TRY(feedListLiteral(ctx, unitId, inst, slot, valueExpr, origin, true, handled));
    if (handled) return Status::Ok;
  }
  Value v;
  uint32_t savedAttr = ctx.hintAttr;
  InstanceId savedInst = ctx.hintInst;
  if (attr.isRelation && attr.inverse.valid()) {
    ctx.hintAttr = attr.inverse.index;
    ctx.hintInst = inst;
  }
  Status st = eval(ctx, valueExpr, v);
  ctx.hintAttr = savedAttr;
  ctx.hintInst = savedInst;
  if (st != Status::Ok) return st;
  return assignAttr(ctx, inst, slot, v, valueAt(*ctx.ast, valueExpr), origin, false);
}

Status Evaluator::runImplement(Ctx& ctx, UnitId unitId) {
  InstanceId inst = units_[unitId].inst;
  const ir::Implement& imp = prog_.implements[ir::ImplementId{units_[unitId].aux}];
  if (imp.when.valid()) {
    Value c;
    Status st = eval(ctx, imp.when.expr, c);
    if (st != Status::Ok) return st;
    if (c.isUnknown()) return Status::Ok;
    if (c.kind != ValueKind::Bool) {
      // The reference raises this on the instance's selection of the implements statement, rendered
      // `implement <instance type> using <names> when <condition>` at the statement's entity (line:col).
      Diagnostic d =
          diagAt(ctx.file, imp.when.expr.index, false,
                 makeDiag(DiagKind::ImplementConditionNotBoolean, SourceRange{}, model_.display(c, true)));
      std::string names;
      for (ir::ImplId impl : imp.impls)
        names += (names.empty() ? "" : ",") + strings_.str(prog_.impls[impl].name).str();
      d.reportedIn =
          fmt::format("implement {} using {} when {}", prog_.entities[model_.entityOf(inst)].fullName, names,
                      frontend::prettyExpr(*ctx.ast, imp.when.expr, strings_));
      if (imp.range.valid()) d.range = imp.range;
      d.locWithColumn = true;
      return failDiag(std::move(d));
    }
    if (!c.b) return Status::Ok;
  }
  for (ir::ImplId impl : imp.impls) emitImplementation(inst, impl);
  instHasImpl_[inst.index] = 1;
  return Status::Ok;
}

void Evaluator::emitImplementation(InstanceId inst, ir::ImplId implId) {
  // The first implementation emitted for an instance is kept per instance, the others in the set (most
  // instances have one: the set stays small).
  uint32_t& first = firstImplDone_[inst.index];
  if (first == kNone)
    first = implId.index;
  else if (first == implId.index || !implDone_.insert(pairKey(inst.index, implId.index)).second)
    return;
  const ir::Implementation& impl = prog_.impls[implId];
  const ir::CodeRef& body = impl.body;
  if (!body.valid() || body.stmtBegin == body.stmtEnd) return;
  uint32_t nsFile = prog_.namespaces[impl.ns].file;
  ScopeId parent = nsFile == UINT32_MAX ? ScopeId{} : scopes_.ns(nsFile);
  ScopeId scope = scopes_.newScope(parent, body.file, inst.index, body.stmtBegin, body.stmtEnd);
  emitBlock(scope, body.file, body.stmtBegin, body.stmtEnd);
}

} // namespace inm::runtime

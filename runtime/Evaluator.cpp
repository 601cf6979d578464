// The evaluation engine's core: slots, scopes, units, the run queue and the freeze scheduler (language
// spec §5.2–§5.4). Statements, expressions, constructors and finalisation live in sibling files.
// Invariant: a unit is in the run queue at most once (Unit::queued); a blocked unit is registered as a
// waiter of exactly the slot it blocked on and is re-run from the start when that slot changes.
#include "Evaluator.h"

#include "support/Limits.h"

#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

namespace inm::runtime {

Evaluator::Evaluator(const ir::Program& program, DiagnosticEngine& diags, const EvalOptions& opts)
    : model_(program), prog_(program), diags_(diags), opts_(opts), strings_(*program.strings),
      plugins_(PluginRegistry::builtins()) {
  model_.setSources(&diags.sources());
  selfName_ = program.strings->lookup("self");
  requiresName_ = program.strings->lookup("requires");
}

// ---------------------------------------------------------------- slots

uint32_t Evaluator::newSlot(SlotKind kind, uint32_t owner, uint32_t attr) {
  uint32_t sid = uint32_t(meta_.size());
  SlotMeta m;
  m.kind = kind;
  m.owner = owner;
  m.attr = attr;
  meta_.push_back(m);
  vals_.emplace_back();
  return sid;
}

SlotExt& Evaluator::ext(uint32_t sid) {
  SlotMeta& m = meta_[sid];
  if (m.ext == kNone) {
    m.ext = uint32_t(exts_.size());
    exts_.emplace_back();
  }
  return exts_[m.ext];
}

bool Evaluator::slotReady(uint32_t sid) const {
  const SlotMeta& m = meta_[sid];
  if (m.kind == SlotKind::Var || m.kind == SlotKind::Single) return m.state == kSet;
  return m.state == kFrozen;
}

Value Evaluator::slotValue(uint32_t sid) {
  const SlotMeta& m = meta_[sid];
  if (m.kind == SlotKind::Var || m.kind == SlotKind::Single) return vals_[sid];
  if (m.kind == SlotKind::Optional) {
    if (m.ext == kNone || exts_[m.ext].values.empty()) return Value::null();
    return exts_[m.ext].values[0];
  }
  if (m.ext == kNone) return model_.arena().list({});
  return model_.arena().list(exts_[m.ext].values);
}

void Evaluator::enqueue(uint32_t unit) {
  Unit& u = units_[unit];
  if (u.queued || u.done) return;
  u.queued = true;
  runQueue_.push_back(unit);
}

void Evaluator::wake(uint32_t sid) {
  SlotMeta& m = meta_[sid];
  if (m.ext == kNone) return;
  SlotExt& x = exts_[m.ext];
  if (!x.waiters.empty()) {
    std::vector<uint32_t> ws;
    ws.swap(x.waiters);
    for (uint32_t w : ws) enqueue(w);
    x.potential = 0;
  }
  wakeGradual(sid);
}

void Evaluator::wakeGradual(uint32_t sid) {
  SlotMeta& m = meta_[sid];
  if (m.ext == kNone) return;
  SlotExt& x = exts_[m.ext];
  for (uint32_t w : x.gradual) enqueue(w);
}

void Evaluator::addWaiter(uint32_t sid, uint32_t unit, bool gradual) {
  units_[unit].waited = true;
  SlotExt& x = ext(sid);
  if (gradual) {
    if (std::find(x.gradual.begin(), x.gradual.end(), unit) == x.gradual.end()) x.gradual.push_back(unit);
    return;
  }
  x.waiters.push_back(unit);
  SlotMeta& m = meta_[sid];
  if (x.potential++ == 0 && (m.kind == SlotKind::List || m.kind == SlotKind::Optional) &&
      m.state != kFrozen) {
    waitedOn_[m.policy ? 1 : 0].push(sid);
    if (m.inZero) zeroDirty_ = true;
  }
  if ((m.kind == SlotKind::List || m.kind == SlotKind::Optional) && m.state != kFrozen && !m.queued)
    maybeQueueForFreeze(sid);
}

void Evaluator::acquirePromise(uint32_t sid) { meta_[sid].promises++; }

void Evaluator::releasePromise(uint32_t sid) {
  SlotMeta& m = meta_[sid];
  if (--m.promises <= 0) {
    m.promises = 0;
    if (m.inZero) zeroDirty_ = true;
    maybeQueueForFreeze(sid);
  }
}

void Evaluator::maybeQueueForFreeze(uint32_t sid) {
  SlotMeta& m = meta_[sid];
  if (m.kind != SlotKind::List && m.kind != SlotKind::Optional) return;
  if (m.state == kFrozen || m.queued || m.promises > 0) return;
  if (m.kind == SlotKind::List) {
    const ir::Attribute& a = prog_.attrs[ir::AttrId{m.attr}];
    size_t n = m.ext == kNone ? 0 : exts_[m.ext].values.size();
    if (n < a.mult.low) return;
  }
  m.queued = true;
  freezeQueue_.push_back(sid);
}

void Evaluator::freeze(uint32_t sid) {
  SlotMeta& m = meta_[sid];
  if (m.state == kFrozen) return;
  m.state = kFrozen;
  wake(sid);
}

bool Evaluator::freezeOne() {
  for (int round = 0; round < 2; ++round) {
    // (a) slots that could be complete, in queue order; policy slots only after all others
    std::vector<uint32_t> deferred;
    while (!freezeQueue_.empty()) {
      uint32_t sid = freezeQueue_.front();
      freezeQueue_.pop_front();
      SlotMeta& m = meta_[sid];
      m.queued = false;
      if (m.state == kFrozen || m.promises > 0) continue;
      uint32_t potential = m.ext == kNone ? 0 : exts_[m.ext].potential;
      if (potential == 0) {
        if (!m.inZero) {
          m.inZero = true;
          zeroWaiters_.push_back(sid);
        }
        continue;
      }
      if (m.policy) {
        deferred.push_back(sid);
        continue;
      }
      for (uint32_t d : deferred) {
        meta_[d].queued = true;
        freezeQueue_.push_front(d);
      }
      freeze(sid);
      return true;
    }
    if (!deferred.empty()) {
      // Freeze the policy slot that comes first in the policy order.
      auto rank = [&](uint32_t sid) {
        for (size_t i = 0; i < prog_.precedence.size(); ++i)
          if (prog_.precedence[i].before.index == meta_[sid].attr) return int(i) * 2;
        for (size_t i = 0; i < prog_.precedence.size(); ++i)
          if (prog_.precedence[i].after.index == meta_[sid].attr) return int(i) * 2 + 1;
        return 1 << 30;
      };
      std::stable_sort(deferred.begin(), deferred.end(),
                       [&](uint32_t a, uint32_t b) { return rank(a) < rank(b); });
      for (size_t i = 1; i < deferred.size(); ++i) {
        meta_[deferred[i]].queued = true;
        freezeQueue_.push_back(deferred[i]);
      }
      freeze(deferred[0]);
      return true;
    }
    // (b) zero-waiters that gained waiters go back to the queue
    // Only rescanned when a parked slot changed since the last scan (the list can hold every relation).
    bool moved = false;
    if (zeroDirty_) {
      zeroDirty_ = false;
      std::vector<uint32_t> keep;
      for (uint32_t sid : zeroWaiters_) {
        SlotMeta& m = meta_[sid];
        if (m.state == kFrozen) {
          m.inZero = false;
          continue;
        }
        uint32_t potential = m.ext == kNone ? 0 : exts_[m.ext].potential;
        if (potential > 0 && m.promises == 0) {
          m.inZero = false;
          if (!m.queued) {
            m.queued = true;
            freezeQueue_.push_back(sid);
          }
          moved = true;
        } else {
          keep.push_back(sid);
        }
      }
      zeroWaiters_.swap(keep);
    }
    if (!moved) break;
  }
  // (c) deadlock: a slot someone waits on that still has providers; non-policy first, creation order
  uint32_t best = kNone;
  for (int pass = 0; pass < 2 && best == kNone; ++pass) {
    auto& heap = waitedOn_[pass];
    while (!heap.empty()) {
      uint32_t sid = heap.top();
      const SlotMeta& m = meta_[sid];
      if (m.state == kFrozen || m.ext == kNone || exts_[m.ext].potential == 0) {
        heap.pop(); // re-pushed by addWaiter if it gains a waiter again
        continue;
      }
      best = sid;
      break;
    }
  }
  if (best != kNone) {
    freeze(best);
    return true;
  }
  // (d) nothing depends on the rest: freeze all zero-waiters, last in first
  bool any = false;
  std::vector<uint32_t> zs;
  zs.swap(zeroWaiters_);
  for (auto it = zs.rbegin(); it != zs.rend(); ++it) {
    if (meta_[*it].state == kFrozen) continue;
    if (meta_[*it].promises > 0) {
      zeroWaiters_.push_back(*it);
      continue;
    }
    freeze(*it);
    any = true;
  }
  if (any) return true;
  // (e) still stuck: only slots held open by gradual forwarders (relation-to-relation cycles) or by
  // statements that can never run remain. Everything runnable has run, so their contents are final.
  while (forceCursor_ < multiSlots_.size() && meta_[multiSlots_[forceCursor_]].state == kFrozen)
    ++forceCursor_;
  if (forceCursor_ < multiSlots_.size()) {
    freeze(multiSlots_[forceCursor_]);
    return true;
  }
  return false;
}

// ---------------------------------------------------------------- scopes

const std::vector<StringId>& Evaluator::declaredNames(uint32_t file, uint32_t begin, uint32_t end) {
  uint64_t key = pairKey(file, begin) ^ (uint64_t(end) << 48);
  auto it = declared_.find(key);
  if (it != declared_.end()) return it->second;
  std::vector<StringId> names;
  const frontend::Ast& ast = prog_.ast(file);
  auto consider = [&](StmtId sid) {
    const Stmt& s = ast.stmts[sid];
    if (s.kind != frontend::StmtKind::Assign || s.plusAssign) return;
    const Expr& t = ast.exprs[s.target];
    if (t.kind != ExprKind::Name) return;
    if (strings_.str(t.name).contains("::")) return;
    if (std::find(names.begin(), names.end(), t.name) == names.end()) names.push_back(t.name);
  };
  if (begin == kNone) {
    for (StmtId s : ast.topLevel) consider(s);
  } else {
    for (uint32_t i = begin; i < end; ++i) consider(ast.stmtLists[i]);
  }
  return declared_.try_emplace(key, std::move(names)).first->second;
}

uint32_t Evaluator::newScope(uint32_t parent, uint32_t file, uint32_t instance, uint32_t begin, uint32_t end,
                             StringId loopVar) {
  Scope sc;
  sc.parent = parent;
  sc.instance = instance;
  sc.file = file;
  sc.varBegin = uint32_t(scopeVars_.size());
  if (loopVar.valid()) scopeVars_.emplace_back(loopVar.index, newSlot(SlotKind::Var, kNone, loopVar.index));
  if (begin != end || begin == kNone) {
    const std::vector<StringId>& names = declaredNames(file, begin, end);
    for (StringId n : names) {
      if (loopVar.valid() && n == loopVar) continue;
      scopeVars_.emplace_back(n.index, newSlot(SlotKind::Var, kNone, n.index));
    }
  }
  sc.varEnd = uint32_t(scopeVars_.size());
  scopes_.push_back(sc);
  return uint32_t(scopes_.size() - 1);
}

uint32_t Evaluator::lookupVar(uint32_t scope, StringId name, Value* selfOut, bool* isSelf) {
  *isSelf = false;
  for (uint32_t s = scope; s != kNone; s = scopes_[s].parent) {
    const Scope& sc = scopes_[s];
    for (uint32_t i = sc.varBegin; i < sc.varEnd; ++i)
      if (scopeVars_[i].first == name.index) return scopeVars_[i].second;
    if (sc.isStatic) {
      if (name == selfName_) {
        *isSelf = true;
        *selfOut = staticSelf_[sc.instance];
      }
      return kNone;
    }
    if (sc.instance != kNone) {
      if (name == selfName_) {
        *isSelf = true;
        *selfOut = Value::instance(InstanceId{sc.instance});
        return kNone;
      }
      int slot = prog_.slotOf(model_.entityOf(InstanceId{sc.instance}), name);
      if (slot >= 0) return attrSid(sc.instance, uint32_t(slot));
    }
  }
  return kNone;
}

// ---------------------------------------------------------------- units

uint32_t Evaluator::newUnit(UnitKind kind, uint32_t scope, uint32_t file, uint32_t node) {
  Unit u;
  u.kind = kind;
  u.scope = scope;
  u.file = file;
  u.node = node;
  if (!freeUnits_.empty()) {
    uint32_t id = freeUnits_.back();
    freeUnits_.pop_back();
    units_[id] = u;
    return id;
  }
  units_.push_back(u);
  return uint32_t(units_.size() - 1);
}

void Evaluator::emitBlock(uint32_t scope, uint32_t file, uint32_t begin, uint32_t end) {
  const frontend::Ast& ast = prog_.ast(file);
  for (uint32_t i = begin; i < end; ++i)
    enqueue(newUnit(UnitKind::Stmt, scope, file, ast.stmtLists[i].index));
}

bool Evaluator::memoGet(Ctx& ctx, uint32_t node, Value& out) {
  if (ctx.unit == kNone) return false;
  Unit& u = units_[ctx.unit];
  if (u.memo == kNone) return false;
  uint64_t key = (uint64_t(node) << 32) ^ ctx.iterKey;
  for (auto& [k, v] : memos_[u.memo])
    if (k == key) {
      out = v;
      return true;
    }
  return false;
}

void Evaluator::memoPut(Ctx& ctx, uint32_t node, const Value& v) {
  if (ctx.unit == kNone) return;
  Unit& u = units_[ctx.unit];
  if (u.memo == kNone) {
    if (!freeMemos_.empty()) {
      u.memo = freeMemos_.back();
      freeMemos_.pop_back();
    } else {
      u.memo = uint32_t(memos_.size());
      memos_.emplace_back();
    }
  }
  memos_[u.memo].emplace_back((uint64_t(node) << 32) ^ ctx.iterKey, v);
}

void Evaluator::finishUnit(uint32_t unit) {
  Unit& u = units_[unit];
  u.done = true;
  if (u.memo != kNone) { // a finished unit never reads its memo again: recycle it
    memos_[u.memo].clear();
    freeMemos_.push_back(u.memo);
    u.memo = kNone;
  }
  uint32_t p = u.promise;
  u.promise = kNone;
  if (p != kNone) releasePromise(p);
  releaseEager(unit);
}

void Evaluator::runUnit(uint32_t unit) {
  units_[unit].queued = false;
  if (units_[unit].done) return;
  Ctx ctx;
  ctx.unit = unit;
  ctx.scope = units_[unit].scope;
  ctx.file = units_[unit].file;
  ctx.ast = &prog_.ast(ctx.file);
  Status st = Status::Ok;
  switch (units_[unit].kind) {
  case UnitKind::Stmt: st = execStmt(ctx, unit); break;
  case UnitKind::AttrAssign: st = runAttrAssign(ctx, unit); break;
  case UnitKind::Implement: st = runImplement(ctx, unit); break;
  case UnitKind::Forward: st = runForward(ctx, unit); break;
  case UnitKind::Deferred: break;
  }
  if (st == Status::Ok) {
    finishUnit(unit);
    // Nothing can refer to a unit that never waited and is not queued: its storage is reused.
    const Unit& u = units_[unit];
    if (!u.waited && !u.queued && u.eager == kNone) freeUnits_.push_back(unit);
  } else if (st == Status::Blocked && ctx.blockedOn != kNone)
    addWaiter(ctx.blockedOn, unit, ctx.blockedGradual);
}

// ---------------------------------------------------------------- errors

std::string Evaluator::reprNode(uint32_t file, uint32_t node, bool isStmt) {
  if (node == kNone) return {};
  const frontend::Ast& ast = prog_.ast(file);
  return isStmt ? frontend::reprStmt(ast, StmtId{node}, strings_)
                : frontend::reprExpr(ast, ExprId{node}, strings_);
}

SourceRange Evaluator::rangeOf(uint32_t file, uint32_t node, bool isStmt) {
  if (node == kNone || file == kNone) return {};
  const frontend::Ast& ast = prog_.ast(file);
  return isStmt ? ast.stmts[StmtId{node}].range : ast.exprs[ExprId{node}].range;
}

Diagnostic Evaluator::diagAt(uint32_t file, uint32_t node, bool isStmt, DiagKind kind, std::string message) {
  return diagAt(file, node, isStmt, diagWithText(kind, SourceRange{}, std::move(message)));
}

Diagnostic Evaluator::diagAt(uint32_t file, uint32_t node, bool isStmt, Diagnostic d) {
  d.range = rangeOf(file, node, isStmt);
  d.reportedIn = reprNode(file, node, isStmt);
  // The reference locates errors inside an f-string at the literal's line and column.
  if (!isStmt && node != kNone && prog_.ast(file).exprs[ExprId{node}].kind == ExprKind::FString)
    d.locWithColumn = true;
  return d;
}

Status Evaluator::failDiag(Diagnostic d) {
  if (capture_) {
    capture_->push_back(std::move(d));
    return Status::Error;
  }
  if (!aborted_) diags_.report(std::move(d));
  aborted_ = true;
  return Status::Error;
}

Status Evaluator::checkValueSize(Ctx& ctx, ExprId node, const Value& v) {
  const Limits& lim = limits();
  if (valueDepth(v) > lim.maxNesting)
    return fail(
        ctx, node, DiagKind::NestedTooDeep,
        fmt::format("a value of more than {} nested lists and dicts (--max-nesting)", lim.maxNesting));
  if (v.kind == ValueKind::String && v.str().size() > lim.maxStringBytes)
    return fail(ctx, node, DiagKind::LimitExceeded,
                fmt::format("a string of {} bytes exceeds the limit of {} (--max-string-bytes)",
                            v.str().size(), lim.maxStringBytes));
  if (v.kind == ValueKind::List && v.l->size > lim.maxListItems)
    return fail(ctx, node, DiagKind::LimitExceeded,
                fmt::format("a list of {} items exceeds the limit of {} (--max-list-items)", v.l->size,
                            lim.maxListItems));
  return Status::Ok;
}

std::string Evaluator::typeName(const Value& v) {
  switch (v.kind) {
  case ValueKind::Null: return "NoneValue";
  case ValueKind::Bool: return "bool";
  case ValueKind::Int:
  case ValueKind::BigInt: return "int";
  case ValueKind::Float: return "float";
  case ValueKind::String: return "str";
  case ValueKind::List: return "list";
  case ValueKind::Dict: return "dict";
  case ValueKind::Instance: return "Instance";
  case ValueKind::Unknown: return "Unknown";
  }
  llvm_unreachable("every ValueKind is handled above");
}

// ---------------------------------------------------------------- main loop

Model Evaluator::run() {
  pluginFns_.resize(prog_.plugins.size(), nullptr);
  for (uint32_t i = 0; i < prog_.plugins.size(); ++i) {
    const std::string& name = prog_.plugins[ir::PluginId{i}].fullName;
    pluginFns_[i] = plugins_.find(name);
    if (!pluginFns_[i] && opts_.extraPlugins) pluginFns_[i] = opts_.extraPlugins->find(name);
  }
  constCache_.resize(prog_.files.size());
  indexTables_.resize(prog_.indexes.size());

  // One top-level scope per file; then check typedef'd defaults; then emit every top-level statement.
  nsScope_.resize(prog_.files.size(), kNone);
  for (uint32_t f = 0; f < prog_.files.size(); ++f) nsScope_[f] = newScope(kNone, f, kNone, kNone, kNone);

  for (uint32_t e = 0; e < prog_.entities.size() && !aborted_; ++e) {
    const ir::Entity& ent = prog_.entities[ir::EntityId{e}];
    for (ir::AttrId aid : ent.ownAttrs) {
      const ir::Attribute& a = prog_.attrs[aid];
      if (!a.defaultValue.valid() || a.isRelation) continue;
      if (a.type.base != ir::BaseType::Typedef) continue;
      Ctx ctx;
      ctx.file = a.defaultValue.file;
      ctx.ast = &prog_.ast(ctx.file);
      ctx.scope = nsScope_[ctx.file];
      Value v;
      if (eval(ctx, a.defaultValue.expr, v) != Status::Ok) continue;
      std::string err;
      DiagKind k = DiagKind::Runtime;
      if (!validate(a.type, v, err, k, nullptr)) {
        Diagnostic d = makeDiag(k, a.range, err);
        d.locWithColumn = true;
        // reference: "digit t = 12"
        std::string tn =
            a.type.base == ir::BaseType::Typedef ? prog_.typedefs[a.type.typedefId].fullName : "";
        if (llvm::StringRef(tn).startswith("__config__::")) tn = tn.substr(12);
        d.reportedIn = tn + " " + strings_.str(a.name).str() + " = " +
                       frontend::reprDefault(prog_.ast(ctx.file), a.defaultValue.expr, strings_);
        failDiag(std::move(d));
      }
    }
  }

  for (uint32_t f = 0; f < prog_.files.size() && !aborted_; ++f) {
    const frontend::Ast& ast = prog_.ast(f);
    for (StmtId s : ast.topLevel) enqueue(newUnit(UnitKind::Stmt, nsScope_[f], f, s.index));
  }

  unsigned iterations = 0;
  while (!aborted_) {
    while (!runQueue_.empty() && !aborted_) {
      uint32_t u = runQueue_.front();
      runQueue_.pop_front();
      runUnit(u);
    }
    if (aborted_) break;
    if (!freezeOne()) break;
    if (++iterations > opts_.maxIterations * 100) {
      diags_.error(DiagKind::MaxIterations, SourceRange{}, opts_.maxIterations);
      aborted_ = true;
    }
  }
  if (!aborted_) finalize();
  if (opts_.stats)
    fmt::print(
        stderr,
        "eval stats: {} instances, {} slots ({} ext), {} units, {} scopes, {} scope vars, {} freeze rounds\n",
        model_.instances().size(), meta_.size(), exts_.size(), units_.size(), scopes_.size(),
        scopeVars_.size(), iterations);
  if (opts_.stats) {
    size_t ext = 0, done = 0;
    for (size_t i = 0; i < exts_.size(); ++i)
      ext +=
          exts_[i].values.capacity() * 16 + exts_[i].waiters.capacity() * 4 + exts_[i].gradual.capacity() * 4;
    for (size_t i = 0; i < units_.size(); ++i) done += units_[i].done && units_[i].memo == kNone;
    fmt::print(stderr,
               "eval bytes: slots {} MB, units {} MB ({} done w/o memo), scopes {} MB, exts {} MB + {} MB, "
               "memos {}\n",
               meta_.size() * (sizeof(SlotMeta) + sizeof(Value)) >> 20, units_.size() * sizeof(Unit) >> 20,
               done, scopes_.size() * sizeof(Scope) >> 20, exts_.size() * sizeof(SlotExt) >> 20, ext >> 20,
               memos_.size());
  }

  // Hand the final values to the model: it adopts the slot array (an instance's attributes start at its
  // instBase_), single values are already in place; relation ends become List/Instance/Null values.
  model_.adoptSlots(std::move(vals_));
  for (uint32_t i = 0; i < model_.instances().size(); ++i) {
    const ir::Entity& e = prog_.entities[model_.entityOf(InstanceId{i})];
    for (uint32_t s = 0; s < e.slots.size(); ++s) {
      uint32_t sid = attrSid(i, s);
      const SlotMeta& m = meta_[sid];
      bool set = m.kind == SlotKind::Single ? m.state == kSet : (m.state == kFrozen || m.ext != kNone);
      if (!set) continue;
      if (m.kind != SlotKind::Single) model_.mutableSlot(InstanceId{i}, s) = slotValue(sid);
      model_.setFlags()[sid] = 1;
    }
  }
  return std::move(model_);
}

// ---------------------------------------------------------------- plugin context

Model& EvalPluginContext::model() { return ev_.model_; }

const Value* EvalPluginContext::attr(InstanceId id, llvm::StringRef name, bool* exists) {
  if (exists) *exists = true;
  StringId sid = ev_.strings_.lookup(name);
  int slot = sid.valid() ? ev_.prog_.slotOf(ev_.model_.entityOf(id), sid) : -1;
  if (slot < 0) {
    if (exists) *exists = false;
    return nullptr;
  }
  uint32_t s = ev_.attrSid(id.index, uint32_t(slot));
  if (!ev_.slotReady(s)) {
    blockedOn = s;
    return nullptr;
  }
  return keep(ev_.slotValue(s));
}

void EvalPluginContext::print(llvm::StringRef line) {
  if (ev_.opts_.output) ev_.opts_.output->writeLine(line);
}
const std::string& EvalPluginContext::projectDir() { return ev_.opts_.projectDir; }

std::string EvalPluginContext::moduleDir(llvm::StringRef module) {
  for (const ir::FileInfo& f : ev_.prog_.files)
    if (f.source && f.source->moduleName == module) return f.source->moduleDir;
  return {};
}

std::string EvalPluginContext::callerModule() {
  const ir::FileInfo& f = ev_.prog_.files[ctx_.file];
  return f.source ? f.source->moduleName : "__config__";
}

ir::EntityId EvalPluginContext::findEntity(llvm::StringRef fullName) {
  for (uint32_t i = 0; i < ev_.prog_.entities.size(); ++i)
    if (ev_.prog_.entities[ir::EntityId{i}].fullName == fullName) return ir::EntityId{i};
  return ir::EntityId{};
}

const Value* EvalPluginContext::lookupVariable(llvm::StringRef name) {
  StringId n = ev_.strings_.lookup(name);
  if (!n.valid()) return nullptr;
  Value self;
  bool isSelf = false;
  uint32_t sid = ev_.lookupVar(ctx_.scope, n, &self, &isSelf);
  if (isSelf) return keep(self);
  if (sid == kNone) return nullptr;
  if (!ev_.slotReady(sid)) {
    blockedOn = sid;
    return nullptr;
  }
  return keep(ev_.slotValue(sid));
}

bool EvalPluginContext::checkTypedef(llvm::StringRef fullName, const Value& v, std::string& err) {
  for (uint32_t i = 0; i < ev_.prog_.typedefs.size(); ++i) {
    if (ev_.prog_.typedefs[ir::TypedefId{i}].fullName != fullName) continue;
    std::vector<Diagnostic>* saved =
        ev_.capture_; // the caller reports the plugin error, not the constraint's
    ev_.capture_ = nullptr;
    DiagKind kind = DiagKind::Runtime;
    bool ok = ev_.checkTypedef(ir::TypedefId{i}, v, err, kind);
    ev_.capture_ = saved;
    return ok;
  }
  return true;
}

void EvalPluginContext::warn(std::string message) {
  ev_.diags_.report(makeDiag(DiagKind::Deprecation, SourceRange{}, std::move(message)));
}

Model evaluate(const ir::Program& program, DiagnosticEngine& diags, const EvalOptions& opts) {
  if (!opts.skipTeardown) {
    Evaluator ev(program, diags, opts);
    return ev.run();
  }
  // The evaluator's tables are dropped with the process (see EvalOptions::skipTeardown).
  // Only the big flat arrays are returned (a few hundred chunk frees) so the exporter can reuse that memory.
  auto* ev = new Evaluator(program, diags, opts);
  Model m = ev->run();
  ev->meta_.clear();
  ev->vals_.clear();
  ev->units_.clear();
  ev->scopes_.clear();
  // Also the tables the exporter never reads (relation contents are in the model by now): the export that
  // follows reuses their memory instead of growing the peak (100k bench project: ~35 MiB).
  ev->exts_.clear();
  llvm::DenseSet<uint64_t, PairKeyInfo>().swap(ev->implDone_);
  std::vector<llvm::StringMap<uint32_t>>().swap(ev->indexTables_);
  return m;
}

} // namespace inm::runtime

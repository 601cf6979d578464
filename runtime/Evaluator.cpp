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
      scopes_(program, model_, slots_), freezer_(program), report_(program, diags),
      plugins_(PluginRegistry::builtins()) {
  model_.setSources(&diags.sources());
  selfName_ = program.strings->lookup("self");
  requiresName_ = program.strings->lookup("requires");
}

// ---------------------------------------------------------------- slots

void Evaluator::wake(SlotId sid) {
  SlotExt* xp = slots_.extIf(sid);
  if (!xp) return;
  SlotExt& x = *xp;
  if (!x.waiters.empty()) {
    CompactVec<UnitId> ws;
    ws.swap(x.waiters);
    for (UnitId w : ws) enqueue(w);
    x.potential = 0;
  }
  wakeGradual(sid);
}

void Evaluator::wakeGradual(SlotId sid) {
  SlotExt* x = slots_.extIf(sid);
  if (!x) return;
  for (UnitId w : x->gradual) enqueue(w);
}

void Evaluator::addWaiter(SlotId sid, UnitId unit, bool gradual) {
  units_[unit].waited = true;
  SlotExt& x = slots_.ext(sid);
  if (gradual) {
    if (std::find(x.gradual.begin(), x.gradual.end(), unit) == x.gradual.end()) x.gradual.push_back(unit);
    return;
  }
  x.waiters.push_back(unit);
  SlotMeta& m = slots_.meta(sid);
  if (x.potential++ == 0 && (m.kind == SlotKind::List || m.kind == SlotKind::Optional) && m.state != kFrozen)
    freezer_.firstWaiter(slots_, sid);
  if ((m.kind == SlotKind::List || m.kind == SlotKind::Optional) && m.state != kFrozen && !m.queued)
    maybeQueueForFreeze(sid);
}

void Evaluator::releasePromise(SlotId sid) {
  SlotMeta& m = slots_.meta(sid);
  if (--m.promises <= 0) {
    m.promises = 0;
    if (m.inZero) freezer_.zeroChanged();
    maybeQueueForFreeze(sid);
  }
}

void Evaluator::freeze(SlotId sid) {
  SlotMeta& m = slots_.meta(sid);
  if (m.state == kFrozen) return;
  m.state = kFrozen;
  wake(sid);
}

bool Evaluator::freezeOne() {
  std::vector<SlotId> picked;
  if (!freezer_.pick(slots_, picked)) return false;
  for (SlotId sid : picked) freeze(sid);
  return true;
}

// ---------------------------------------------------------------- units

void Evaluator::emitBlock(ScopeId scope, uint32_t file, uint32_t begin, uint32_t end) {
  units_.enqueueBlock(scope, file, begin, end);
}

void Evaluator::finishUnit(UnitId unit) {
  Unit& u = units_[unit];
  u.done = true;
  units_.dropMemo(unit);
  SlotId p = u.promise;
  u.promise = SlotId{};
  if (p.valid()) releasePromise(p);
  releaseEager(unit);
}

void Evaluator::runUnit(UnitId unit) {
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
    if (!u.waited && !u.queued && u.eager == kNone) units_.recycle(unit);
  } else if (st == Status::Blocked && ctx.blockedOn.valid())
    addWaiter(ctx.blockedOn, unit, ctx.blockedGradual);
}

// ---------------------------------------------------------------- errors

Status Evaluator::checkValueSize(Ctx& ctx, ExprId node, const Value& v) {
  const Limits& lim = limits();
  if (valueDepth(v) > lim.maxNesting)
    return fail(
        ctx, node, DiagKind::NestedTooDeep,
        fmt::format("a value of more than {} nested lists and dicts (--max-nesting)", lim.maxNesting));
  if (v.kind == ValueKind::String && v.str().size() > lim.maxStringBytes)
    return fail(ctx, node, DiagKind::StringSizeLimit, v.str().size(), lim.maxStringBytes);
  if (v.kind == ValueKind::List && v.l->size > lim.maxListItems)
    return fail(ctx, node, DiagKind::ListSizeLimit, v.l->size, lim.maxListItems);
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
    pluginFns_[i] = opts_.nativeStdPlugins ? plugins_.find(name) : nullptr;
    if (!pluginFns_[i] && opts_.extraPlugins) pluginFns_[i] = opts_.extraPlugins->find(name);
  }
  constCache_.resize(prog_.files.size());
  indexes_.init(prog_, model_);

  // One top-level scope per file; then check typedef'd defaults; then emit every top-level statement.
  scopes_.initNamespaces();

  for (uint32_t e = 0; e < prog_.entities.size() && !aborted(); ++e) {
    const ir::Entity& ent = prog_.entities[ir::EntityId{e}];
    for (ir::AttrId aid : ent.ownAttrs) {
      const ir::Attribute& a = prog_.attrs[aid];
      if (!a.defaultValue.valid() || a.isRelation) continue;
      if (a.type.base != ir::BaseType::Typedef) continue;
      Ctx ctx;
      ctx.file = a.defaultValue.file;
      ctx.ast = &prog_.ast(ctx.file);
      ctx.scope = scopes_.ns(ctx.file);
      Value v;
      if (eval(ctx, a.defaultValue.expr, v) != Status::Ok) continue;
      DiagOr<void> valid = validate(a.type, v, nullptr);
      if (!valid) {
        Diagnostic d = valid.takeError();
        d.range = a.range;
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

  for (uint32_t f = 0; f < prog_.files.size() && !aborted(); ++f) {
    const frontend::Ast& ast = prog_.ast(f);
    for (StmtId s : ast.topLevel) enqueue(newUnit(UnitKind::Stmt, scopes_.ns(f), f, s.index));
  }

  unsigned iterations = 0;
  while (!aborted()) {
    while (units_.hasQueued() && !aborted())
      runUnit(units_.pop([this](uint32_t file, uint32_t i) { return prog_.ast(file).stmtLists[i].index; }));
    if (aborted()) break;
    if (!freezeOne()) break;
    if (++iterations > opts_.maxIterations * 100) {
      report_.abort(makeDiag(DiagKind::MaxIterations, SourceRange{}, opts_.maxIterations));
    }
  }
  if (opts_.phaseEnd) opts_.phaseEnd("eval run");
  if (!aborted()) finalize();
  if (opts_.phaseEnd) opts_.phaseEnd("eval finalize");
  if (opts_.stats)
    fmt::print(
        stderr,
        "eval stats: {} instances, {} slots ({} ext), {} units, {} scopes, {} scope vars, {} freeze rounds\n",
        model_.instances().size(), slots_.size(), slots_.extCount(), units_.size(), scopes_.size(),
        scopes_.varCount(), iterations);
  if (opts_.stats) {
    size_t ext = 0, done = 0;
    for (size_t i = 0; i < slots_.extCount(); ++i) {
      const SlotExt& x = slots_.extAt(i);
      ext += x.waiters.capacity() * 4 + x.gradual.capacity() * 4;
    }
    for (uint32_t i = 0; i < units_.size(); ++i)
      done += units_[UnitId{i}].done && units_[UnitId{i}].memo == kNone;
    fmt::print(stderr,
               "eval bytes: slots {} MB, units {} MB ({} done w/o memo), scopes {} MB, exts {} MB + {} MB, "
               "memos {}, value arena {} MB\n",
               slots_.size() * (sizeof(SlotMeta) + sizeof(Value)) >> 20, units_.size() * sizeof(Unit) >> 20,
               done, scopes_.size() * sizeof(Scope) >> 20, slots_.extCount() * sizeof(SlotExt) >> 20,
               ext >> 20, units_.memoCount(), model_.arena().allocator().getBytesAllocated() >> 20);
  }

  // Units and scopes are dead once the run is over: free them before the relation values below are built,
  // so that those reuse the memory instead of raising the peak (100k bench project: ~25 MiB).
  units_.release();
  scopes_.release();

  // Hand the final values to the model: it adopts the slot array (an instance's attributes start at its
  // instBase_), single values are already in place; relation ends become List/Instance/Null values in their
  // own cells (their contents are freed once in the arena).
  model_.adoptSlots(slots_.takeValues());
  std::vector<uint8_t>& setFlags = model_.setFlags();
  for (uint32_t i = 0; i < model_.instances().size(); ++i) {
    const ir::Entity& e = prog_.entities[model_.entityOf(InstanceId{i})];
    for (uint32_t s = 0; s < e.slots.size(); ++s) {
      SlotId sid = attrSid(InstanceId{i}, s);
      const SlotMeta& m = slots_.meta(sid);
      bool set;
      if (m.kind == SlotKind::Single) {
        set = m.state == kSet;
      } else {
        Value& cell = model_.mutableSlot(InstanceId{i}, s);
        set = m.state == kFrozen || m.hasExt() || !SlotStore::cellItems(cell).empty();
        SlotStore::settleCell(cell, m.kind, set, model_);
      }
      if (set) setFlags[sid.index] = 1;
    }
  }
  if (opts_.phaseEnd) opts_.phaseEnd("eval model");
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
  SlotId s = ev_.attrSid(id, uint32_t(slot));
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
  SlotId sid = ev_.scopes_.lookupVar(ctx_.scope, n, &self, &isSelf);
  if (isSelf) return keep(self);
  if (!sid.valid()) return nullptr;
  if (!ev_.slotReady(sid)) {
    blockedOn = sid;
    return nullptr;
  }
  return keep(ev_.slotValue(sid));
}

bool EvalPluginContext::hasVariable(llvm::StringRef name) {
  StringId n = ev_.strings_.lookup(name);
  if (!n.valid()) return false;
  Value self;
  bool isSelf = false;
  return ev_.scopes_.lookupVar(ctx_.scope, n, &self, &isSelf).valid() || isSelf;
}

bool EvalPluginContext::checkTypedef(llvm::StringRef fullName, const Value& v, std::string& err) {
  for (uint32_t i = 0; i < ev_.prog_.typedefs.size(); ++i) {
    if (ev_.prog_.typedefs[ir::TypedefId{i}].fullName != fullName) continue;
    Reporter::Capture none(ev_.report_, nullptr); // the caller reports the plugin error, not the constraint's
    DiagOr<void> valid = ev_.checkTypedef(ir::TypedefId{i}, v);
    if (valid.ok()) return true;
    err = valid.error().message;
    typedefFailure = valid.error();
    return false;
  }
  return true;
}

void EvalPluginContext::warn(DiagKind kind, std::string message) {
  ev_.diags_.report(diagWithText(kind, SourceRange{}, std::move(message)));
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
  ev->releaseTables();
  return m;
}

void Evaluator::releaseTables() {
  slots_.release();
  units_.release();
  scopes_.release();
  // Also the tables the exporter never reads (relation contents are in the model by now): the export that
  // follows reuses their memory instead of growing the peak (100k bench project: ~35 MiB).
  llvm::DenseSet<uint64_t, PairKeyInfo>().swap(implDone_);
  std::vector<uint32_t>().swap(firstImplDone_);
  indexes_.release();
  freezer_.release();
  constCache_ = {};
  instHasImpl_ = {};
  forwardMaps_ = {};
  innerMaps_ = {};
}

} // namespace inm::runtime

// Expression evaluation of the engine: literals, names and attribute reads (waiting on slots), plugin
// calls and casts, list/dict literals, comprehensions, dict lookups, conditionals, boolean operators and
// `is defined`. Returns Status::Blocked with ctx.blockedOn set when a slot is not available yet.
// Invariant: side-effecting nodes (constructors, plugin calls) are memoised per unit so a re-run after a
// block never repeats them.
#include "Evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace inm::runtime {

static Status blockOn(Ctx& ctx, SlotId sid, bool gradual = false) {
  ctx.blockedOn = sid;
  ctx.blockedGradual = gradual;
  return Status::Blocked;
}

Status Evaluator::eval(Ctx& ctx, ExprId id, Value& out) {
  const Expr& e = ctx.ast->exprs[id];
  switch (e.kind) {
  case ExprKind::Int:
  case ExprKind::Float:
  case ExprKind::Bool:
  case ExprKind::Null:
  case ExprKind::String:
  case ExprKind::Name: return evalNode(ctx, id, out);
  default: break;
  }
  uint32_t consumer = ctx.parent;
  ctx.parent = id.index;
  Status st = e.kind == ExprKind::AttrRef ? evalAttrRef(ctx, e, id, out, consumer) : evalNode(ctx, id, out);
  ctx.parent = consumer;
  return st;
}

Status Evaluator::evalNode(Ctx& ctx, ExprId id, Value& out) {
  const Expr& e = ctx.ast->exprs[id];
  switch (e.kind) {
  case ExprKind::Int:
    if (e.bigInt) { // beyond int64: exact, parsed on each evaluation (rare)
      std::string err;
      if (!parseInt(model_.arena(), strings_.str(e.name), 10, out, err))
        return err.empty() ? fail(ctx, id, DiagKind::InvalidIntegerLiteral, strings_.str(e.name).str())
                           : fail(ctx, id, DiagKind::IntegerLiteralLimit, err);
      return Status::Ok;
    }
    out = Value::integer(e.intValue);
    return Status::Ok;
  case ExprKind::Float: out = Value::real(e.floatValue); return Status::Ok;
  case ExprKind::Bool: out = Value::boolean(e.intValue != 0); return Status::Ok;
  case ExprKind::Null: out = Value::null(); return Status::Ok;
  case ExprKind::String: {
    std::vector<Value>& cache = constCache_[ctx.file];
    if (cache.size() <= id.index) cache.resize(ctx.ast->exprs.size(), Value::unknown());
    if (cache[id.index].kind != ValueKind::String) cache[id.index] = model_.arena().str(strings_.str(e.name));
    out = cache[id.index];
    return Status::Ok;
  }
  case ExprKind::Regex: {
    Value self;
    bool isSelf = false;
    scopes_.lookupVar(ctx.scope, selfName_, &self, &isSelf);
    if (!isSelf) return fail(ctx, id, DiagKind::VariableNotFound, "self");
    if (self.isUnknown()) {
      out = self;
      return Status::Ok;
    }
    if (self.kind != ValueKind::String) return fail(ctx, id, DiagKind::RegexOnNonString);
    uint64_t key = pairKey(ctx.file, id.index);
    auto it = regexCache_.find(key);
    if (it == regexCache_.end()) {
      // RE2: linear-time matching without recursion, so no pattern/input pair can hang or overflow the stack.
      // Lookaround and backreferences, which need backtracking, are reported as unsupported.
      RE2::Options ro;
      ro.set_log_errors(false);
      llvm::StringRef pat = strings_.str(e.name);
      auto re = std::make_unique<RE2>(re2::StringPiece(pat.data(), pat.size()), ro);
      if (!re->ok())
        return fail(ctx, id, DiagKind::RegexError, strings_.str(e.name).str(),
                    re->error() +
                        (re->error_code() == RE2::ErrorBadPerlOp || re->error_code() == RE2::ErrorBadEscape
                             ? " (lookaround and backreferences are not supported)"
                             : ""));
      it = regexCache_.emplace(key, std::move(re)).first;
    }
    llvm::StringRef s = self.str();
    // Python's re.match: anchored at the start only.
    out = Value::boolean(
        it->second->Match(re2::StringPiece(s.data(), s.size()), 0, s.size(), RE2::ANCHOR_START, nullptr, 0));
    return Status::Ok;
  }
  case ExprKind::StringFormat: return evalFormat(ctx, e, id, out);
  case ExprKind::FString: return evalFString(ctx, e, id, out);
  case ExprKind::List: {
    llvm::SmallVector<Value, 8> items;
    for (uint32_t i = e.begin; i < e.end; ++i) {
      Value v;
      TRY(eval(ctx, ctx.ast->exprLists[i], v));
      if (v.kind == ValueKind::List)
        items.append(v.items().begin(), v.items().end());
      else
        items.push_back(v);
    }
    out = model_.arena().list(items);
    return checkValueSize(ctx, id, out);
  }
  case ExprKind::Dict: {
    llvm::SmallVector<std::pair<llvm::StringRef, Value>, 8> entries;
    uint32_t savedAttr = ctx.hintAttr;
    ctx.hintAttr = kNone;
    for (uint32_t i = e.begin, k = e.keyBegin; i < e.end; ++i, ++k) {
      Value v;
      Status st = eval(ctx, ctx.ast->exprLists[i], v);
      if (st != Status::Ok) {
        ctx.hintAttr = savedAttr;
        return st;
      }
      entries.emplace_back(strings_.str(ctx.ast->dictKeys[k]), v);
    }
    ctx.hintAttr = savedAttr;
    out = model_.arena().dict(entries);
    return checkValueSize(ctx, id, out);
  }
  case ExprKind::ListComprehension: return evalComprehension(ctx, e, id, out);
  case ExprKind::Name: return evalName(ctx, e, id, out);
  case ExprKind::AttrRef: return evalAttrRef(ctx, e, id, out, ctx.parent);
  case ExprKind::Call: return evalCall(ctx, e, id, out);
  case ExprKind::Constructor: return evalConstructor(ctx, e, id, out);
  case ExprKind::IndexLookup:
  case ExprKind::ShortIndexLookup: return evalIndexLookup(ctx, e, id, out);
  case ExprKind::MapLookup: return evalMapLookup(ctx, e, id, out);
  case ExprKind::Binary: return evalBinary(ctx, e, id, out);
  case ExprKind::In:
  case ExprKind::NotIn: return evalIn(ctx, e, id, out);
  case ExprKind::Not: {
    Value v;
    TRY(eval(ctx, e.a, v));
    if (v.isUnknown()) {
      out = v;
      return Status::Ok;
    }
    if (v.kind != ValueKind::Bool) return fail(ctx, id, DiagKind::NotOperandNotBoolean, msgValue(v));
    out = Value::boolean(!v.b);
    return Status::Ok;
  }
  case ExprKind::And:
  case ExprKind::Or: {
    const char* op = e.kind == ExprKind::And ? "and" : "or";
    Value l;
    TRY(eval(ctx, e.a, l));
    if (l.isUnknown()) {
      out = l;
      return Status::Ok;
    }
    if (l.kind != ValueKind::Bool) return fail(ctx, id, DiagKind::LeftOperandNotBoolean, msgValue(l), op);
    if ((e.kind == ExprKind::And && !l.b) || (e.kind == ExprKind::Or && l.b)) {
      out = l;
      return Status::Ok;
    }
    Value r;
    TRY(eval(ctx, e.b, r));
    if (r.isUnknown()) {
      out = r;
      return Status::Ok;
    }
    if (r.kind != ValueKind::Bool) return fail(ctx, id, DiagKind::RightOperandNotBoolean, msgValue(r), op);
    out = r;
    return Status::Ok;
  }
  case ExprKind::Conditional: {
    Value c;
    uint32_t savedAttr = ctx.hintAttr;
    ctx.hintAttr = kNone;
    Status st = eval(ctx, e.a, c);
    ctx.hintAttr = savedAttr;
    if (st != Status::Ok) return st;
    if (c.isUnknown()) {
      out = c;
      return Status::Ok;
    }
    if (c.kind != ValueKind::Bool) return fail(ctx, id, DiagKind::ConditionNotBoolean, msgValue(c));
    return eval(ctx, c.b ? e.b : e.c, out);
  }
  case ExprKind::IsDefined: return evalIsDefined(ctx, e, id, out);
  }
  return Status::Ok;
}

bool Evaluator::qualifiedVar(uint32_t file, llvm::StringRef name, SlotId& sid) {
  sid = SlotId{};
  auto [nsName, var] = name.rsplit("::");
  const ir::Namespace& cur = prog_.namespaces[prog_.files[file].ns];
  StringId nsId = strings_.lookup(nsName);
  auto it = nsId.valid() ? cur.visible.find(nsId.index) : cur.visible.end();
  if (it == cur.visible.end()) return false;
  uint32_t nsFile = prog_.namespaces[it->second].file;
  StringId varId = strings_.lookup(var);
  if (nsFile == UINT32_MAX || !varId.valid()) return true;
  sid = scopes_.ownVar(scopes_.ns(nsFile), varId);
  return true;
}

std::string Evaluator::namespaceNotFound(llvm::StringRef qualifiedName) {
  return diagText(DiagKind::NamespaceNotFound, qualifiedName.rsplit("::").first.str());
}

Status Evaluator::evalName(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  llvm::StringRef name = strings_.str(e.name);
  SlotId sid;
  if (isQualified(e.name)) {
    if (!qualifiedVar(ctx.file, name, sid))
      return failRead(ctx, id, ctx.parent, DiagKind::NamespaceNotFound, namespaceNotFound(name),
                      nearVariable(ctx, name));
    if (!sid.valid())
      return failRead(ctx, id, ctx.parent, DiagKind::VariableNotFound,
                      diagText(DiagKind::VariableNotFound, name.str()), nearVariable(ctx, name));
  } else {
    Value self;
    bool isSelf = false;
    sid = scopes_.lookupVar(ctx.scope, e.name, &self, &isSelf);
    if (isSelf) {
      out = self;
      return Status::Ok;
    }
    if (!sid.valid()) {
      if (scopes_[ctx.scope].isStatic) {
        Diagnostic d = diagAt(ctx.file, id.index, false,
                              makeDiag(DiagKind::ConstraintReferencesVariable, SourceRange{}, name.str()));
        d.locWithColumn = true;
        return failDiag(std::move(d));
      }
      return failRead(ctx, id, ctx.parent, DiagKind::VariableNotFound,
                      diagText(DiagKind::VariableNotFound, name.str()), nearVariable(ctx, name));
    }
  }
  const SlotMeta& m = slots_.meta(sid);
  if (m.kind == SlotKind::Optional) {
    if (const CompactVec<Value>& xs = slots_.items(sid); !xs.empty()) {
      out = xs[0];
      return Status::Ok;
    }
    if (m.state == kFrozen) {
      const ir::Attribute& a = slotAttr(sid);
      return failRead(ctx, id, ctx.parent, DiagKind::OptionalValue,
                      diagText(DiagKind::OptionalValue, prog_.entities[a.owner].fullName, name.str(),
                               describeInst(ownerOf(sid))));
    }
    return blockOn(ctx, sid);
  }
  if (!slotReady(sid)) return blockOn(ctx, sid);
  out = slotValue(sid);
  return Status::Ok;
}

Status Evaluator::readAttr(Ctx& ctx, InstanceId inst, StringId name, ExprId id, Value& out, bool* missing,
                           uint32_t consumer) {
  ir::EntityId ent = model_.entityOf(inst);
  int slot = prog_.slotOf(ent, name);
  if (slot < 0) {
    if (missing) {
      *missing = true;
      return Status::Ok;
    }
    return failAttrMissing(ctx, id.index, false, DiagKind::AttributeNotFound, ent, strings_.str(name));
  }
  SlotId sid = attrSid(inst, uint32_t(slot));
  const SlotMeta& m = slots_.meta(sid);
  if (m.kind == SlotKind::Optional) {
    if (const CompactVec<Value>& xs = slots_.items(sid); !xs.empty()) {
      out = xs[0];
      return Status::Ok;
    }
    if (m.state == kFrozen) {
      const ir::Attribute& a = slotAttr(inst, uint32_t(slot));
      return failRead(ctx, id, consumer, DiagKind::OptionalValue,
                      diagText(DiagKind::OptionalValue, prog_.entities[a.owner].fullName,
                               strings_.str(name).str(), describeInst(inst)));
    }
    return blockOn(ctx, sid);
  }
  if (!slotReady(sid)) return blockOn(ctx, sid);
  out = slotValue(sid);
  return Status::Ok;
}

Status Evaluator::evalAttrRef(Ctx& ctx, const Expr& e, ExprId id, Value& out, uint32_t consumer) {
  Value base;
  TRY(eval(ctx, e.a, base));
  if (base.kind != ValueKind::Instance) {
    // An unknown has no attributes: like any non-instance this is an error (spec 5.7), not an unknown.
    if (base.kind == ValueKind::List)
      return fail(ctx, id, DiagKind::AttributeOfList, strings_.str(e.name).str(), model_.display(base, true));
    // The reference names the expression that gave the value (`h.name`), then the value's str().
    return fail(ctx, id, DiagKind::AttributeOfValue, strings_.str(e.name).str(),
                frontend::reprExpr(*ctx.ast, e.a, strings_), typeName(base), model_.display(base, true));
  }
  return readAttr(ctx, base.instanceId(), e.name, id, out, nullptr, consumer);
}

Status Evaluator::evalIsDefined(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  const Expr& t = ctx.ast->exprs[e.a];
  SlotId sid;
  if (t.kind == ExprKind::AttrRef) {
    Value base;
    // The tested reference reads its base, not `is defined`: a failed read of `a.b` in `a.b.c is defined`
    // is reported in `a.b.c`, as for any attribute reference.
    uint32_t consumer = ctx.parent;
    ctx.parent = e.a.index;
    Status st = eval(ctx, t.a, base);
    ctx.parent = consumer;
    if (st != Status::Ok) return st;
    if (base.isUnknown()) {
      out = base;
      return Status::Ok;
    }
    if (base.kind != ValueKind::Instance)
      return fail(ctx, id, DiagKind::AttributeOfNonEntity, strings_.str(t.name).str(),
                  model_.display(base, true));
    ir::EntityId ent = model_.entityOf(base.instanceId());
    int slot = prog_.slotOf(ent, t.name);
    if (slot < 0)
      return failAttrMissing(ctx, id.index, false, DiagKind::AttributeNotFound, ent, strings_.str(t.name));
    sid = attrSid(base.instanceId(), uint32_t(slot));
  } else if (t.kind == ExprKind::Name) {
    Value self;
    bool isSelf = false;
    sid = scopes_.lookupVar(ctx.scope, t.name, &self, &isSelf);
    if (isSelf) {
      out = Value::boolean(true);
      return Status::Ok;
    }
    if (!sid.valid())
      return failVarMissing(ctx, id.index, false, DiagKind::VariableNotFound,
                            diagText(DiagKind::VariableNotFound, strings_.str(t.name).str()),
                            strings_.str(t.name));
  } else {
    // map lookup form is rewritten by the parser; anything else: evaluate and test
    Value v;
    TRY(eval(ctx, e.a, v));
    out = v.isUnknown() ? v : Value::boolean(!v.isNull());
    return Status::Ok;
  }
  const SlotMeta& m = slots_.meta(sid);
  auto definedValue = [&](const Value& v) -> Value {
    if (v.isUnknown()) return v;
    if (v.isNull()) return Value::boolean(false);
    if (v.kind == ValueKind::List) {
      if (v.l->size == 0) return Value::boolean(false);
      bool allUnknown = true;
      for (const Value& i : v.items()) allUnknown &= i.isUnknown();
      return allUnknown ? Value::unknown() : Value::boolean(true);
    }
    return Value::boolean(true);
  };
  if (m.kind == SlotKind::List || m.kind == SlotKind::Optional) {
    // Defined as soon as a known element arrives; once frozen, unknown when only unknowns were assigned.
    const CompactVec<Value>& xs = slots_.items(sid);
    if (std::any_of(xs.begin(), xs.end(), [](const Value& x) { return !x.isUnknown(); })) {
      out = Value::boolean(true);
      return Status::Ok;
    }
    if (m.state == kFrozen) {
      out = xs.empty() ? Value::boolean(false) : Value::unknown();
      return Status::Ok;
    }
    return blockOn(ctx, sid);
  }
  if (!slotReady(sid)) return blockOn(ctx, sid);
  out = definedValue(slotValue(sid));
  return Status::Ok;
}

Status Evaluator::evalMapLookup(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  Value d, k;
  TRY(eval(ctx, e.a, d));
  TRY(eval(ctx, e.b, k));
  if (d.isUnknown() || k.isUnknown()) {
    out = Value::unknown();
    return Status::Ok;
  }
  if (d.kind != ValueKind::Dict) return fail(ctx, id, DiagKind::DictLookupOnNonDict, model_.repr(d));
  if (k.kind != ValueKind::String) return fail(ctx, id, DiagKind::DictKeyNotString, model_.repr(k));
  const Value* v = d.d->find(k.str());
  if (!v) {
    std::string opts;
    for (uint32_t i = 0; i < d.d->size; ++i) opts += (i ? ", " : "") + d.d->entries[i].key->str().str();
    return fail(ctx, id, DiagKind::Key, k.str().str(), opts);
  }
  out = *v;
  return Status::Ok;
}

Status Evaluator::evalComprehension(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  const frontend::Ast& ast = *ctx.ast;
  uint32_t nLoops = e.loopEnd - e.loopBegin;
  llvm::SmallVector<Value, 16> result;
  bool unknownResult = false;
  ScopeId savedScope = ctx.scope;
  uint64_t savedKey = ctx.iterKey;
  uint32_t savedAttr = ctx.hintAttr;
  // Each loop level gets one scope whose loop variable is overwritten per iteration.
  std::function<Status(uint32_t)> level = [&](uint32_t depth) -> Status {
    const frontend::ComprehensionLoop& loop = ast.loops[e.loopBegin + depth];
    Value it;
    ctx.hintAttr = kNone;
    TRY(eval(ctx, loop.iterable, it));
    if (it.isUnknown()) {
      unknownResult = true;
      return Status::Ok;
    }
    if (it.kind != ValueKind::List)
      return fail(ctx, id,
                  scopes_[ctx.scope].isStatic ? DiagKind::StaticComprehensionOverNonList
                                              : DiagKind::ComprehensionOverNonList,
                  typeName(it));
    ScopeId scope = scopes_.newScope(ctx.scope, ctx.file, kNone, 0, 0, loop.var);
    SlotId var = scopes_.firstVar(scope);
    ScopeId outer = ctx.scope;
    uint64_t outerKey = ctx.iterKey;
    uint32_t n = 0;
    for (const Value& item : it.items()) {
      bindVar(var, item);
      ctx.scope = scope;
      ctx.iterKey = outerKey * 1000003u + (++n);
      Status st = Status::Ok;
      // An unknown element gives an unknown result element without running the value expression (an
      // inner loop is part of it); the guard still runs on it and may filter it out.
      if (depth + 1 < nLoops && item.isUnknown())
        result.push_back(Value::unknown());
      else if (depth + 1 < nLoops)
        st = level(depth + 1);
      else
        st = comprehensionElement(ctx, e, id, savedAttr, item.isUnknown(), result);
      ctx.scope = outer;
      ctx.iterKey = outerKey;
      if (st != Status::Ok) return st;
    }
    return Status::Ok;
  };
  Status st = level(0);
  ctx.scope = savedScope;
  ctx.iterKey = savedKey;
  ctx.hintAttr = savedAttr;
  if (st != Status::Ok) return st;
  out = unknownResult ? Value::unknown() : model_.arena().list(result);
  return Status::Ok;
}

Status Evaluator::comprehensionElement(Ctx& ctx, const Expr& e, ExprId id, uint32_t hintAttr,
                                       bool unknownItem, llvm::SmallVectorImpl<Value>& result) {
  const frontend::Ast& ast = *ctx.ast;
  bool keep = true, unknownGuard = false;
  for (uint32_t g = e.begin; g < e.end && keep; ++g) {
    Value gv;
    TRY(eval(ctx, ast.exprLists[g], gv));
    if (gv.isUnknown()) {
      unknownGuard = true;
      continue;
    }
    if (gv.kind != ValueKind::Bool)
      return fail(ctx, id, DiagKind::GuardNotBoolean, model_.display(gv, true)); // on the comprehension
    keep = gv.b;
  }
  if (!keep) return Status::Ok;
  if (unknownGuard || unknownItem) {
    result.push_back(Value::unknown());
    return Status::Ok;
  }
  Value v;
  uint32_t saved = ctx.hintAttr;
  ctx.hintAttr = hintAttr;
  Status st = eval(ctx, e.a, v);
  ctx.hintAttr = saved;
  if (st != Status::Ok) return st;
  if (v.kind == ValueKind::List)
    result.append(v.items().begin(), v.items().end());
  else
    result.push_back(v);
  return Status::Ok;
}

// ---------------------------------------------------------------- calls

Status Evaluator::castValue(Ctx& ctx, ir::BaseType to, const Value& v, ExprId id, Value& out) {
  if (v.isUnknown()) {
    out = v;
    return Status::Ok;
  }
  auto failCast = [&](const char* tn) {
    // The reference formats the value with str(): its null object prints as `null`, not Python's None.
    std::string shown = v.kind == ValueKind::Null ? std::string("null") : model_.display(v, true);
    return fail(ctx, id, DiagKind::CastFailed, shown, tn);
  };
  switch (to) {
  case ir::BaseType::String:
    if (v.kind == ValueKind::Bool)
      out = model_.arena().str(v.b ? "true" : "false");
    else
      out = model_.arena().str(model_.display(v, true));
    return Status::Ok;
  case ir::BaseType::Int:
    if (v.isInt()) {
      out = v;
      return Status::Ok;
    }
    if (v.kind == ValueKind::Bool) {
      out = Value::integer(v.b);
      return Status::Ok;
    }
    if (v.kind == ValueKind::Float) {
      if (!floatToIntValue(model_.arena(), v.f, out)) return failCast("int");
      return Status::Ok;
    }
    if (v.kind == ValueKind::String) {
      llvm::StringRef s = v.str().trim();
      std::string clean, err;
      for (char c : s)
        if (c != '_') clean += c;
      if (!parseInt(model_.arena(), clean, 10, out, err)) {
        if (!err.empty()) return fail(ctx, id, DiagKind::IntCastLimit, err);
        return failCast("int");
      }
      return Status::Ok;
    }
    return failCast("int");
  case ir::BaseType::Float:
  case ir::BaseType::Number:
    if (to == ir::BaseType::Number && v.isInt()) {
      out = v;
      return Status::Ok;
    }
    if (v.kind == ValueKind::Float) {
      out = v;
      return Status::Ok;
    }
    if (v.kind == ValueKind::Int) {
      out = Value::real(double(v.i));
      return Status::Ok;
    }
    if (v.kind == ValueKind::BigInt) {
      double d;
      if (!intToDouble(v, d)) return fail(ctx, id, DiagKind::IntCastToFloatOverflow);
      out = Value::real(d);
      return Status::Ok;
    }
    if (v.kind == ValueKind::Bool) {
      out = Value::real(v.b ? 1.0 : 0.0);
      return Status::Ok;
    }
    if (v.kind == ValueKind::String) {
      std::string s = v.str().trim().str();
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size())
        return failCast(to == ir::BaseType::Float ? "float" : "number");
      out = Value::real(d);
      return Status::Ok;
    }
    return failCast(to == ir::BaseType::Float ? "float" : "number");
  case ir::BaseType::Bool:
    switch (v.kind) {
    case ValueKind::Null: out = Value::boolean(false); break;
    case ValueKind::Bool: out = v; break;
    case ValueKind::Int: out = Value::boolean(v.i != 0); break;
    case ValueKind::BigInt: out = Value::boolean(true); break;
    case ValueKind::Float: out = Value::boolean(v.f != 0); break;
    case ValueKind::String: out = Value::boolean(v.s->size != 0); break;
    case ValueKind::List: out = Value::boolean(v.l->size != 0); break;
    case ValueKind::Dict: out = Value::boolean(v.d->size != 0); break;
    default: out = Value::boolean(true); break;
    }
    return Status::Ok;
  default: return fail(ctx, id, DiagKind::NotCallableType);
  }
}

static bool pluginTypeOk(const ir::Program& prog, const Model& model, const ir::Type& t, const Value& v) {
  if (v.isUnknown()) return true;
  if (t.nullable && v.isNull()) return true;
  if (t.isList) {
    if (v.kind != ValueKind::List) return false;
    ir::Type el = t;
    el.isList = el.nullable = false;
    for (const Value& i : v.items())
      if (!pluginTypeOk(prog, model, el, i)) return false;
    return true;
  }
  switch (t.base) {
  case ir::BaseType::String: return v.kind == ValueKind::String;
  case ir::BaseType::Int: return v.isInt() || v.kind == ValueKind::Bool;
  case ir::BaseType::Float: return v.kind == ValueKind::Float || v.isInt();
  case ir::BaseType::Number: return v.isNumber();
  case ir::BaseType::Bool: return v.kind == ValueKind::Bool;
  case ir::BaseType::List: return v.kind == ValueKind::List;
  case ir::BaseType::Dict: return v.kind == ValueKind::Dict;
  case ir::BaseType::Any: return true;
  case ir::BaseType::Typedef: return true;
  case ir::BaseType::Entity:
    return v.kind == ValueKind::Instance && prog.isSubtype(model.entityOf(v.instanceId()), t.entity);
  }
  return true;
}

static std::string pluginTypeText(const ir::Program& prog, const ir::Type& t) {
  static const char* names[] = {"string", "int", "float", "number", "bool", "list", "dict", "any"};
  std::string s;
  if (t.base == ir::BaseType::Entity)
    s = prog.entities[t.entity].fullName;
  else if (t.base == ir::BaseType::Typedef)
    s = prog.typedefs[t.typedefId].fullName;
  else
    s = names[int(t.base)];
  if (t.isList) s += "[]";
  if (t.nullable) s += "?";
  return s;
}

Status Evaluator::evalCall(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  const ir::Resolved r = prog_.files[ctx.file].resolved.size() > id.index
                             ? prog_.files[ctx.file].resolved[id.index]
                             : ir::Resolved{};
  if (r.kind == ir::Resolved::Cast) {
    uint32_t n = e.argEnd - e.argBegin;
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i)
      if (ctx.ast->args[i].kind != frontend::ArgKind::Positional)
        return fail(ctx, id, DiagKind::CastKeywordArgument);
    if (n != 1) {
      // The reference lists the argument values, each as repr() writes it.
      std::string list;
      for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
        Value a;
        TRY(eval(ctx, ctx.ast->args[i].value, a));
        list += (i == e.argBegin ? "" : ",") + model_.repr(a);
      }
      return fail(ctx, id, DiagKind::CastArity, list);
    }
    Value v;
    TRY(eval(ctx, ctx.ast->args[e.argBegin].value, v));
    return castValue(ctx, ir::BaseType(r.index), v, id, out);
  }
  if (r.kind != ir::Resolved::Plugin) return failTypeNotFound(ctx, e, id);
  if (memoGet(ctx, id.index, out)) return Status::Ok;
  const ir::Plugin& p = prog_.plugins[ir::PluginId{r.index}];
  // Evaluate every argument fully.
  llvm::SmallVector<Value, 8> positional;
  llvm::SmallVector<std::pair<llvm::StringRef, Value>, 8> keywords;
  uint32_t savedAttr = ctx.hintAttr;
  ctx.hintAttr = kNone;
  for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
    const frontend::Arg& a = ctx.ast->args[i];
    Value v;
    Status st = eval(ctx, a.value, v);
    if (st != Status::Ok) {
      ctx.hintAttr = savedAttr;
      return st;
    }
    if (a.kind == frontend::ArgKind::Positional)
      positional.push_back(v);
    else if (a.kind == frontend::ArgKind::Keyword) {
      for (auto& [k, _] : keywords)
        if (k == strings_.str(a.name)) {
          ctx.hintAttr = savedAttr;
          return fail(ctx, id, DiagKind::PluginKeywordRepeated, strings_.str(a.name).str(), p.fullName);
        }
      keywords.emplace_back(strings_.str(a.name), v);
    } else {
      if (v.kind != ValueKind::Dict) {
        ctx.hintAttr = savedAttr;
        // Raised while the call binds its arguments: the reference reports it on the call.
        return fail(ctx, id, DiagKind::DoubleStarOnNonDict);
      }
      for (uint32_t k = 0; k < v.d->size; ++k)
        keywords.emplace_back(v.d->entries[k].key->str(), v.d->entries[k].value);
    }
  }
  ctx.hintAttr = savedAttr;
  // Bind to the declared parameters.
  std::vector<Value> bound(p.params.size(), Value::null());
  std::vector<uint8_t> have(p.params.size(), 0);
  size_t pi = 0;
  int varArgs = -1, kwArgs = -1;
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (p.params[i].isVarArgs) varArgs = int(i);
    if (p.params[i].isKwArgs) kwArgs = int(i);
  }
  llvm::SmallVector<Value, 4> extra;
  for (const Value& v : positional) {
    while (pi < p.params.size() &&
           (p.params[pi].isVarArgs || p.params[pi].isKwArgs || p.params[pi].keywordOnly)) {
      if (p.params[pi].isVarArgs) break;
      ++pi;
    }
    if (pi < p.params.size() && !p.params[pi].isVarArgs && !p.params[pi].isKwArgs &&
        !p.params[pi].keywordOnly) {
      bound[pi] = v;
      have[pi] = 1;
      ++pi;
    } else if (varArgs >= 0) {
      extra.push_back(v);
    } else {
      size_t takes = size_t(llvm::count_if(
          p.params, [](const ir::PluginParam& q) { return !q.isVarArgs && !q.isKwArgs && !q.keywordOnly; }));
      return fail(ctx, id, DiagKind::PluginTooManyArguments, p.fullName, takes, positional.size());
    }
  }
  if (varArgs >= 0) {
    bound[size_t(varArgs)] = model_.arena().list(extra);
    have[size_t(varArgs)] = 1;
  }
  // The reference's order: missing positional, then missing keyword-only parameters, then the type of each
  // positional argument, then each keyword argument in call order (unknown, given twice, type).
  for (bool kwOnly : {false, true}) {
    llvm::SmallVector<std::string, 4> missing;
    for (size_t i = 0; i < p.params.size(); ++i) {
      const ir::PluginParam& q = p.params[i];
      if (have[i] || q.hasDefault || q.isVarArgs || q.isKwArgs || q.keywordOnly != kwOnly) continue;
      llvm::StringRef name = strings_.str(q.name);
      if (llvm::none_of(keywords, [&](const auto& kv) { return kv.first == name; }))
        missing.push_back(name.str());
    }
    const char* sort = kwOnly ? "keyword-only" : "positional";
    if (missing.size() == 1)
      return fail(ctx, id, DiagKind::PluginMissingArgument, p.fullName, sort, missing[0]);
    if (missing.size() > 1) {
      std::string names;
      for (size_t k = 0; k < missing.size(); ++k)
        names += (k == 0 ? "'" : k + 1 == missing.size() ? " and '" : ", '") + missing[k] + "'";
      return fail(ctx, id, DiagKind::PluginMissingArguments, p.fullName, missing.size(), sort, names);
    }
  }
  auto typeOk = [&](size_t i) {
    return pluginTypeOk(prog_, model_, p.params[i].type, bound[i])
               ? Status::Ok
               : fail(ctx, id, DiagKind::PluginType, model_.repr(bound[i]),
                      strings_.str(p.params[i].name).str(), p.fullName,
                      pluginTypeText(prog_, p.params[i].type));
  };
  for (size_t i = 0; i < p.params.size(); ++i)
    if (have[i] && !p.params[i].isVarArgs && !p.params[i].isKwArgs) TRY(typeOk(i));
  llvm::SmallVector<std::pair<llvm::StringRef, Value>, 4> extraKw;
  for (auto& [k, v] : keywords) {
    bool placed = false;
    for (size_t i = 0; i < p.params.size(); ++i)
      if (strings_.str(p.params[i].name) == k && !p.params[i].isVarArgs && !p.params[i].isKwArgs) {
        if (have[i]) return fail(ctx, id, DiagKind::PluginArgumentTwice, p.fullName, k.str());
        bound[i] = v;
        have[i] = 1;
        placed = true;
        TRY(typeOk(i));
      }
    if (!placed) {
      if (kwArgs < 0) return fail(ctx, id, DiagKind::PluginUnexpectedKeyword, p.fullName, k.str());
      extraKw.emplace_back(k, v);
    }
  }
  if (kwArgs >= 0) {
    bound[size_t(kwArgs)] = model_.arena().dict(extraKw);
    have[size_t(kwArgs)] = 1;
  }
  // Unknown arguments short-circuit the call unless the plugin accepts them.
  if (!p.allowUnknown)
    for (size_t i = 0; i < bound.size(); ++i)
      if (bound[i].isUnknown()) {
        out = Value::unknown();
        memoPut(ctx, id.index, out);
        return Status::Ok;
      }
  const PluginFn* fn = pluginFns_[r.index];
  if (!fn) return fail(ctx, id, DiagKind::PluginNotNative, p.fullName);
  EvalPluginContext pctx(*this, ctx);
  pctx.given = &have;
  PluginResult res = (*fn)(pctx, bound);
  if (res.kind == PluginResult::Retry) {
    if (!pctx.blockedOn.valid()) return fail(ctx, id, DiagKind::PluginRetryWithoutReason, p.fullName);
    return blockOn(ctx, pctx.blockedOn);
  }
  if (res.kind == PluginResult::Error) {
    if (res.errorKind == DiagKind::External || res.errorKind == DiagKind::ExplicitPlugin ||
        res.errorKind == DiagKind::WrappingRuntime) {
      // ExplicitPlugin's text is the plugin's message; External and WrappingRuntime name the plugin and
      // show the plugin's text as the cause.
      Diagnostic d = diagAt(ctx.file, id.index, false,
                            makeDiag(res.errorKind, SourceRange{},
                                     res.errorKind == DiagKind::ExplicitPlugin ? res.message : p.fullName));
      if (res.errorKind != DiagKind::ExplicitPlugin)
        d.causedBy(makeDiag(DiagKind::NoteText, SourceRange{}, res.message));
      return failDiag(std::move(d));
    }
    Diagnostic d = diagAt(ctx.file, id.index, false, res.errorKind, res.message);
    if (pctx.typedefFailure && pctx.typedefFailure->message == res.cause) // at the typedef, as the reference
      d.causedBy(*pctx.typedefFailure);
    else if (!res.cause.empty())
      d.causedBy(diagAt(ctx.file, id.index, false, DiagKind::NoteText, res.cause));
    return failDiag(std::move(d));
  }
  out = res.value;
  memoPut(ctx, id.index, out);
  return Status::Ok;
}

} // namespace inm::runtime

// Value validation of the evaluation engine: a value against an attribute's declared type (primitive, list,
// dict of literals, entity with subtyping, typedef with its constraint evaluated in a static scope).
// Invariant: nothing is reported here; failures are returned as diagnostics for the caller to place or wrap
// (assignAttr wraps them in the reference's AttributeException).
#include "Evaluator.h"

namespace inm::runtime {

static const char* kTypeNames[] = {"string", "int", "float", "number", "bool", "list", "dict", "any"};

static std::string typeText(const ir::Program& prog, const ir::Type& t) {
  if (t.base == ir::BaseType::Typedef)
    return prog.typedefs[t.typedefId].name.valid() ? prog.strings->str(prog.typedefs[t.typedefId].name).str()
                                                   : "?";
  if (t.base == ir::BaseType::Entity) return prog.entities[t.entity].fullName;
  return kTypeNames[int(t.base)];
}

DiagOr<void> Evaluator::checkTypedef(ir::TypedefId td, const Value& v) {
  const ir::Typedef& t = prog_.typedefs[td];
  ir::Type base;
  base.base = t.base;
  INM_TRY_DIAG(validate(base, v, nullptr));
  if (!t.constraint.valid()) return {};
  uint32_t f = t.constraint.file;
  ScopeId scope = scopes_.staticScope(f, v);
  Ctx ctx;
  ctx.file = f;
  ctx.ast = &prog_.ast(f);
  ctx.scope = scope;
  Value r;
  // An error in the constraint itself is reported (or captured) by eval; blocked, it fails without a message.
  if (eval(ctx, t.constraint.expr, r) != Status::Ok)
    return makeDiag(DiagKind::ConstraintNotEvaluated, SourceRange{});
  if (r.isUnknown()) return {};
  bool truthy = r.kind == ValueKind::Bool
                    ? r.b
                    : !(r.isNull() || (r.kind == ValueKind::Int && r.i == 0)); // a BigInt is never 0
  if (truthy) return {};
  // Placed at the typedef (an attribute error shows it as its cause as is); other callers keep the message.
  Diagnostic d = makeDiag(DiagKind::ConstraintMismatch, t.range, model_.repr(v),
                          frontend::prettyExpr(*ctx.ast, t.constraint.expr, strings_));
  d.reportedIn = t.fullName;
  d.locWithColumn = true;
  return d;
}

DiagOr<void> Evaluator::validate(const ir::Type& t, const Value& v, Ctx* ctx) {
  if (v.isUnknown()) return {};
  if (t.nullable && v.isNull()) return {};
  auto bad = [&](const Value& x, const std::string& expected) -> DiagOr<void> {
    return makeDiag(DiagKind::InvalidAttributeValue, SourceRange{}, msgValue(x), expected);
  };
  if (t.isList) {
    if (v.kind != ValueKind::List) return bad(v, typeText(prog_, t) + "[]" + (t.nullable ? "?" : ""));
    ir::Type elem = t;
    elem.isList = false;
    elem.nullable = false;
    for (const Value& item : v.items()) INM_TRY_DIAG(validate(elem, item, ctx));
    return {};
  }
  auto isLiteral = [&](const Value& x, auto& self) -> bool {
    switch (x.kind) {
    case ValueKind::Instance: return false;
    case ValueKind::List:
      for (const Value& i : x.items())
        if (!self(i, self)) return false;
      return true;
    case ValueKind::Dict:
      for (uint32_t i = 0; i < x.d->size; ++i)
        if (!self(x.d->entries[i].value, self)) return false;
      return true;
    default: return true;
    }
  };
  auto expect = [&](bool ok, const char* expected) { return ok ? DiagOr<void>() : bad(v, expected); };
  switch (t.base) {
  case ir::BaseType::String: return expect(v.kind == ValueKind::String, "string");
  case ir::BaseType::Int: return expect(v.isInt() || v.kind == ValueKind::Bool, "int");
  case ir::BaseType::Float: return expect(v.kind == ValueKind::Float, "float");
  case ir::BaseType::Number: return expect(v.isNumber(), "number");
  case ir::BaseType::Bool: return expect(v.kind == ValueKind::Bool, "bool");
  case ir::BaseType::List:
    if (v.kind != ValueKind::List) return bad(v, "list");
    for (const Value& i : v.items())
      if (!isLiteral(i, isLiteral)) return bad(i, "Literal");
    return {};
  case ir::BaseType::Dict:
    if (v.kind != ValueKind::Dict) return bad(v, "dict");
    if (!isLiteral(v, isLiteral)) return bad(v, "Literal");
    return {};
  case ir::BaseType::Any: return {};
  case ir::BaseType::Typedef: return checkTypedef(t.typedefId, v);
  case ir::BaseType::Entity:
    if (v.kind != ValueKind::Instance) {
      return makeDiag(DiagKind::InvalidRelationValueType, SourceRange{}, model_.display(v, true),
                      prog_.entities[t.entity].fullName);
    }
    if (!prog_.isSubtype(model_.entityOf(v.instanceId()), t.entity)) {
      return makeDiag(DiagKind::InvalidRelationClass, SourceRange{}, describeInst(v.instanceId()),
                      prog_.entities[t.entity].fullName);
    }
    return {};
  }
  return {};
}

} // namespace inm::runtime

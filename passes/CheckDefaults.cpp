// Pass 2: static validation of attribute defaults against their declared primitive types (language.md
// §4.3: defaults are checked before execution, even for entities never instantiated). `int t = 'str'`
// → TypingException "Invalid value 'str', expected int" reported in "int t = 'str'" at the attribute
// name. Typedef constraints are left to the runtime (it owns the evaluator).
// Invariant: only literal defaults are judged; anything not decidable statically is accepted.
#include "Passes.h"
#include "frontend/Frontend.h"
#include "support/PyRepr.h"

namespace inm::passes {

using namespace ir;
using frontend::ExprKind;

namespace {

std::string valueText(const frontend::Ast& ast, frontend::ExprId id, const StringTable& strings,
                      bool nested) {
  const frontend::Expr& e = ast.exprs[id];
  switch (e.kind) {
  case ExprKind::Int: return std::to_string(e.intValue);
  case ExprKind::Float: return pyFloatRepr(e.floatValue);
  case ExprKind::Bool: return e.intValue ? "True" : "False";
  case ExprKind::Null: return "null";
  case ExprKind::String:
  case ExprKind::StringFormat:
  case ExprKind::FString: return nested ? "'" + strings.str(e.name).str() + "'" : strings.str(e.name).str();
  case ExprKind::List: {
    std::string s = "[";
    for (uint32_t i = e.begin; i < e.end; ++i)
      s += (i > e.begin ? ", " : "") + valueText(ast, ast.exprLists[i], strings, true);
    return s + "]";
  }
  case ExprKind::Dict: {
    std::string s = "{";
    for (uint32_t i = 0; i < e.end - e.begin; ++i)
      s += (i ? ", '" : "'") + strings.str(ast.dictKeys[e.keyBegin + i]).str() +
           "': " + valueText(ast, ast.exprLists[e.begin + i], strings, true);
    return s + "}";
  }
  default: return frontend::reprExpr(ast, id, strings);
  }
}

bool accepts(BaseType base, ExprKind k) {
  switch (k) {
  case ExprKind::Int: return base == BaseType::Int || base == BaseType::Number;
  case ExprKind::Bool: return base == BaseType::Int || base == BaseType::Number || base == BaseType::Bool;
  case ExprKind::Float: return base == BaseType::Float || base == BaseType::Number;
  case ExprKind::String:
  case ExprKind::StringFormat:
  case ExprKind::FString: return base == BaseType::String;
  case ExprKind::List: return base == BaseType::List;
  case ExprKind::Dict: return base == BaseType::Dict;
  default: return true; // not a literal (or `any`): cannot judge statically
  }
}

struct DefaultChecker {
  const Program& p;
  const frontend::Ast& ast;

  /// Returns the offending expression (invalid if the value is fine) and the expected type text.
  frontend::ExprId check(frontend::ExprId id, const Type& t, bool asElement, std::string& expected) {
    const frontend::Expr& e = ast.exprs[id];
    static const char* kNames[] = {"string", "int", "float", "number", "bool", "list", "dict", "any"};
    if (e.kind == ExprKind::Null) {
      if (t.nullable && !asElement) return {};
      expected = kNames[int(t.base)];
      if (t.isList && !asElement) expected += "[]";
      return id;
    }
    if (t.isList && !asElement) {
      if (e.kind != ExprKind::List) {
        if (accepts(BaseType::Any, e.kind)) return {}; // not a literal
        expected = std::string(kNames[int(t.base)]) + "[]";
        return id;
      }
      for (uint32_t i = e.begin; i < e.end; ++i) {
        frontend::ExprId bad = check(ast.exprLists[i], t, true, expected);
        if (bad.valid()) return bad;
      }
      return {};
    }
    if (accepts(t.base, e.kind)) return {};
    expected = kNames[int(t.base)];
    return id;
  }
};

} // namespace

void checkDefaults(Program& p, DiagnosticEngine& diags) {
  const StringTable& strings = *p.strings;
  for (uint32_t i = 0; i < p.attrs.size(); ++i) {
    const Attribute& a = p.attrs[AttrId{i}];
    if (a.isRelation || !a.defaultValue.valid()) continue;
    if (a.type.base == BaseType::Typedef || a.type.base == BaseType::Any || a.type.base == BaseType::Entity)
      continue;
    const frontend::Ast& ast = p.ast(a.defaultValue.file);
    DefaultChecker c{p, ast};
    std::string expected;
    frontend::ExprId bad = c.check(a.defaultValue.expr, a.type, false, expected);
    if (!bad.valid()) continue;
    Diagnostic& d =
        diags.error(DiagKind::InvalidDefault, a.range, valueText(ast, bad, strings, false), expected);
    d.reportedIn = typeName(p, a.type) + " " + strings.str(a.name).str() + " = " +
                   frontend::reprDefault(ast, a.defaultValue.expr, strings);
    d.locWithColumn = true;
  }
}

} // namespace inm::passes

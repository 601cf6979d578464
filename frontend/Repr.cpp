// Renderings of the Ast: the reference compiler's short forms of expressions and statements used in
// "reported in …" messages (reprExpr/reprStmt), and the deterministic tree dump of `--dump-ast`.
// Invariant: pure functions of the Ast; the dump shows every node with its kind, key fields and line:col.
#include "frontend/Frontend.h"

#include "FastParser.h"
#include "support/PyRepr.h"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

namespace inm::frontend {

namespace {

const char* opText(BinaryOp op) {
  switch (op) {
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Pow: return "**";
  }
  llvm_unreachable("every BinaryOp is handled above");
}

} // namespace

// A list literal whose elements are all constants, rendered as Python renders the list value (`[1, 'a']`), as
// the reference prints such lists when they are operands of an operator; empty when the list is not constant.
static std::string constantListRepr(const Ast& ast, ExprId id, const StringTable& st) {
  const Expr& e = ast.exprs[id];
  if (e.kind != ExprKind::List) return "";
  std::string s = "[";
  for (uint32_t i = e.begin; i < e.end; ++i) {
    ExprId el = ast.exprLists[i];
    const Expr& x = ast.exprs[el];
    if (i != e.begin) s += ", ";
    if (x.kind == ExprKind::List) {
      std::string inner = constantListRepr(ast, el, st);
      if (inner.empty()) return "";
      s += inner;
    } else if (x.kind == ExprKind::Int || x.kind == ExprKind::Float || x.kind == ExprKind::String ||
               x.kind == ExprKind::Bool) {
      s += reprExpr(ast, el, st);
    } else {
      return "";
    }
  }
  return s + "]";
}

std::string reprExpr(const Ast& ast, ExprId id, const StringTable& st) {
  if (!id.valid()) return "";
  const Expr& e = ast.exprs[id];
  auto r = [&](ExprId x) { return reprExpr(ast, x, st); };
  // Operands of operators: constant list literals print as list values.
  auto o = [&](ExprId x) {
    if (x.valid()) {
      std::string lit = constantListRepr(ast, x, st);
      if (!lit.empty()) return lit;
    }
    return reprExpr(ast, x, st);
  };
  auto argList = [&](bool tuples) {
    std::string s;
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
      const Arg& a = ast.args[i];
      // The reference keeps call keywords in a mapping: a repeated keyword shows once, at its first place,
      // with its last value.
      const Arg* shown = &a;
      if (!tuples && a.kind == ArgKind::Keyword) {
        bool seenBefore = false;
        for (uint32_t j = e.argBegin; j < i && !seenBefore; ++j)
          seenBefore = ast.args[j].kind == ArgKind::Keyword && ast.args[j].name == a.name;
        if (seenBefore) continue;
        for (uint32_t j = i + 1; j < e.argEnd; ++j)
          if (ast.args[j].kind == ArgKind::Keyword && ast.args[j].name == a.name) shown = &ast.args[j];
      }
      if (tuples) {
        if (i != e.argBegin) s += ", ";
        if (a.kind == ArgKind::Spread) s += "**" + r(a.value);
        else s += fmt::format("('{}', {})", st.str(a.name).str(), r(a.value));
        continue;
      }
      if (!s.empty()) s += ",";
      if (a.kind == ArgKind::Keyword) s += st.str(a.name).str() + "=" + r(shown->value);
      else if (a.kind == ArgKind::Spread) s += "**" + r(a.value);
      else s += r(a.value);
    }
    return s;
  };
  switch (e.kind) {
  case ExprKind::Int: return e.bigInt ? st.str(e.name).str() : std::to_string(e.intValue);
  case ExprKind::Float: return pyFloatRepr(e.floatValue);
  case ExprKind::String: return pyStrRepr(st.str(e.name));
  case ExprKind::Bool: return e.intValue ? "True" : "False";
  case ExprKind::Null: return "null";
  case ExprKind::Regex: return "/" + st.str(e.name).str() + "/";
  case ExprKind::StringFormat: return "Format(" + pyStrRepr(st.str(e.name)) + ")";
  case ExprKind::FString: return pyStrRepr(st.str(e.name));
  case ExprKind::List: return "List()";
  case ExprKind::Dict: return "Dict()";
  case ExprKind::ListComprehension: {
    std::string s = "[" + r(e.a);
    for (uint32_t i = e.loopBegin; i < e.loopEnd; ++i)
      s += " for " + st.str(ast.loops[i].var).str() + " in " + r(ast.loops[i].iterable);
    for (uint32_t i = e.begin; i < e.end; ++i) s += " if " + r(ast.exprLists[i]);
    return s + "]";
  }
  case ExprKind::Name: return st.str(e.name).str();
  case ExprKind::AttrRef: return r(e.a) + "." + st.str(e.name).str();
  case ExprKind::Call: return st.str(e.name).str() + "(" + argList(false) + ")";
  case ExprKind::Constructor: return "Construct(" + st.str(e.name).str() + ")";
  case ExprKind::IndexLookup: return st.str(e.name).str() + "[[" + argList(true) + "]]";
  case ExprKind::ShortIndexLookup: return r(e.a) + "." + st.str(e.name).str() + "[[" + argList(true) + "]]";
  case ExprKind::MapLookup: return r(e.a) + "[" + r(e.b) + "]";
  case ExprKind::Binary: return "(" + o(e.a) + " " + opText(e.op) + " " + o(e.b) + ")";
  case ExprKind::Not: return "(not " + o(e.a) + ")";
  case ExprKind::And: return "(" + o(e.a) + " and " + o(e.b) + ")";
  case ExprKind::Or: return "(" + o(e.a) + " or " + o(e.b) + ")";
  case ExprKind::In: return "(" + o(e.a) + " in " + o(e.b) + ")";
  case ExprKind::NotIn: return "(" + o(e.a) + " not in " + o(e.b) + ")";
  case ExprKind::Conditional: return "(" + r(e.a) + " ? " + r(e.b) + " : " + r(e.c) + ")";
  case ExprKind::IsDefined: return r(e.a) + " is defined";
  }
  llvm_unreachable("every ExprKind is handled above");
}

std::string reprStmt(const Ast& ast, StmtId id, const StringTable& st) {
  const Stmt& s = ast.stmts[id];
  switch (s.kind) {
  case StmtKind::Assign:
    // The reference prints `a.b += c` as `a.b = c` in "reported in" texts.
    return reprExpr(ast, s.target, st) + " = " + reprExpr(ast, s.value, st);
  case StmtKind::For: return "For(" + st.str(s.var).str() + ")";
  case StmtKind::If: return "If";
  case StmtKind::ExprStmt: return reprExpr(ast, s.value, st);
  }
  llvm_unreachable("every StmtKind is handled above");
}

namespace {

class Dumper {
 public:
  Dumper(const Ast& ast, const StringTable& st, llvm::raw_ostream& os) : ast_(ast), st_(st), os_(os) {}

  void line(int depth, const std::string& text, SourceRange r) {
    os_.indent(unsigned(depth * 2)) << text << " @" << r.line << ":" << r.col << "\n";
  }

  void expr(ExprId id, int d, const std::string& label = "") {
    if (!id.valid()) return;
    const Expr& e = ast_.exprs[id];
    std::string pre = label.empty() ? "" : label + ": ";
    switch (e.kind) {
    case ExprKind::Int:
      line(d, pre + "Int " + (e.bigInt ? st_.str(e.name).str() + " (big)" : std::to_string(e.intValue)), e.range);
      return;
    case ExprKind::Float: line(d, pre + "Float " + pyFloatRepr(e.floatValue), e.range); return;
    case ExprKind::String: line(d, pre + "String " + pyStrRepr(st_.str(e.name)), e.range); return;
    case ExprKind::Bool: line(d, pre + (e.intValue ? "Bool true" : "Bool false"), e.range); return;
    case ExprKind::Null: line(d, pre + "Null", e.range); return;
    case ExprKind::Regex: line(d, pre + "Regex /" + st_.str(e.name).str() + "/", e.range); return;
    case ExprKind::StringFormat:
    case ExprKind::FString:
      line(d, pre + (e.kind == ExprKind::FString ? "FString " : "StringFormat ") + pyStrRepr(st_.str(e.name)), e.range);
      parts(e.partBegin, e.partEnd, d + 1);
      return;
    case ExprKind::List:
      line(d, pre + "List", e.range);
      for (uint32_t i = e.begin; i < e.end; ++i) expr(ast_.exprLists[i], d + 1);
      return;
    case ExprKind::Dict:
      line(d, pre + "Dict", e.range);
      for (uint32_t i = e.begin, k = e.keyBegin; i < e.end; ++i, ++k) expr(ast_.exprLists[i], d + 1, pyStrRepr(st_.str(ast_.dictKeys[k])));
      return;
    case ExprKind::ListComprehension:
      line(d, pre + "ListComprehension", e.range);
      expr(e.a, d + 1, "element");
      for (uint32_t i = e.loopBegin; i < e.loopEnd; ++i) expr(ast_.loops[i].iterable, d + 1, "for " + st_.str(ast_.loops[i].var).str() + " in");
      for (uint32_t i = e.begin; i < e.end; ++i) expr(ast_.exprLists[i], d + 1, "if");
      return;
    case ExprKind::Name: line(d, pre + "Name " + st_.str(e.name).str(), e.range); return;
    case ExprKind::AttrRef:
      line(d, pre + "AttrRef ." + st_.str(e.name).str(), e.range);
      expr(e.a, d + 1);
      return;
    case ExprKind::Call:
    case ExprKind::Constructor:
    case ExprKind::IndexLookup:
    case ExprKind::ShortIndexLookup: {
      const char* k = e.kind == ExprKind::Call ? "Call " : e.kind == ExprKind::Constructor ? "Constructor "
                      : e.kind == ExprKind::IndexLookup ? "IndexLookup " : "ShortIndexLookup .";
      line(d, pre + k + st_.str(e.name).str(), e.range);
      if (e.a.valid()) expr(e.a, d + 1, "of");
      for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
        const Arg& a = ast_.args[i];
        std::string lab = a.kind == ArgKind::Keyword ? st_.str(a.name).str() + "=" : a.kind == ArgKind::Spread ? "**" : "arg";
        expr(a.value, d + 1, lab);
      }
      return;
    }
    case ExprKind::MapLookup:
      line(d, pre + "MapLookup", e.range);
      expr(e.a, d + 1, "map");
      expr(e.b, d + 1, "key");
      return;
    case ExprKind::Binary:
      line(d, pre + std::string("Binary ") + opText(e.op), e.range);
      expr(e.a, d + 1);
      expr(e.b, d + 1);
      return;
    case ExprKind::Not: line(d, pre + "Not", e.range); expr(e.a, d + 1); return;
    case ExprKind::And: line(d, pre + "And", e.range); expr(e.a, d + 1); expr(e.b, d + 1); return;
    case ExprKind::Or: line(d, pre + "Or", e.range); expr(e.a, d + 1); expr(e.b, d + 1); return;
    case ExprKind::In: line(d, pre + "In", e.range); expr(e.a, d + 1); expr(e.b, d + 1); return;
    case ExprKind::NotIn: line(d, pre + "NotIn", e.range); expr(e.a, d + 1); expr(e.b, d + 1); return;
    case ExprKind::Conditional:
      line(d, pre + "Conditional", e.range);
      expr(e.a, d + 1, "cond");
      expr(e.b, d + 1, "then");
      expr(e.c, d + 1, "else");
      return;
    case ExprKind::IsDefined: line(d, pre + "IsDefined", e.range); expr(e.a, d + 1); return;
    }
  }

  void parts(uint32_t b, uint32_t e, int d) {
    for (uint32_t i = b; i < e; ++i) {
      const FormatPart& p = ast_.formatParts[i];
      if (!p.expr.valid()) {
        os_.indent(unsigned(d * 2)) << "Literal " << pyStrRepr(st_.str(p.literal)) << "\n";
        continue;
      }
      os_.indent(unsigned(d * 2)) << "Field " << st_.str(p.fieldText);
      if (p.conversion) os_ << " !" << p.conversion;
      os_ << "\n";
      if (p.specBegin != p.specEnd) {
        os_.indent(unsigned(d * 2 + 2)) << "Spec\n";
        parts(p.specBegin, p.specEnd, d + 2);
      }
    }
  }

  void stmts(uint32_t b, uint32_t e, int d) {
    for (uint32_t i = b; i < e; ++i) stmt(ast_.stmtLists[i], d);
  }

  void stmt(StmtId id, int d) {
    const Stmt& s = ast_.stmts[id];
    switch (s.kind) {
    case StmtKind::Assign:
      line(d, s.plusAssign ? "AssignAdd" : "Assign", s.range);
      expr(s.target, d + 1, "target");
      expr(s.value, d + 1, "value");
      return;
    case StmtKind::For:
      line(d, "For " + st_.str(s.var).str(), s.range);
      expr(s.value, d + 1, "in");
      stmts(s.bodyBegin, s.bodyEnd, d + 1);
      return;
    case StmtKind::If:
      line(d, "If", s.range);
      expr(s.value, d + 1, "cond");
      os_.indent(unsigned(d * 2 + 2)) << "Then\n";
      stmts(s.bodyBegin, s.bodyEnd, d + 2);
      if (s.elseBegin != s.elseEnd) {
        os_.indent(unsigned(d * 2 + 2)) << "Else\n";
        stmts(s.elseBegin, s.elseEnd, d + 2);
      }
      return;
    case StmtKind::ExprStmt:
      line(d, "ExprStmt", s.range);
      expr(s.value, d + 1);
      return;
    }
  }

  std::string mult(const Multiplicity& m) {
    std::string hi = m.high == Multiplicity::kUnbounded ? "" : std::to_string(m.high);
    return "[" + std::to_string(m.low) + ":" + hi + "]";
  }

  void decl(DeclId id) {
    const Decl& d = ast_.decls[id];
    auto names = [&](const char* label) {
      for (uint32_t i = d.nameBegin; i < d.nameEnd; ++i) os_ << "  " << label << " " << st_.str(ast_.names[i].name) << "\n";
    };
    switch (d.kind) {
    case DeclKind::Import:
      line(0, "Import " + st_.str(d.name).str() + (d.alias.valid() ? " as " + st_.str(d.alias).str() : ""), d.range);
      return;
    case DeclKind::Entity:
      line(0, "Entity " + st_.str(d.name).str(), d.range);
      if (d.doc.valid()) os_ << "  doc " << pyStrRepr(st_.str(d.doc)) << "\n";
      names("extends");
      for (uint32_t i = d.attrBegin; i < d.attrEnd; ++i) {
        const AttrDecl& a = ast_.attrs[i];
        std::string t = st_.str(a.type.name).str() + (a.type.isList ? "[]" : "") + (a.type.nullable ? "?" : "");
        line(1, "Attr " + t + " " + st_.str(a.name).str() + (a.undef ? " = undef" : ""), a.range);
        if (a.defaultValue.valid()) expr(a.defaultValue, 2, "default");
      }
      return;
    case DeclKind::Implementation:
      line(0, "Implementation " + st_.str(d.name).str() + " for " + st_.str(d.forEntity).str(), d.range);
      stmts(d.bodyBegin, d.bodyEnd, 1);
      return;
    case DeclKind::Implement:
      line(0, "Implement " + st_.str(d.name).str(), d.range);
      names("using");
      if (d.expr.valid()) expr(d.expr, 1, "when");
      return;
    case DeclKind::Relation: {
      std::string s = "Relation " + st_.str(d.left.entity).str() + "." + st_.str(d.left.name).str() + " " + mult(d.left.mult) +
                      " -- " + st_.str(d.right.entity).str();
      if (d.right.name.valid()) s += "." + st_.str(d.right.name).str() + " " + mult(d.right.mult);
      line(0, s, d.range);
      for (uint32_t i = d.annBegin; i < d.annEnd; ++i) expr(ast_.exprLists[i], 1, "annotation");
      return;
    }
    case DeclKind::Typedef:
      line(0, "Typedef " + st_.str(d.name).str() + " as " + st_.str(d.forEntity).str(), d.range);
      expr(d.expr, 1, "matching");
      return;
    case DeclKind::Index:
      line(0, "Index " + st_.str(d.name).str(), d.range);
      names("attr");
      return;
    }
  }

  void run() {
    if (ast_.doc.valid()) os_ << "Doc " << pyStrRepr(st_.str(ast_.doc)) << "\n";
    for (DeclId d : ast_.topDecls) decl(d);
    for (StmtId s : ast_.topLevel) stmt(s, 0);
  }

 private:
  const Ast& ast_;
  const StringTable& st_;
  llvm::raw_ostream& os_;
};

} // namespace

void dumpAst(const Ast& ast, const StringTable& strings, const SourceManager&, llvm::raw_ostream& os,
             const DumpOptions& opts) {
  Dumper(ast, strings, os).run();
  if (opts.ranges) os << rawDumpAst(ast, strings);
}

} // namespace inm::frontend

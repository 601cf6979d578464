// Renderings of the Ast: the reference compiler's short forms of expressions and statements used in
// "reported in …" messages (reprExpr/reprStmt), and the deterministic tree dump of `--dump-ast`.
// Invariant: pure functions of the Ast; the dump shows every node with its kind, key fields and line:col.
#include "FastParser.h"
#include "frontend/Frontend.h"
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

namespace {

// The reference keeps three renderings of a node, and which one a message shows depends on the context:
//  Str    `str(node)`: the "reported in" text and the operands of conditional expressions and assignments;
//  Repr   `repr(node)`: call arguments, index-lookup values, map lookups;
//  Pretty `node.pretty_print()`: operands of operators and list-comprehension parts.
enum class Mode : uint8_t { Str, Repr, Pretty };

class Renderer {
 public:
  Renderer(const Ast& ast, const StringTable& st) : ast_(ast), st_(st) {}

  // The constant value of a literal tree, as Python's repr() of it writes it (the reference folds constant
  // list and dict literals into one value at parse time; nested lists flatten as list values do). Booleans
  // inside a container are Python's `True`/`False`, `null` stays `null`. False when not constant.
  bool constant(ExprId id, std::string& out, bool top) const {
    const Expr& e = ast_.exprs[id];
    switch (e.kind) {
    case ExprKind::Int: out += e.bigInt ? str(e.name) : std::to_string(e.intValue); return true;
    case ExprKind::Float: out += pyFloatRepr(e.floatValue); return true;
    case ExprKind::String: out += pyStrRepr(st_.str(e.name)); return true;
    case ExprKind::Bool:
      out += top ? (e.intValue ? "true" : "false") : (e.intValue ? "True" : "False");
      return true;
    case ExprKind::Null: out += "null"; return true;
    case ExprKind::List: {
      std::vector<std::string> items;
      if (!flatItems(id, items)) return false;
      out += "[";
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
      out += "]";
      return true;
    }
    case ExprKind::Dict: {
      std::string s = "{";
      for (uint32_t i = e.begin, k = e.keyBegin; i < e.end; ++i, ++k) {
        if (i != e.begin) s += ", ";
        s += pyStrRepr(st_.str(ast_.dictKeys[k])) + ": ";
        if (!constant(ast_.exprLists[i], s, false)) return false;
      }
      out += s + "}";
      return true;
    }
    default: return false;
    }
  }

  std::string render(ExprId id, Mode m) const {
    if (!id.valid()) return "";
    const Expr& e = ast_.exprs[id];
    auto P = [&](ExprId x) { return render(x, Mode::Pretty); };
    auto S = [&](ExprId x) { return render(x, m == Mode::Pretty ? Mode::Pretty : Mode::Str); };
    auto R = [&](ExprId x) { return render(x, Mode::Repr); };
    switch (e.kind) {
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
    case ExprKind::Bool:
    case ExprKind::Null: {
      std::string s;
      constant(id, s, true);
      return s;
    }
    case ExprKind::List:
    case ExprKind::Dict: {
      std::string s;
      if (constant(id, s, true)) return s;
      if (e.kind == ExprKind::Dict || m != Mode::Pretty)
        return e.kind == ExprKind::List ? "List()" : "Dict()";
      s = "[";
      for (uint32_t i = e.begin; i < e.end; ++i) s += (i != e.begin ? "," : "") + P(ast_.exprLists[i]);
      return s + "]";
    }
    case ExprKind::Regex: return "/" + str(e.name) + "/";
    case ExprKind::StringFormat: return "Format(" + pyStrRepr(st_.str(e.name)) + ")";
    case ExprKind::FString:
      return m == Mode::Repr ? "StringFormatV2(" + pyStrRepr(st_.str(e.name)) + ")"
                             : pyStrRepr(st_.str(e.name));
    case ExprKind::ListComprehension: return comprehension(e);
    case ExprKind::Name: return str(e.name);
    case ExprKind::AttrRef:
      return render(e.a, m == Mode::Pretty ? Mode::Pretty : Mode::Str) + "." + str(e.name);
    case ExprKind::Call:
      return str(e.name) + "(" + callArgs(e, m == Mode::Pretty ? Mode::Pretty : Mode::Repr) + ")";
    case ExprKind::Constructor:
      if (m != Mode::Pretty) return "Construct(" + str(e.name) + ")";
      return str(e.name) + "(" + constructorArgs(e) + ")";
    case ExprKind::IndexLookup: return str(e.name) + "[" + query(e) + "]";
    case ExprKind::ShortIndexLookup: return render(e.a, Mode::Str) + "." + str(e.name) + "[" + query(e) + "]";
    case ExprKind::MapLookup: return R(e.a) + "[" + R(e.b) + "]";
    case ExprKind::Binary: return "(" + P(e.a) + " " + opText(e.op) + " " + P(e.b) + ")";
    case ExprKind::And: return "(" + P(e.a) + " and " + P(e.b) + ")";
    case ExprKind::Or: return "(" + P(e.a) + " or " + P(e.b) + ")";
    case ExprKind::In: return "(" + P(e.a) + " in " + P(e.b) + ")";
    // `not x` is Not(x) to str()/repr() and `(not x)` to pretty_print; `a not in b` is `not (a in b)`.
    case ExprKind::Not: return m == Mode::Pretty ? "(not " + P(e.a) + ")" : "Not(" + S(e.a) + ")";
    case ExprKind::NotIn: {
      std::string in = "(" + P(e.a) + " in " + P(e.b) + ")";
      return m == Mode::Pretty ? "(not " + in + ")" : "Not(" + in + ")";
    }
    case ExprKind::Conditional: return S(e.a) + " ? " + S(e.b) + " : " + S(e.c);
    case ExprKind::IsDefined: return P(e.a) + " is defined";
    }
    llvm_unreachable("every ExprKind is handled above");
  }

 private:
  std::string str(StringId id) const { return st_.str(id).str(); }

  // Elements of a constant list, nested constant lists spliced in (the reference's list values are flat).
  bool flatItems(ExprId id, std::vector<std::string>& items) const {
    const Expr& e = ast_.exprs[id];
    for (uint32_t i = e.begin; i < e.end; ++i) {
      ExprId el = ast_.exprLists[i];
      if (ast_.exprs[el].kind == ExprKind::List) {
        if (!flatItems(el, items)) return false;
        continue;
      }
      std::string s;
      if (!constant(el, s, false)) return false;
      items.push_back(std::move(s));
    }
    return true;
  }

  // `[v for a in x for b in y if g if h]` is `[[v for b in y if (g and h)] for a in x]` to the reference:
  // the innermost loop carries the guards, joined right to left with `and`.
  std::string comprehension(const Expr& e) const {
    std::string guard;
    for (uint32_t i = e.end; i > e.begin; --i) {
      std::string g = render(ast_.exprLists[i - 1], Mode::Pretty);
      guard = guard.empty() ? g : "(" + g + " and " + guard + ")";
    }
    std::string s = render(e.a, Mode::Pretty);
    for (uint32_t i = e.loopEnd; i > e.loopBegin; --i) {
      const ComprehensionLoop& l = ast_.loops[i - 1];
      s = "[" + s + " for " + str(l.var) + " in " + render(l.iterable, Mode::Pretty) +
          (i == e.loopEnd && !guard.empty() ? " if " + guard : "") + "]";
    }
    return s;
  }

  // Call arguments in the reference's order: positional, then keywords (a repeated keyword once, at its first
  // place, with its last value: they live in a mapping), then `**dict` arguments.
  std::string callArgs(const Expr& e, Mode m) const {
    std::vector<std::string> parts;
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i)
      if (ast_.args[i].kind == ArgKind::Positional) parts.push_back(render(ast_.args[i].value, m));
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
      const Arg& a = ast_.args[i];
      if (a.kind != ArgKind::Keyword) continue;
      bool seenBefore = false;
      for (uint32_t j = e.argBegin; j < i && !seenBefore; ++j)
        seenBefore = ast_.args[j].kind == ArgKind::Keyword && ast_.args[j].name == a.name;
      if (seenBefore) continue;
      const Arg* shown = &a;
      for (uint32_t j = i + 1; j < e.argEnd; ++j)
        if (ast_.args[j].kind == ArgKind::Keyword && ast_.args[j].name == a.name) shown = &ast_.args[j];
      parts.push_back(str(a.name) + "=" + render(shown->value, m));
    }
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i)
      if (ast_.args[i].kind == ArgKind::Spread)
        parts.push_back("**" + render(ast_.args[i].value, Mode::Repr));
    return join(parts, ",");
  }

  // pretty_print of a constructor: `T(a=1,**{kwargs})`; a `**` argument is itself printed with its stars.
  std::string constructorArgs(const Expr& e) const {
    std::vector<std::string> parts;
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i)
      if (ast_.args[i].kind == ArgKind::Keyword)
        parts.push_back(str(ast_.args[i].name) + "=" + render(ast_.args[i].value, Mode::Pretty));
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i)
      if (ast_.args[i].kind == ArgKind::Spread)
        parts.push_back("****" + render(ast_.args[i].value, Mode::Repr));
    return join(parts, ",");
  }

  // An index lookup's query: the list of (name, value) tuples as Python writes it, then each `**dict`.
  std::string query(const Expr& e) const {
    std::vector<std::string> tuples;
    std::string spreads;
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
      const Arg& a = ast_.args[i];
      if (a.kind == ArgKind::Spread)
        spreads += ",**" + render(a.value, Mode::Repr);
      else
        tuples.push_back("(" + pyStrRepr(st_.str(a.name)) + ", " + render(a.value, Mode::Repr) + ")");
    }
    return "[" + join(tuples, ", ") + "]" + spreads;
  }

  static std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
    return s;
  }

  const Ast& ast_;
  const StringTable& st_;
};

} // namespace

std::string reprExpr(const Ast& ast, ExprId id, const StringTable& st) {
  return Renderer(ast, st).render(id, Mode::Str);
}

std::string reprDefault(const Ast& ast, ExprId id, const StringTable& st) {
  if (id.valid() && ast.exprs[id].kind == ExprKind::List) return "List()";
  return reprExpr(ast, id, st);
}

std::string prettyExpr(const Ast& ast, ExprId id, const StringTable& st) {
  return Renderer(ast, st).render(id, Mode::Pretty);
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
      line(d, pre + "Int " + (e.bigInt ? st_.str(e.name).str() + " (big)" : std::to_string(e.intValue)),
           e.range);
      return;
    case ExprKind::Float: line(d, pre + "Float " + pyFloatRepr(e.floatValue), e.range); return;
    case ExprKind::String: line(d, pre + "String " + pyStrRepr(st_.str(e.name)), e.range); return;
    case ExprKind::Bool: line(d, pre + (e.intValue ? "Bool true" : "Bool false"), e.range); return;
    case ExprKind::Null: line(d, pre + "Null", e.range); return;
    case ExprKind::Regex: line(d, pre + "Regex /" + st_.str(e.name).str() + "/", e.range); return;
    case ExprKind::StringFormat:
    case ExprKind::FString:
      line(d, pre + (e.kind == ExprKind::FString ? "FString " : "StringFormat ") + pyStrRepr(st_.str(e.name)),
           e.range);
      parts(e.partBegin, e.partEnd, d + 1);
      return;
    case ExprKind::List:
      line(d, pre + "List", e.range);
      for (uint32_t i = e.begin; i < e.end; ++i) expr(ast_.exprLists[i], d + 1);
      return;
    case ExprKind::Dict:
      line(d, pre + "Dict", e.range);
      for (uint32_t i = e.begin, k = e.keyBegin; i < e.end; ++i, ++k)
        expr(ast_.exprLists[i], d + 1, pyStrRepr(st_.str(ast_.dictKeys[k])));
      return;
    case ExprKind::ListComprehension:
      line(d, pre + "ListComprehension", e.range);
      expr(e.a, d + 1, "element");
      for (uint32_t i = e.loopBegin; i < e.loopEnd; ++i)
        expr(ast_.loops[i].iterable, d + 1, "for " + st_.str(ast_.loops[i].var).str() + " in");
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
      const char* k = e.kind == ExprKind::Call          ? "Call "
                      : e.kind == ExprKind::Constructor ? "Constructor "
                      : e.kind == ExprKind::IndexLookup ? "IndexLookup "
                                                        : "ShortIndexLookup .";
      line(d, pre + k + st_.str(e.name).str(), e.range);
      if (e.a.valid()) expr(e.a, d + 1, "of");
      for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
        const Arg& a = ast_.args[i];
        std::string lab = a.kind == ArgKind::Keyword  ? st_.str(a.name).str() + "="
                          : a.kind == ArgKind::Spread ? "**"
                                                      : "arg";
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
    case ExprKind::Not:
      line(d, pre + "Not", e.range);
      expr(e.a, d + 1);
      return;
    case ExprKind::And:
    case ExprKind::Or:
    case ExprKind::In:
    case ExprKind::NotIn: {
      // Two operands, named by the node kind alone.
      const char* name = e.kind == ExprKind::And  ? "And"
                         : e.kind == ExprKind::Or ? "Or"
                         : e.kind == ExprKind::In ? "In"
                                                  : "NotIn";
      line(d, pre + name, e.range);
      expr(e.a, d + 1);
      expr(e.b, d + 1);
      return;
    }
    case ExprKind::Conditional:
      line(d, pre + "Conditional", e.range);
      expr(e.a, d + 1, "cond");
      expr(e.b, d + 1, "then");
      expr(e.c, d + 1, "else");
      return;
    case ExprKind::IsDefined:
      line(d, pre + "IsDefined", e.range);
      expr(e.a, d + 1);
      return;
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
      for (uint32_t i = d.nameBegin; i < d.nameEnd; ++i)
        os_ << "  " << label << " " << st_.str(ast_.names[i].name) << "\n";
    };
    switch (d.kind) {
    case DeclKind::Import:
      line(0, "Import " + st_.str(d.name).str() + (d.alias.valid() ? " as " + st_.str(d.alias).str() : ""),
           d.range);
      return;
    case DeclKind::Entity:
      line(0, "Entity " + st_.str(d.name).str(), d.range);
      if (d.doc.valid()) os_ << "  doc " << pyStrRepr(st_.str(d.doc)) << "\n";
      names("extends");
      for (uint32_t i = d.attrBegin; i < d.attrEnd; ++i) {
        const AttrDecl& a = ast_.attrs[i];
        std::string t =
            st_.str(a.type.name).str() + (a.type.isList ? "[]" : "") + (a.type.nullable ? "?" : "");
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
      std::string s = "Relation " + st_.str(d.left.entity).str() + "." + st_.str(d.left.name).str() + " " +
                      mult(d.left.mult) + " -- " + st_.str(d.right.entity).str();
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

bool locationHasColumn(const Ast& ast, ExprId id) {
  for (;;) {
    const Expr& e = ast.exprs[id];
    if (e.kind == ExprKind::Name || e.kind == ExprKind::FString) return true;
    if (e.kind != ExprKind::Conditional || !e.a.valid()) return false;
    id = e.a;
  }
}

} // namespace inm::frontend

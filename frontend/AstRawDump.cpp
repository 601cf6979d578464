// A canonical, field-by-field text dump of every store of an Ast in id order (rawDumpAst, FastParser.h).
// Used to prove the fast-path parser builds exactly the ANTLR path's Ast: DumpOptions::ranges (the driver's
// INM_DUMP_RANGES=1) makes dumpAst append it, and ParserMode::FastCheck compares both parsers' dumps.
// Invariant: two Asts of the same file print identically iff all their nodes, runs, names and ranges agree.
#include "FastParser.h"

#include <fmt/format.h>

namespace inm::frontend {

namespace {

struct RawDumper {
  const StringTable& st;
  std::string out;

  std::string s(StringId id) const { return id.valid() ? "'" + st.str(id).str() + "'" : "-"; }
  static std::string r(const SourceRange& x) {
    return fmt::format("{}:{}-{}:{}", x.line, x.col, x.endLine, x.endCol);
  }
  template <typename I>
  static std::string i(I id) {
    return id.valid() ? std::to_string(id.index) : "-";
  }
};

} // namespace

std::string rawDumpAst(const Ast& ast, const StringTable& st) {
  RawDumper d{st, {}};
  std::string& o = d.out;
  o += "doc " + d.s(ast.doc) + "\n";
  for (uint32_t k = 0; k < ast.exprs.size(); ++k) {
    const Expr& e = ast.exprs[ExprId{k}];
    o +=
        fmt::format("E{} k{} op{} {} n{} i{} f{:.17g} a{} b{} c{} l{}-{} g{}-{} p{}-{} d{}-{} c{}-{} big{}\n",
                    k, int(e.kind), int(e.op), d.r(e.range), d.s(e.name), e.intValue, e.floatValue, d.i(e.a),
                    d.i(e.b), d.i(e.c), e.begin, e.end, e.argBegin, e.argEnd, e.partBegin, e.partEnd,
                    e.keyBegin, e.keyEnd, e.loopBegin, e.loopEnd, int(e.bigInt));
  }
  for (uint32_t k = 0; k < ast.stmts.size(); ++k) {
    const Stmt& s = ast.stmts[StmtId{k}];
    o += fmt::format("S{} k{} {} pa{} t{} v{} var{} {} b{}-{} e{}-{}\n", k, int(s.kind), d.r(s.range),
                     int(s.plusAssign), d.i(s.target), d.i(s.value), d.s(s.var), d.r(s.varRange), s.bodyBegin,
                     s.bodyEnd, s.elseBegin, s.elseEnd);
  }
  for (uint32_t k = 0; k < ast.decls.size(); ++k) {
    const Decl& x = ast.decls[DeclId{k}];
    o += fmt::format(
        "D{} k{} {} n{} {} doc{} al{} for{} {} x{} names{}-{} attrs{}-{} body{}-{} ann{}-{} has{}\n", k,
        int(x.kind), d.r(x.range), d.s(x.name), d.r(x.nameRange), d.s(x.doc), d.s(x.alias), d.s(x.forEntity),
        d.r(x.forRange), d.i(x.expr), x.nameBegin, x.nameEnd, x.attrBegin, x.attrEnd, x.bodyBegin, x.bodyEnd,
        x.annBegin, x.annEnd, int(x.hasAnnotations));
    for (const RelationEnd* e : {&x.left, &x.right})
      o += fmt::format("  end {} {} {} {} {}:{}\n", d.s(e->entity), d.r(e->entityRange), d.s(e->name),
                       d.r(e->nameRange), e->mult.low, e->mult.high);
  }
  for (ExprId id : ast.exprLists) o += "EL " + d.i(id) + "\n";
  for (StmtId id : ast.stmtLists) o += "SL " + d.i(id) + "\n";
  for (const Arg& a : ast.args)
    o += fmt::format("A k{} {} v{} {}\n", int(a.kind), d.s(a.name), d.i(a.value), d.r(a.range));
  for (const FormatPart& p : ast.formatParts)
    o += fmt::format("FP {} x{} {} conv{} spec{}-{}\n", d.s(p.literal), d.i(p.expr), d.s(p.fieldText),
                     int(p.conversion), p.specBegin, p.specEnd);
  for (StringId k : ast.dictKeys) o += "DK " + d.s(k) + "\n";
  for (const ComprehensionLoop& l : ast.loops)
    o += fmt::format("L {} it{} {}\n", d.s(l.var), d.i(l.iterable), d.r(l.range));
  for (const NameRef& n : ast.names) o += fmt::format("N {} {}\n", d.s(n.name), d.r(n.range));
  for (const AttrDecl& a : ast.attrs)
    o += fmt::format("AT {} list{} null{} {} {} {} def{} undef{} {}\n", d.s(a.type.name), int(a.type.isList),
                     int(a.type.nullable), d.r(a.type.range), d.s(a.name), d.r(a.nameRange),
                     d.i(a.defaultValue), int(a.undef), d.r(a.range));
  for (StmtId id : ast.topLevel) o += "TOP " + d.i(id) + "\n";
  for (DeclId id : ast.topDecls) o += "TD " + d.i(id) + "\n";
  return o;
}

} // namespace inm::frontend

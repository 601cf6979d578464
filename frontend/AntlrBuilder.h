// The ANTLR path's tree walker: turns the parse tree of one top-level statement of grammar/Inmanta.g4 into
// the compact Ast of Ast.h, and reports the targeted errors of the language that the grammar accepts
// (capitalised attribute names, lower-case entity names, keywords as names, hyphens in defined names, `+=` on
// a variable, bad regexes and f-strings, interpolation in dict keys, ...). Private to the frontend; its
// members are defined by rule family in AntlrDecls.cpp (top-level definitions), AntlrExprs.cpp (statements
// and expressions) and AntlrLiterals.cpp (strings, numbers, regexes). Invariant: every node gets the range of
// its first and last token.
#pragma once

#include "Desugar.h"
#include "InmantaLexer.h"
#include "InmantaParser.h"
#include "Strings.h"
#include "antlr4-runtime.h"
#include "frontend/Frontend.h"

#include <cassert>
#include <string>
#include <utility>
#include <vector>

namespace inm::frontend {

using G = grammar::InmantaParser;

/// True for a word the lexer reads as a keyword (FastLexer.h keeps the one list, Keywords.def).
bool isKeyword(llvm::StringRef s);

/// Where the reference reports a syntax error found at `tok` (its parser's lookahead): its lexer has read the
/// token, so the point just past it: the line the token ends on, the column after its last character counted
/// from the start of the line the token starts on (as the reference's lexer counts for a multi-line string).
/// At the end of input the reference has appended a newline and read it: the line after the last, column 1.
SourceRange pastToken(FileId file, antlr4::Token* tok);

/// Builds Ast nodes from ANTLR parse trees; one instance per file, fed one top-level statement at a time.
class AntlrBuilder {
 public:
  AntlrBuilder(FileId file, const SourceManager& sm, StringTable& st, DiagnosticEngine& diags, Ast& ast)
      : file_(file), sm_(sm), st_(st), diags_(diags), ast_(ast) {}

  void build(G::MainContext* m);
  /// The module docstring (a leading MLS token).
  void moduleDoc(antlr4::Token* mls) { ast_.doc = st_.intern(mlsBody(mls->getText(), mls)); }
  void top(G::TopStmtContext* t) { topStmt(t); }

 private:
  FileId file_;
  const SourceManager& sm_;
  StringTable& st_;
  DiagnosticEngine& diags_;
  Ast& ast_;

  // ---------------------------------------------------------------- locations and errors
  SourceRange rangeOf(antlr4::Token* a, antlr4::Token* b);
  SourceRange rangeOf(antlr4::ParserRuleContext* c) { return rangeOf(c->getStart(), c->getStop()); }
  SourceRange rangeOf(antlr4::tree::TerminalNode* n) { return rangeOf(n->getSymbol(), n->getSymbol()); }

  /// Reports `kind` at r (located with its column) with the kind's format filled from `args`.
  template <typename... Args>
  Diagnostic& error(DiagKind kind, SourceRange r, Args&&... args) {
    Diagnostic& d = diags_.error(kind, r, std::forward<Args>(args)...);
    d.locWithColumn = true;
    return d;
  }

  /// Checks a defined name: keyword, hyphen.
  bool checkDefinedName(llvm::StringRef name, SourceRange r);
  /// Checks the namespace parts of a type reference: a keyword there is a reserved-keyword error.
  bool checkTypeRefParts(const std::vector<G::AnyIdContext*>& parts);

  // ---------------------------------------------------------------- nodes
  ExprId addExpr(Expr e) { return ast_.exprs.add(e); }
  Expr mk(ExprKind k, SourceRange r);
  StmtId addStmt(Stmt s) { return ast_.stmts.add(s); }

  template <typename Vec>
  std::pair<uint32_t, uint32_t> pushStmts(const Vec& stmts) {
    std::vector<StmtId> ids;
    for (auto* s : stmts) {
      StmtId id = statement(s);
      if (id.valid()) ids.push_back(id);
    }
    uint32_t b = uint32_t(ast_.stmtLists.size());
    ast_.stmtLists.insert(ast_.stmtLists.end(), ids.begin(), ids.end());
    return {b, uint32_t(ast_.stmtLists.size())};
  }

  // ---------------------------------------------------------------- top level
  void topStmt(G::TopStmtContext* t);
  Decl mkDecl(DeclKind k, SourceRange r);
  void addDecl(const Decl& d) { ast_.topDecls.push_back(ast_.decls.add(d)); }

  void importStmt(G::ImportStmtContext* c);
  void entityDef(G::EntityDefContext* c);
  bool attrName(G::NameContext* n, AttrDecl& ad);
  bool attr(G::AttrContext* a, AttrDecl& ad);
  void implementationDef(G::ImplementationDefContext* c);
  void implementDef(G::ImplementDefContext* c);
  Multiplicity multi(G::MultiContext* m);
  void relation(G::RelationContext* c);
  bool mentionsSelf(ExprId id, StringId typedefName) {
    return frontend::mentionsSelf(ast_, st_, id, typedefName);
  }

  void typedefDef(G::TypedefDefContext* c);
  void indexDef(G::IndexDefContext* c);

  // ---------------------------------------------------------------- statements
  StmtId statement(G::StatementContext* c);
  StmtId assign(G::AssignContext* c);
  StmtId forStmt(G::ForStmtContext* c);
  StmtId ifBody(G::IfBodyContext* c, SourceRange r);

  // ---------------------------------------------------------------- expressions
  /// The alternative of an expression node, found from its shape instead of a chain of dynamic_casts
  /// (the builder's hottest path): one child = primary, two = `not e`, else the operator token child(1).
  static size_t exprOp(G::ExpressionContext* c);
  static G::ExpressionContext* sub(G::ExpressionContext* c, size_t i);
  ExprId expression(G::ExpressionContext* c);
  ExprId binary(ExprKind k, BinaryOp op, G::ExpressionContext* l, G::ExpressionContext* rr, SourceRange r);
  ExprId primary(G::PrimaryContext* c);
  ExprId varRef(G::VarRefContext* c);

  /// `name=value` of a call or constructor: a keyword as the name is the reference's ReservedKeyword error.
  bool keywordArg(G::AnyIdContext* id, G::ExpressionContext* value, Arg& arg);
  void storeArgs(const std::vector<Arg>& out, Expr& e);
  bool args(const std::vector<G::ArgContext*>& as, Expr& e);
  bool kwargs(const std::vector<G::KwargContext*>& as, Expr& e);
  ExprId functionCall(G::FunctionCallContext* c);
  ExprId constructor(G::ConstructorContext* c);
  ExprId indexLookup(G::IndexLookupContext* c);
  ExprId mapLookup(G::MapLookupContext* c);
  ExprId comprehension(G::ListComprehensionContext* c);
  ExprId mapDef(G::MapDefContext* c);

  // ---------------------------------------------------------------- literals
  std::string mlsBody(const std::string& text, antlr4::Token* tok);
  void badCodePoint(antlr4::Token* tok);
  void warnEscape(antlr4::Token* tok);
  ExprId regex(antlr4::tree::TerminalNode* n);
  ExprId stringValue(const std::string& decoded, const std::string& original, SourceRange r);

  /// "a.b.c" -> AttrRef(AttrRef(Name a, b), c)
  ExprId dottedRef(const std::string& text, SourceRange r) { return frontend::dottedRef(ast_, st_, text, r); }

  bool fparts(const std::vector<FField>& fields, SourceRange r, std::vector<FormatPart>& out,
              llvm::StringRef raw);
  ExprId constant(G::ConstantContext* c);
};

} // namespace inm::frontend

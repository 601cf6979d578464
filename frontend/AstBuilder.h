// Private to the frontend: turns the ANTLR parse tree of one file into the Ast of frontend/Ast.h.
// The grammar deliberately accepts a little more than the language (keywords and capitalised names where an
// identifier is expected, `x.f(...)`, `typedef T as C(...)`), so this builder reports the reference's targeted
// errors (§2.10), hyphen/keyword misuse and string-literal problems as diagnostics while it builds.
// Invariant: the builder never throws and never looks at a parse tree that had syntax errors it could not
// recover from; every node it adds gets a valid SourceRange.
#pragma once

#include "InmantaParser.h"
#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <string>

namespace inm::frontend {

namespace g = inm::grammar;

class AstBuilder {
 public:
  AstBuilder(Ast& ast, StringTable& strings, DiagnosticEngine& diags) : ast_(ast), strings_(strings), diags_(diags) {}

  void buildFile(g::InmantaParser::MainContext* main);

 private:
  friend struct ExprBuilder;
  // ---- locations ----
  SourceRange tokRange(antlr4::Token* t) const;
  SourceRange ctxRange(antlr4::ParserRuleContext* c) const;
  StringId intern(const std::string& s) { return strings_.intern(s); }

  // ---- declarations (AstBuilder.cpp) ----
  void topStmt(g::InmantaParser::TopStmtContext* c);
  void entity(g::InmantaParser::EntityDefContext* c);
  void attribute(g::InmantaParser::AttrContext* c);
  void implementation(g::InmantaParser::ImplementationDefContext* c);
  void implement(g::InmantaParser::ImplementDefContext* c);
  void relation(g::InmantaParser::RelationContext* c);
  void typedefDecl(g::InmantaParser::TypedefDefContext* c);
  void index(g::InmantaParser::IndexDefContext* c);
  void import(g::InmantaParser::ImportStmtContext* c);
  Multiplicity multiplicity(g::InmantaParser::MultiContext* c);
  StringId docOf(antlr4::tree::TerminalNode* mls);

  // ---- statements ----
  StmtId statement(g::InmantaParser::StatementContext* c);
  StmtId ifBody(g::InmantaParser::IfBodyContext* c, SourceRange range);
  void block(const std::vector<g::InmantaParser::StatementContext*>& stmts, uint32_t& begin, uint32_t& end);

  // ---- expressions (AstBuilderExpr.cpp) ----
  ExprId expr(g::InmantaParser::ExpressionContext* c);
  ExprId primary(g::InmantaParser::PrimaryContext* c);
  ExprId constant(g::InmantaParser::ConstantContext* c);
  ExprId varRef(g::InmantaParser::VarRefContext* c, bool isCallee = false);
  ExprId stringLiteral(antlr4::Token* t);
  ExprId fstringLiteral(antlr4::Token* t);
  ExprId fieldRef(const std::string& text, SourceRange r);
  void kwargs(const std::vector<g::InmantaParser::KwargContext*>& ks, Expr& e);
  ExprId mapDef(g::InmantaParser::MapDefContext* c);
  ExprId add(Expr e) { return ast_.exprs.add(std::move(e)); }
  ExprId mk(ExprKind k, SourceRange r) {
    Expr e;
    e.kind = k;
    e.range = r;
    return add(std::move(e));
  }

  // ---- checks of defined names ----
  /// Reports a keyword used as an identifier; returns false if it was one.
  bool checkNotKeyword(antlr4::Token* t);
  /// Reports a hyphen in a defined name (HyphenException).
  void checkNoHyphen(const std::string& name, SourceRange r);
  /// Reports the reference's error for a name of the wrong class, e.g. attribute names must be lower case.
  Diagnostic& detail(SourceRange r, const std::string& msg);
  std::string nsText(g::InmantaParser::NsRefContext* c);
  std::string classText(g::InmantaParser::ClassRefContext* c);

  Ast& ast_;
  StringTable& strings_;
  DiagnosticEngine& diags_;
};

/// True for a keyword token type of the grammar.
bool isKeywordToken(size_t type);

} // namespace inm::frontend

// The frontend's parser entry: runs the ANTLR-generated lexer/parser (SLL prediction first, full LL only
// when SLL fails) and walks the parse tree into the compact Ast of Ast.h. Syntax errors become
// ParserException-class diagnostics located at the offending token; the targeted errors of the language
// (capitalised attribute names, lower-case entity names, keywords as names, hyphens in defined names,
// `+=` on a variable, bad regexes and f-strings, interpolation in dict keys, …) are detected here.
// Invariant: no ANTLR type escapes this file; every node gets the range of its first and last token.
#include "frontend/Frontend.h"

#include "FastLexer.h"
#include "FastParser.h"
#include "Nesting.h"
#include "support/Limits.h"
#include "Desugar.h"
#include "Strings.h"

#include "InmantaLexer.h"
#include "InmantaParser.h"
#include "antlr4-runtime.h"

#include <fmt/format.h>

#include <cstdlib>
#include <unordered_set>

namespace inm::frontend {

using G = grammar::InmantaParser;

namespace {

struct SyntaxError {
  bool set = false;
  SourceRange range;
  DiagKind kind = DiagKind::SyntaxError;
  std::string arg;
};

/// Records the first syntax error; the parse continues in LL mode only to be abandoned.
class ErrorCollector : public antlr4::BaseErrorListener {
 public:
  ErrorCollector(FileId file, const antlr4::dfa::Vocabulary& vocab) : file_(file), vocab_(vocab) {}
  SyntaxError first;

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* tok, size_t line, size_t col, const std::string& msg,
                   std::exception_ptr) override {
    if (first.set) return;
    first.set = true;
    first.range = SourceRange{file_, uint32_t(line), uint32_t(col + 1), uint32_t(line), uint32_t(col + 2)};
    if (!tok) {  // lexer error
      first.kind = DiagKind::IllegalCharacter;
      first.arg = msg;
      return;
    }
    std::string text = tok->getText();
    first.range.endCol = first.range.col + uint32_t(std::max<size_t>(1, text.size()));
    if (tok->getType() == antlr4::Token::EOF) {
      first.kind = DiagKind::UnexpectedEof;
      return;
    }
    if (tok->getType() == grammar::InmantaLexer::ILLEGAL) {
      first.kind = DiagKind::IllegalCharacter;
      first.arg = text;
      return;
    }
    // A keyword where a name could stand: "invalid identifier, X is a reserved keyword".
    std::string sym = std::string(vocab_.getSymbolicName(tok->getType()));
    if (sym.rfind("K_", 0) == 0 && !text.empty() && isalpha((unsigned char)text[0])) {
      auto* parser = dynamic_cast<antlr4::Parser*>(recognizer);
      if (parser) {
        antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
        if (expected.contains(size_t(grammar::InmantaLexer::ID))) {
          first.kind = DiagKind::ReservedKeyword;
          first.arg = text;
          return;
        }
      }
    }
    first.kind = DiagKind::SyntaxError;
    first.arg = text;
  }

 private:
  FileId file_;
  const antlr4::dfa::Vocabulary& vocab_;
};

bool isKeyword(llvm::StringRef s) {
  static const std::unordered_set<std::string> kws = {
      "typedef", "as", "entity", "extends", "end", "in", "implementation", "for", "matching", "index",
      "implement", "using", "when", "and", "or", "not", "true", "false", "import", "is", "defined",
      "dict", "null", "undef", "parents", "if", "else", "elif"};
  return kws.count(s.str()) != 0;
}

class Builder {
 public:
  Builder(FileId file, const SourceManager& sm, StringTable& st, DiagnosticEngine& diags, Ast& ast)
      : file_(file), sm_(sm), st_(st), diags_(diags), ast_(ast) {}

  void build(G::MainContext* m) {
    if (m->MLS()) ast_.doc = st_.intern(mlsBody(m->MLS()->getText(), m->MLS()->getSymbol()));
    for (G::TopStmtContext* t : m->topStmt()) topStmt(t);
  }
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
  SourceRange rangeOf(antlr4::Token* a, antlr4::Token* b) {
    SourceRange r;
    r.file = file_;
    r.line = uint32_t(a->getLine());
    r.col = uint32_t(a->getCharPositionInLine() + 1);
    if (!b || b->getType() == antlr4::Token::EOF) b = a;
    std::string t = b->getText();
    size_t lastNl = t.rfind('\n');
    size_t nl = std::count(t.begin(), t.end(), '\n');
    r.endLine = uint32_t(b->getLine() + nl);
    r.endCol = nl ? uint32_t(t.size() - lastNl) : uint32_t(b->getCharPositionInLine() + 1 + t.size());
    return r;
  }
  SourceRange rangeOf(antlr4::ParserRuleContext* c) { return rangeOf(c->getStart(), c->getStop()); }
  SourceRange rangeOf(antlr4::tree::TerminalNode* n) { return rangeOf(n->getSymbol(), n->getSymbol()); }

  Diagnostic& error(DiagKind kind, SourceRange r, const std::string& arg) {
    Diagnostic& d = diags_.error(kind, r, arg);
    d.locWithColumn = true;
    return d;
  }

  /// Checks a defined name: keyword, hyphen.
  bool checkDefinedName(llvm::StringRef name, SourceRange r) {
    if (isKeyword(name)) {
      error(DiagKind::ReservedKeyword, r, name.str());
      return false;
    }
    if (name.contains('-')) {
      error(DiagKind::Hyphen, r, name.str());
      return false;
    }
    return true;
  }

  // ---------------------------------------------------------------- nodes
  ExprId addExpr(Expr e) { return ast_.exprs.add(e); }
  Expr mk(ExprKind k, SourceRange r) {
    Expr e;
    e.kind = k;
    e.range = r;
    return e;
  }
  StmtId addStmt(Stmt s) { return ast_.stmts.add(s); }

  template <typename Vec> std::pair<uint32_t, uint32_t> pushStmts(const Vec& stmts) {
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
  void topStmt(G::TopStmtContext* t) {
    if (auto* c = t->statement()) {
      StmtId s = statement(c);
      if (s.valid()) ast_.topLevel.push_back(s);
    } else if (auto* c = t->entityDef()) entityDef(c);
    else if (auto* c = t->implementDef()) implementDef(c);
    else if (auto* c = t->implementationDef()) implementationDef(c);
    else if (auto* c = t->relation()) relation(c);
    else if (auto* c = t->typedefDef()) typedefDef(c);
    else if (auto* c = t->indexDef()) indexDef(c);
    else if (auto* c = t->importStmt()) importStmt(c);
  }

  Decl mkDecl(DeclKind k, SourceRange r) {
    Decl d;
    d.kind = k;
    d.range = r;
    return d;
  }
  void addDecl(const Decl& d) { ast_.topDecls.push_back(ast_.decls.add(d)); }

  void importStmt(G::ImportStmtContext* c) {
    Decl d = mkDecl(DeclKind::Import, rangeOf(c));
    std::string path = c->nsRef()->getText();
    d.name = st_.intern(path);
    d.nameRange = rangeOf(c->nsRef());
    if (llvm::StringRef(path).contains('-')) {
      error(DiagKind::CompilerError, d.nameRange,
            fmt::format("{} is not a valid module name: hyphens are not allowed, please use underscores instead.",
                        path));
      return;
    }
    if (c->anyId()) {
      std::string alias = c->anyId()->getText();
      if (!checkDefinedName(alias, rangeOf(c->anyId()))) return;
      d.alias = st_.intern(alias);
    }
    addDecl(d);
  }

  void entityDef(G::EntityDefContext* c) {
    Decl d = mkDecl(DeclKind::Entity, rangeOf(c));
    std::string name = c->name()->getText();
    d.nameRange = rangeOf(c->name());
    if (!isupper((unsigned char)name[0])) {
      if (isKeyword(name)) error(DiagKind::ReservedKeyword, d.nameRange, name);
      else error(DiagKind::SyntaxErrorDetail, d.nameRange, "Invalid identifier: Entity names must start with a capital");
      return;
    }
    if (!checkDefinedName(name, d.nameRange)) return;
    d.name = st_.intern(name);
    if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
    d.nameBegin = uint32_t(ast_.names.size());
    for (G::ParentRefContext* p : c->parentRef()) {
      std::string last = p->name()->getText();
      if (!isupper((unsigned char)last[0])) {
        error(DiagKind::SyntaxErrorDetail, rangeOf(p->name()), "Invalid identifier: Entity names must start with a capital");
        return;
      }
      ast_.names.push_back(NameRef{st_.intern(p->getText()), rangeOf(p)});
    }
    d.nameEnd = uint32_t(ast_.names.size());
    std::vector<AttrDecl> attrs;
    for (G::AttrContext* a : c->attr()) {
      AttrDecl ad;
      if (!attr(a, ad)) return;
      attrs.push_back(ad);
    }
    d.attrBegin = uint32_t(ast_.attrs.size());
    ast_.attrs.insert(ast_.attrs.end(), attrs.begin(), attrs.end());
    d.attrEnd = uint32_t(ast_.attrs.size());
    addDecl(d);
  }

  bool attrName(G::NameContext* n, AttrDecl& ad) {
    std::string name = n->getText();
    ad.nameRange = rangeOf(n);
    if (isupper((unsigned char)name[0])) {
      error(DiagKind::SyntaxErrorDetail, ad.nameRange,
            "Invalid identifier: attribute names must start with a lower case character");
      return false;
    }
    if (!checkDefinedName(name, ad.nameRange)) return false;
    ad.name = st_.intern(name);
    return true;
  }

  bool attr(G::AttrContext* a, AttrDecl& ad) {
    ad.range = rangeOf(a);
    if (auto* t = dynamic_cast<G::TypedAttrContext*>(a)) {
      G::AttrTypeContext* ty = t->attrType();
      ad.type.name = st_.intern(ty->nsRef()->getText());
      ad.type.range = rangeOf(ty);
      ad.type.isList = ty->LBRACK() != nullptr;
      ad.type.nullable = ty->QMARK() != nullptr;
      if (!attrName(t->name(), ad)) return false;
      if (t->K_UNDEF()) ad.undef = true;
      else if (t->constant()) ad.defaultValue = constant(t->constant());
      else if (t->constantList()) {
        G::ConstantListContext* cl = t->constantList();
        std::vector<ExprId> items;
        for (G::ConstantContext* k : cl->constant()) items.push_back(constant(k));
        Expr e = mk(ExprKind::List, rangeOf(cl));
        e.begin = uint32_t(ast_.exprLists.size());
        ast_.exprLists.insert(ast_.exprLists.end(), items.begin(), items.end());
        e.end = uint32_t(ast_.exprLists.size());
        ad.defaultValue = addExpr(e);
      }
      return true;
    }
    auto* t = dynamic_cast<G::DictAttrContext*>(a);
    ad.type.name = st_.intern("dict");
    ad.type.nullable = t->QMARK() != nullptr;
    ad.type.range = rangeOf(t->K_DICT());
    if (!attrName(t->name(), ad)) return false;
    if (t->K_UNDEF()) ad.undef = true;
    else if (t->K_NULL()) {
      if (!ad.type.nullable) {
        error(DiagKind::SyntaxErrorDetail, rangeOf(t->K_NULL()),
              "null can not be assigned to dict, did you mean \"dict? " + st_.str(ad.name).str() + " = null\"");
        return false;
      }
      ad.defaultValue = addExpr(mk(ExprKind::Null, rangeOf(t->K_NULL())));
    } else if (t->mapDef()) {
      ad.defaultValue = mapDef(t->mapDef());
    }
    return true;
  }

  void implementationDef(G::ImplementationDefContext* c) {
    Decl d = mkDecl(DeclKind::Implementation, rangeOf(c));
    std::string name = c->name()->getText();
    d.nameRange = rangeOf(c->name());
    if (!checkDefinedName(name, d.nameRange)) return;
    d.name = st_.intern(name);
    d.forEntity = st_.intern(c->classRef()->getText());
    if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
    auto [b, e] = pushStmts(c->statement());
    d.bodyBegin = b;
    d.bodyEnd = e;
    addDecl(d);
  }

  void implementDef(G::ImplementDefContext* c) {
    Decl d = mkDecl(DeclKind::Implement, rangeOf(c));
    d.name = st_.intern(c->classRef()->getText());
    d.nameRange = rangeOf(c->classRef());
    d.nameBegin = uint32_t(ast_.names.size());
    bool parents = false;
    for (G::ImplRefContext* r : c->implRef()) {
      std::string n = r->getText();
      if (n == "parents") parents = true;
      ast_.names.push_back(NameRef{st_.intern(n), rangeOf(r)});
    }
    d.nameEnd = uint32_t(ast_.names.size());
    if (c->expression()) {
      if (parents) {
        Diagnostic& e = error(DiagKind::Runtime, d.nameRange, "Conditional implementation with parents not allowed");
        e.reportedIn = "Implement(" + c->classRef()->getText() + ")";
        return;
      }
      d.expr = expression(c->expression());
    }
    if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
    addDecl(d);
  }

  Multiplicity multi(G::MultiContext* m) {
    Multiplicity r;
    auto ints = m->INT();
    // Bounds are 32-bit (kUnbounded excluded); a larger bound is an error, never a wrapped value.
    auto val = [&](size_t i) {
      uint64_t v = 0;
      if (llvm::StringRef(ints[i]->getText()).getAsInteger(10, v) || v >= Multiplicity::kUnbounded) {
        error(DiagKind::ParserError, rangeOf(ints[i]),
              fmt::format("relation multiplicity {} is out of range (at most {})", ints[i]->getText(),
                          Multiplicity::kUnbounded - 1));
        return uint32_t(0);
      }
      return uint32_t(v);
    };
    bool colon = m->COLON() != nullptr;
    if (!colon) { r.low = r.high = val(0); }
    else if (ints.size() == 2) { r.low = val(0); r.high = val(1); }
    else if (ints.size() == 1 && m->INT(0)->getSymbol()->getTokenIndex() < m->COLON()->getSymbol()->getTokenIndex()) {
      r.low = val(0);
      r.high = Multiplicity::kUnbounded;
    } else {
      r.low = 0;
      r.high = val(0);
    }
    return r;
  }

  void relation(G::RelationContext* c) {
    Decl d = mkDecl(DeclKind::Relation, rangeOf(c));
    G::RelationEndContext* l = c->relationEnd();
    d.left.entity = st_.intern(l->classRef()->getText());
    d.left.entityRange = rangeOf(l->classRef());
    std::string ln = l->anyId()->getText();
    d.left.nameRange = rangeOf(l->anyId());
    if (!checkDefinedName(ln, d.left.nameRange)) return;
    d.left.name = st_.intern(ln);
    d.left.mult = multi(l->multi());
    G::RelationTargetContext* r = c->relationTarget();
    d.right.entity = st_.intern(r->classRef()->getText());
    d.right.entityRange = rangeOf(r->classRef());
    if (r->anyId()) {
      std::string rn = r->anyId()->getText();
      d.right.nameRange = rangeOf(r->anyId());
      if (!checkDefinedName(rn, d.right.nameRange)) return;
      d.right.name = st_.intern(rn);
      d.right.mult = multi(r->multi());
    }
    if (c->annotations()) {
      d.hasAnnotations = true;
      std::vector<ExprId> anns;
      for (G::AnnotationContext* a : c->annotations()->annotation()) anns.push_back(expression(a->expression()));
      d.annBegin = uint32_t(ast_.exprLists.size());
      ast_.exprLists.insert(ast_.exprLists.end(), anns.begin(), anns.end());
      d.annEnd = uint32_t(ast_.exprLists.size());
    }
    if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
    addDecl(d);
  }

  bool mentionsSelf(ExprId id, StringId typedefName) { return frontend::mentionsSelf(ast_, st_, id, typedefName); }

  void typedefDef(G::TypedefDefContext* c) {
    if (auto* t = dynamic_cast<G::TypedefCtorContext*>(c)) {
      error(DiagKind::SyntaxErrorDetail, rangeOf(t->CID()), "The use of default constructors is no longer supported");
      return;
    }
    Decl d = mkDecl(DeclKind::Typedef, rangeOf(c));
    G::NameContext* n;
    G::NsRefContext* base;
    if (auto* t = dynamic_cast<G::TypedefExprContext*>(c)) {
      n = t->name();
      base = t->nsRef();
      if (t->MLS()) d.doc = st_.intern(mlsBody(t->MLS()->getText(), t->MLS()->getSymbol()));
    } else {
      auto* r = dynamic_cast<G::TypedefRegexContext*>(c);
      n = r->name();
      base = r->nsRef();
      if (r->MLS()) d.doc = st_.intern(mlsBody(r->MLS()->getText(), r->MLS()->getSymbol()));
    }
    std::string name = n->getText();
    d.nameRange = rangeOf(n);
    if (!checkDefinedName(name, d.nameRange)) return;
    d.name = st_.intern(name);
    d.forEntity = st_.intern(base->getText());
    if (auto* t = dynamic_cast<G::TypedefExprContext*>(c)) {
      d.expr = expression(t->expression());
      if (!d.expr.valid()) return;
      if (!mentionsSelf(d.expr, d.name)) {
        Diagnostic& e = error(DiagKind::Typing, rangeOf(t->expression()), "typedef expressions should reference the self variable");
        (void)e;
        return;
      }
    } else {
      auto* r = dynamic_cast<G::TypedefRegexContext*>(c);
      d.expr = regex(r->REGEX());
      if (!d.expr.valid()) return;
    }
    addDecl(d);
  }

  void indexDef(G::IndexDefContext* c) {
    Decl d = mkDecl(DeclKind::Index, rangeOf(c));
    d.name = st_.intern(c->classRef()->getText());
    d.nameRange = rangeOf(c->classRef());
    d.nameBegin = uint32_t(ast_.names.size());
    for (G::AnyIdContext* a : c->anyId()) ast_.names.push_back(NameRef{st_.intern(a->getText()), rangeOf(a)});
    d.nameEnd = uint32_t(ast_.names.size());
    addDecl(d);
  }

  // ---------------------------------------------------------------- statements
  StmtId statement(G::StatementContext* c) {
    if (auto* a = c->assign()) return assign(a);
    if (auto* f = c->forStmt()) return forStmt(f);
    if (auto* i = c->ifStmt()) return ifBody(i->ifBody(), rangeOf(i));
    Stmt s;
    s.kind = StmtKind::ExprStmt;
    s.range = rangeOf(c);
    s.value = expression(c->expression());
    if (!s.value.valid()) return StmtId{};
    return addStmt(s);
  }

  StmtId assign(G::AssignContext* c) {
    Stmt s;
    s.kind = StmtKind::Assign;
    s.range = rangeOf(c);
    s.plusAssign = c->PEQ() != nullptr;
    s.target = varRef(c->varRef());
    if (!s.target.valid()) return StmtId{};
    const Expr& t = ast_.exprs[s.target];
    if (t.kind == ExprKind::Name) {
      if (s.plusAssign) {
        error(DiagKind::ParserError, rangeOf(c), "Can not perform += on variable " + st_.str(t.name).str());
        return StmtId{};
      }
      llvm::StringRef n = st_.str(t.name);
      if (!n.contains("::") && n.contains('-')) {
        error(DiagKind::Hyphen, t.range, n.str());
        return StmtId{};
      }
    }
    s.value = expression(c->expression());
    if (!s.value.valid()) return StmtId{};
    return addStmt(s);
  }

  StmtId forStmt(G::ForStmtContext* c) {
    Stmt s;
    s.kind = StmtKind::For;
    s.range = rangeOf(c);
    std::string var = c->anyId()->getText();
    s.varRange = rangeOf(c->anyId());
    if (!checkDefinedName(var, s.varRange)) return StmtId{};
    s.var = st_.intern(var);
    s.value = expression(c->expression());
    if (!s.value.valid()) return StmtId{};
    auto [b, e] = pushStmts(c->statement());
    s.bodyBegin = b;
    s.bodyEnd = e;
    return addStmt(s);
  }

  StmtId ifBody(G::IfBodyContext* c, SourceRange r) {
    Stmt s;
    s.kind = StmtKind::If;
    s.range = r;
    s.value = expression(c->expression());
    if (!s.value.valid()) return StmtId{};
    std::vector<G::StatementContext*> thenPart, elsePart;
    bool inElse = false;
    for (antlr4::tree::ParseTree* ch : c->children) {
      if (auto* term = dynamic_cast<antlr4::tree::TerminalNode*>(ch)) {
        if (term->getSymbol()->getType() == grammar::InmantaLexer::K_ELSE) inElse = true;
        continue;
      }
      if (auto* st = dynamic_cast<G::StatementContext*>(ch)) (inElse ? elsePart : thenPart).push_back(st);
    }
    auto [b, e] = pushStmts(thenPart);
    s.bodyBegin = b;
    s.bodyEnd = e;
    if (c->ifBody()) {
      StmtId nested = ifBody(c->ifBody(), rangeOf(c->ifBody()));
      s.elseBegin = uint32_t(ast_.stmtLists.size());
      if (nested.valid()) ast_.stmtLists.push_back(nested);
      s.elseEnd = uint32_t(ast_.stmtLists.size());
    } else {
      auto [eb, ee] = pushStmts(elsePart);
      s.elseBegin = eb;
      s.elseEnd = ee;
    }
    return addStmt(s);
  }

  // ---------------------------------------------------------------- expressions
  /// The alternative of an expression node, found from its shape instead of a chain of dynamic_casts
  /// (the builder's hottest path): one child = primary, two = `not e`, else the operator token child(1).
  static size_t exprOp(G::ExpressionContext* c) {
    if (c->children.size() == 1) return 0;
    if (c->children.size() == 2) return grammar::InmantaLexer::K_NOT;
    return static_cast<antlr4::tree::TerminalNode*>(c->children[1])->getSymbol()->getType();
  }
  static G::ExpressionContext* sub(G::ExpressionContext* c, size_t i) {
    return static_cast<G::ExpressionContext*>(c->children[i]);
  }

  ExprId expression(G::ExpressionContext* c) {
    using L = grammar::InmantaLexer;
    if (!c) return ExprId{};
    size_t op = exprOp(c);
    if (op == 0) return primary(static_cast<G::PrimaryContext*>(c->children[0]));
    SourceRange r = rangeOf(c);
    size_t n = c->children.size();
    switch (op) {
    case L::K_NOT: {
      if (n == 4) return binary(ExprKind::NotIn, BinaryOp::Eq, sub(c, 0), sub(c, 3), r);  // a not in b
      ExprId a = expression(sub(c, 1));
      if (!a.valid()) return a;
      Expr e = mk(ExprKind::Not, r);
      e.a = a;
      return addExpr(e);
    }
    case L::K_IN: return binary(ExprKind::In, BinaryOp::Eq, sub(c, 0), sub(c, 2), r);
    case L::DSTAR: return binary(ExprKind::Binary, BinaryOp::Pow, sub(c, 0), sub(c, 2), r);
    case L::STAR: return binary(ExprKind::Binary, BinaryOp::Mul, sub(c, 0), sub(c, 2), r);
    case L::DIV: return binary(ExprKind::Binary, BinaryOp::Div, sub(c, 0), sub(c, 2), r);
    case L::PERCENT: return binary(ExprKind::Binary, BinaryOp::Mod, sub(c, 0), sub(c, 2), r);
    case L::PLUS: return binary(ExprKind::Binary, BinaryOp::Add, sub(c, 0), sub(c, 2), r);
    case L::MINUS: return binary(ExprKind::Binary, BinaryOp::Sub, sub(c, 0), sub(c, 2), r);
    case L::CMP_OP: {
      std::string o = static_cast<antlr4::tree::TerminalNode*>(c->children[1])->getText();
      BinaryOp b = o == "==" ? BinaryOp::Eq : o == "!=" ? BinaryOp::Ne : o == "<" ? BinaryOp::Lt
                   : o == ">" ? BinaryOp::Gt : o == "<=" ? BinaryOp::Le : BinaryOp::Ge;
      return binary(ExprKind::Binary, b, sub(c, 0), sub(c, 2), r);
    }
    case L::K_AND: return binary(ExprKind::And, BinaryOp::Eq, sub(c, 0), sub(c, 2), r);
    case L::K_OR: return binary(ExprKind::Or, BinaryOp::Eq, sub(c, 0), sub(c, 2), r);
    case L::QMARK: {
      ExprId a = expression(sub(c, 0)), b = expression(sub(c, 2)), cc = expression(sub(c, 4));
      if (!a.valid() || !b.valid() || !cc.valid()) return ExprId{};
      Expr e = mk(ExprKind::Conditional, r);
      e.a = a;
      e.b = b;
      e.c = cc;
      return addExpr(e);
    }
    default: return ExprId{};
    }
  }

  ExprId binary(ExprKind k, BinaryOp op, G::ExpressionContext* l, G::ExpressionContext* rr, SourceRange r) {
    ExprId a = expression(l), b = expression(rr);
    if (!a.valid() || !b.valid()) return ExprId{};
    Expr e = mk(k, r);
    e.op = op;
    e.a = a;
    e.b = b;
    return addExpr(e);
  }

  ExprId primary(G::PrimaryContext* c) {
    // fast paths for the most common shapes (a single rule child), avoiding dynamic_cast chains
    if (c->children.size() == 1 && c->getStart()->getType() != grammar::InmantaLexer::LPAREN) {
      auto* child = static_cast<antlr4::ParserRuleContext*>(c->children[0]);
      switch (child->getRuleIndex()) {
      case G::RuleConstant: return constant(static_cast<G::ConstantContext*>(child));
      case G::RuleVarRef: return varRef(static_cast<G::VarRefContext*>(child));
      case G::RuleConstructor: return constructor(static_cast<G::ConstructorContext*>(child));
      case G::RuleFunctionCall: return functionCall(static_cast<G::FunctionCallContext*>(child));
      default: break;
      }
    }
    SourceRange r = rangeOf(c);
    if (auto* x = dynamic_cast<G::ParenPrimaryContext*>(c)) return expression(x->expression());
    if (auto* x = dynamic_cast<G::ConstPrimaryContext*>(c)) return constant(x->constant());
    if (auto* x = dynamic_cast<G::VarPrimaryContext*>(c)) return varRef(x->varRef());
    if (auto* x = dynamic_cast<G::ConstructorPrimaryContext*>(c)) return constructor(x->constructor());
    if (auto* x = dynamic_cast<G::CallPrimaryContext*>(c)) return functionCall(x->functionCall());
    if (auto* x = dynamic_cast<G::ListPrimaryContext*>(c)) {
      std::vector<ExprId> items;
      for (G::ExpressionContext* e : x->listDef()->expression()) {
        ExprId id = expression(e);
        if (!id.valid()) return id;
        items.push_back(id);
      }
      Expr e = mk(ExprKind::List, r);
      e.begin = uint32_t(ast_.exprLists.size());
      ast_.exprLists.insert(ast_.exprLists.end(), items.begin(), items.end());
      e.end = uint32_t(ast_.exprLists.size());
      return addExpr(e);
    }
    if (auto* x = dynamic_cast<G::MapPrimaryContext*>(c)) return mapDef(x->mapDef());
    if (auto* x = dynamic_cast<G::ComprehensionPrimaryContext*>(c)) return comprehension(x->listComprehension());
    if (auto* x = dynamic_cast<G::IndexLookupPrimaryContext*>(c)) return indexLookup(x->indexLookup());
    if (auto* x = dynamic_cast<G::MapLookupPrimaryContext*>(c)) return mapLookup(x->mapLookup());
    if (auto* x = dynamic_cast<G::IsDefinedPrimaryContext*>(c)) {
      // only a bare name or an attribute reference can be tested: `ns::x is defined` is a syntax error
      if (x->varRef()->anyIdOrCid().empty() && x->varRef()->nsRef()->anyId().size() > 1) {
        error(DiagKind::SyntaxError, rangeOf(x->K_IS()), "is");
        return ExprId{};
      }
      ExprId v = varRef(x->varRef());
      if (!v.valid()) return v;
      Expr e = mk(ExprKind::IsDefined, r);
      e.a = v;
      return addExpr(e);
    }
    if (auto* x = dynamic_cast<G::MapIsDefinedPrimaryContext*>(c)) {
      // (key in map) and (map[key] != null) and (map[key] != [])
      ExprId lookup = mapLookup(x->mapLookup());
      if (!lookup.valid()) return lookup;
      return desugarMapIsDefined(ast_, lookup, r);
    }
    return ExprId{};
  }

  ExprId varRef(G::VarRefContext* c) {
    for (G::AnyIdContext* id : c->nsRef()->anyId())
      if (id->keywordAsId()) {
        error(DiagKind::ReservedKeyword, rangeOf(id), id->getText());
        return ExprId{};
      }
    for (G::AnyIdOrCidContext* part : c->anyIdOrCid())
      if (part->keywordAsId()) {
        error(DiagKind::ReservedKeyword, rangeOf(part), part->getText());
        return ExprId{};
      }
    std::string ns = c->nsRef()->getText();
    Expr e = mk(ExprKind::Name, rangeOf(c->nsRef()));
    e.name = st_.intern(ns);
    ExprId cur = addExpr(e);
    for (G::AnyIdOrCidContext* part : c->anyIdOrCid()) {
      std::string n = part->getText();
      if (part->CID()) {
        error(DiagKind::InvalidNamespaceAccess, rangeOf(part),
              fmt::format("invalid identifier, {} is a type; namespaces should be accessed with '::' instead of '.'", n));
        return ExprId{};
      }
      Expr a = mk(ExprKind::AttrRef, SourceRange{file_, e.range.line, e.range.col, uint32_t(part->getStop()->getLine()),
                                                   uint32_t(part->getStop()->getCharPositionInLine() + 1 + n.size())});
      a.a = cur;
      a.name = st_.intern(n);
      cur = addExpr(a);
    }
    return cur;
  }

  /// `name=value` of a call or constructor: a keyword as the name is the reference's ReservedKeyword error.
  bool keywordArg(G::AnyIdContext* id, G::ExpressionContext* value, Arg& arg) {
    arg.kind = ArgKind::Keyword;
    if (id->keywordAsId()) {
      error(DiagKind::ReservedKeyword, rangeOf(id), id->getText());
      return false;
    }
    arg.name = st_.intern(id->getText());
    arg.value = expression(value);
    return true;
  }
  void storeArgs(const std::vector<Arg>& out, Expr& e) {
    e.argBegin = uint32_t(ast_.args.size());
    ast_.args.insert(ast_.args.end(), out.begin(), out.end());
    e.argEnd = uint32_t(ast_.args.size());
  }

  bool args(const std::vector<G::ArgContext*>& as, Expr& e) {
    std::vector<Arg> out;
    for (G::ArgContext* a : as) {
      Arg arg;
      arg.range = rangeOf(a);
      if (auto* k = dynamic_cast<G::KwArgContext*>(a)) {
        if (!keywordArg(k->anyId(), k->expression(), arg)) return false;
      } else if (auto* s = dynamic_cast<G::SpreadArgContext*>(a)) {
        arg.kind = ArgKind::Spread;
        arg.value = expression(s->expression());
      } else {
        arg.value = expression(dynamic_cast<G::PosArgContext*>(a)->expression());
      }
      if (!arg.value.valid()) return false;
      out.push_back(arg);
    }
    storeArgs(out, e);
    return true;
  }

  bool kwargs(const std::vector<G::KwargContext*>& as, Expr& e) {
    std::vector<Arg> out;
    for (G::KwargContext* a : as) {
      Arg arg;
      arg.range = rangeOf(a);
      if (auto* k = dynamic_cast<G::KwKwargContext*>(a)) {
        if (!keywordArg(k->anyId(), k->expression(), arg)) return false;
      } else {
        arg.kind = ArgKind::Spread;
        arg.value = expression(dynamic_cast<G::SpreadKwargContext*>(a)->expression());
      }
      if (!arg.value.valid()) return false;
      out.push_back(arg);
    }
    storeArgs(out, e);
    return true;
  }

  ExprId functionCall(G::FunctionCallContext* c) {
    G::VarRefContext* v = c->varRef();
    if (!v->anyIdOrCid().empty()) {
      error(DiagKind::InvalidNamespaceAccess, rangeOf(v),
            fmt::format("invalid namespace access `{}`: namespaces should be accessed with '::' instead of '.'",
                        v->getText()));
      return ExprId{};
    }
    Expr e = mk(ExprKind::Call, rangeOf(c));
    e.name = st_.intern(v->nsRef()->getText());
    if (!args(c->arg(), e)) return ExprId{};
    return addExpr(e);
  }

  ExprId constructor(G::ConstructorContext* c) {
    Expr e = mk(ExprKind::Constructor, rangeOf(c));
    e.name = st_.intern(c->classRef()->getText());
    if (!kwargs(c->kwarg(), e)) return ExprId{};
    return addExpr(e);
  }

  ExprId indexLookup(G::IndexLookupContext* c) {
    if (auto* t = dynamic_cast<G::TypeIndexLookupContext*>(c)) {
      Expr e = mk(ExprKind::IndexLookup, rangeOf(c));
      e.name = st_.intern(t->classRef()->getText());
      if (!kwargs(t->kwarg(), e)) return ExprId{};
      return addExpr(e);
    }
    auto* s = dynamic_cast<G::ShortIndexLookupContext*>(c);
    Expr e = mk(ExprKind::ShortIndexLookup, rangeOf(c));
    e.a = varRef(s->varRef());
    if (!e.a.valid()) return ExprId{};
    e.name = st_.intern(s->anyId()->getText());
    if (!kwargs(s->kwarg(), e)) return ExprId{};
    return addExpr(e);
  }

  ExprId mapLookup(G::MapLookupContext* c) {
    ExprId cur = varRef(c->varRef());
    if (!cur.valid()) return cur;
    SourceRange base = rangeOf(c->varRef());
    for (G::ExpressionContext* k : c->expression()) {
      ExprId key = expression(k);
      if (!key.valid()) return key;
      Expr e = mk(ExprKind::MapLookup, SourceRange{file_, base.line, base.col, uint32_t(k->getStop()->getLine()),
                                                   uint32_t(k->getStop()->getCharPositionInLine() + 2)});
      e.a = cur;
      e.b = key;
      cur = addExpr(e);
    }
    return cur;
  }

  ExprId comprehension(G::ListComprehensionContext* c) {
    Expr e = mk(ExprKind::ListComprehension, rangeOf(c));
    e.a = expression(c->expression());
    if (!e.a.valid()) return ExprId{};
    std::vector<ComprehensionLoop> loops;
    for (G::CompForContext* f : c->compFor()) {
      ComprehensionLoop l;
      l.var = st_.intern(f->anyId()->getText());
      l.range = rangeOf(f);
      l.iterable = expression(f->expression());
      if (!l.iterable.valid()) return ExprId{};
      loops.push_back(l);
    }
    std::vector<ExprId> guards;
    for (G::CompIfContext* g : c->compIf()) {
      ExprId id = expression(g->expression());
      if (!id.valid()) return id;
      guards.push_back(id);
    }
    e.loopBegin = uint32_t(ast_.loops.size());
    ast_.loops.insert(ast_.loops.end(), loops.begin(), loops.end());
    e.loopEnd = uint32_t(ast_.loops.size());
    e.begin = uint32_t(ast_.exprLists.size());
    ast_.exprLists.insert(ast_.exprLists.end(), guards.begin(), guards.end());
    e.end = uint32_t(ast_.exprLists.size());
    return addExpr(e);
  }

  ExprId mapDef(G::MapDefContext* c) {
    Expr e = mk(ExprKind::Dict, rangeOf(c));
    std::vector<StringId> keys;
    std::vector<ExprId> values;
    auto ks = c->dictKey();
    auto vs = c->expression();
    for (size_t i = 0; i < ks.size(); ++i) {
      antlr4::Token* tok = ks[i]->getStart();
      std::string text = tok->getText();
      std::string key;
      int type = int(tok->getType());
      if (type == grammar::InmantaLexer::RSTRING) key = text.substr(2, text.size() - 3);
      else if (type == grammar::InmantaLexer::STRING) {
        bool bad = false, badCp = false;
        key = decodeEscapes(llvm::StringRef(text).drop_front().drop_back(), &bad, &badCp);
        if (badCp) badCodePoint(tok);
        if (!findPlaceholders(key).empty()) {
          error(DiagKind::ParserError, rangeOf(tok, tok),
                "String interpolation is not supported in dictionary keys. Use raw string to use a key containing "
                "double curly brackets");
          return ExprId{};
        }
      } else {
        error(DiagKind::SyntaxError, rangeOf(tok, tok), text);
        return ExprId{};
      }
      StringId k = st_.intern(key);
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) {
        error(DiagKind::Duplicate, rangeOf(tok, tok), "duplicate key in dict " + key);
        return ExprId{};
      }
      ExprId v = expression(vs[i]);
      if (!v.valid()) return v;
      keys.push_back(k);
      values.push_back(v);
    }
    e.begin = uint32_t(ast_.exprLists.size());
    ast_.exprLists.insert(ast_.exprLists.end(), values.begin(), values.end());
    e.end = uint32_t(ast_.exprLists.size());
    e.keyBegin = uint32_t(ast_.dictKeys.size());
    ast_.dictKeys.insert(ast_.dictKeys.end(), keys.begin(), keys.end());
    e.keyEnd = uint32_t(ast_.dictKeys.size());
    return addExpr(e);
  }

  // ---------------------------------------------------------------- literals
  std::string mlsBody(const std::string& text, antlr4::Token* tok) {
    bool bad = false, badCp = false;
    std::string body = decodeEscapes(llvm::StringRef(text).drop_front(3).drop_back(3), &bad, &badCp);
    if (badCp) badCodePoint(tok);
    if (bad) warnEscape(tok);
    return body;
  }

  void badCodePoint(antlr4::Token* tok) {
    error(DiagKind::InvalidEncoding, rangeOf(tok, tok),
          "invalid escape in string: a surrogate (\\ud800-\\udfff) or a code point above \\U0010ffff cannot be "
          "encoded in UTF-8");
  }

  void warnEscape(antlr4::Token* tok) {
    Diagnostic d = makeDiag(DiagKind::InvalidEscape, rangeOf(tok, tok));
    diags_.report(std::move(d));
  }

  ExprId regex(antlr4::tree::TerminalNode* n) {
    std::string text = n->getText();
    size_t b = text.find('/'), e = text.rfind('/');
    std::string pattern = text.substr(b + 1, e - b - 1);
    if (std::string err = checkRegex(pattern); !err.empty()) {
      error(DiagKind::ParserError, rangeOf(n), fmt::format("Regex error in /{}/: {}", pattern, err));
      return ExprId{};
    }
    Expr x = mk(ExprKind::Regex, rangeOf(n));
    x.name = st_.intern(pattern);
    return addExpr(x);
  }

  ExprId stringValue(const std::string& decoded, const std::string& original, SourceRange r) {
    return stringLiteral(ast_, st_, decoded, original, r);
  }

  /// "a.b.c" -> AttrRef(AttrRef(Name a, b), c)
  ExprId dottedRef(const std::string& text, SourceRange r) { return frontend::dottedRef(ast_, st_, text, r); }

  bool fparts(const std::vector<FField>& fields, SourceRange r, std::vector<FormatPart>& out, llvm::StringRef raw) {
    for (const FField& f : fields) {
      FormatPart p;
      if (!f.isField) {
        p.literal = st_.intern(f.literal);
        out.push_back(p);
        continue;
      }
      if (f.name.empty()) {
        Diagnostic& d = error(DiagKind::Runtime, r,
                              "f-strings do not support positional substitutions via '{}', use variable or attribute "
                              "keys instead");
        d.reportedIn = pyStrRepr(raw);  // the reference reports it in the f-string literal
        return false;
      }
      p.fieldText = st_.intern(f.name);
      p.expr = dottedRef(f.name, r);
      p.conversion = f.conversion;
      std::vector<FormatPart> spec;
      if (!fparts(f.spec, r, spec, raw)) return false;
      // spec parts are stored after this field's slot; remember where
      p.specBegin = p.specEnd = 0;
      out.push_back(p);
      size_t idx = out.size() - 1;
      // Spec parts go to a separate run appended now (indices into ast_.formatParts)
      uint32_t sb = uint32_t(ast_.formatParts.size());
      ast_.formatParts.insert(ast_.formatParts.end(), spec.begin(), spec.end());
      out[idx].specBegin = sb;
      out[idx].specEnd = uint32_t(ast_.formatParts.size());
    }
    return true;
  }

  ExprId constant(G::ConstantContext* c) {
    antlr4::Token* tok = c->getStart();
    SourceRange r = rangeOf(tok, tok);
    std::string text = tok->getText();
    switch (tok->getType()) {
    case grammar::InmantaLexer::INT: {
      Expr e = mk(ExprKind::Int, r);
      if (llvm::StringRef(text).getAsInteger(10, e.intValue)) {
        // does not fit in int64: keep the literal text (name) and an approximation (floatValue)
        e.bigInt = true;
        e.intValue = 0;
        e.name = st_.intern(text);
        e.floatValue = std::strtod(text.c_str(), nullptr);
      }
      return addExpr(e);
    }
    case grammar::InmantaLexer::FLOAT: {
      Expr e = mk(ExprKind::Float, r);
      e.floatValue = std::strtod(text.c_str(), nullptr);
      return addExpr(e);
    }
    case grammar::InmantaLexer::K_NULL: return addExpr(mk(ExprKind::Null, r));
    case grammar::InmantaLexer::K_TRUE:
    case grammar::InmantaLexer::K_FALSE: {
      Expr e = mk(ExprKind::Bool, r);
      e.intValue = tok->getType() == grammar::InmantaLexer::K_TRUE;
      return addExpr(e);
    }
    case grammar::InmantaLexer::REGEX: return regex(c->REGEX());
    case grammar::InmantaLexer::RSTRING: {
      Expr e = mk(ExprKind::String, r);
      e.name = st_.intern(text.substr(2, text.size() - 3));
      return addExpr(e);
    }
    case grammar::InmantaLexer::MLS: {
      std::string body = mlsBody(text, tok);
      return stringValue(body, body, r);
    }
    case grammar::InmantaLexer::STRING: {
      bool bad = false, badCp = false;
      std::string raw = text.substr(1, text.size() - 2);
      std::string body = decodeEscapes(raw, &bad, &badCp);
      if (badCp) badCodePoint(tok);
      if (bad) warnEscape(tok);
      return stringValue(body, raw, r);
    }
    case grammar::InmantaLexer::FSTRING: {
      bool bad = false, badCp = false;
      std::string raw = text.substr(2, text.size() - 3);
      std::string body = decodeEscapes(raw, &bad, &badCp);
      if (badCp) badCodePoint(tok);
      if (bad) warnEscape(tok);
      std::vector<FField> fields;
      std::string err;
      if (!parseFString(body, fields, err)) {
        error(DiagKind::ParserError, r, "Invalid f-string: " + err);
        return ExprId{};
      }
      std::vector<FormatPart> parts;
      if (!fparts(fields, r, parts, raw)) return ExprId{};
      Expr e = mk(ExprKind::FString, r);
      e.name = st_.intern(raw);
      e.partBegin = uint32_t(ast_.formatParts.size());
      ast_.formatParts.insert(ast_.formatParts.end(), parts.begin(), parts.end());
      e.partEnd = uint32_t(ast_.formatParts.size());
      return addExpr(e);
    }
    }
    return ExprId{};
  }
};

/// Reports the first syntax error of a file (the reference stops at the first one too).
void reportSyntaxError(const SyntaxError& e, FileId file, DiagnosticEngine& diags) {
  Diagnostic d;
  if (!e.set) d = makeDiag(DiagKind::SyntaxErrorDetail, SourceRange::at(SourceLoc{file, 1, 1}), "could not parse file");
  else if (e.kind == DiagKind::UnexpectedEof) d = makeDiag(e.kind, e.range);
  else if (e.kind == DiagKind::IllegalCharacter && e.arg.size() > 1) {
    // lexer message "token recognition error at: 'x'"
    std::string c = e.arg;
    size_t q = c.find('\'');
    if (q != std::string::npos) c = c.substr(q + 1, c.size() - q - 2);
    d = makeDiag(e.kind, e.range, c);
  } else d = makeDiag(e.kind, e.range, e.arg);
  d.locWithColumn = true;
  diags.report(std::move(d));
}

/// The ANTLR path: the reference parser, and the one that reports syntax errors.
/// Bounds ANTLR's own recursion: its rule invocations nest with the input's brackets and prefix operators, and
/// the generated parser cannot be changed, so a parse listener counts them and aborts the parse (an exception
/// that is no RecognitionException passes through the generated code) when the nesting passes the limit.
struct AntlrTooDeep {
  size_t line, col;
};
class NestingListener : public antlr4::tree::ParseTreeListener {
 public:
  explicit NestingListener(antlr4::Parser& p) : parser_(p) {}
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}
  void enterEveryRule(antlr4::ParserRuleContext*) override {
    // About four rule levels per source level (expression alternatives, primary, argument lists).
    if (++depth_ > 4 * size_t(limits().maxNesting) + 64 || stackNearlyExhausted()) {
      antlr4::Token* t = parser_.getCurrentToken();
      throw AntlrTooDeep{t ? t->getLine() : 1, t ? t->getCharPositionInLine() + 1 : 1};
    }
  }
  void exitEveryRule(antlr4::ParserRuleContext*) override {
    if (depth_) --depth_;
  }
  void reset() { depth_ = 0; }

 private:
  antlr4::Parser& parser_;
  size_t depth_ = 0;
};

Ast parseFileAntlr(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags) {
  Ast ast;
  ast.file = file;
  llvm::StringRef text = sm.text(file);
  if (text.empty()) return ast;
  try {
    antlr4::ANTLRInputStream input(text.data(), text.size());
    grammar::InmantaLexer lexer(&input);
    lexer.removeErrorListeners();
    antlr4::CommonTokenStream tokens(&lexer);
    grammar::InmantaParser parser(&tokens);
    NestingListener nesting(parser);
    parser.addParseListener(&nesting);
    ErrorCollector errors(file, parser.getVocabulary());
    lexer.addErrorListener(&errors);
    parser.removeErrorListeners();
    auto* sim = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
    auto sllStrategy = std::make_shared<antlr4::BailErrorStrategy>();
    auto llStrategy = std::make_shared<antlr4::DefaultErrorStrategy>();
    Builder b(file, sm, strings, diags, ast);
    // The file is parsed one top-level statement at a time and each statement's parse tree is freed once
    // the builder has turned it into AST nodes: memory stays proportional to the largest statement.
    // Each statement is tried with SLL prediction first (bail out on error) and re-parsed in full LL mode
    // with error reporting only when SLL fails.
    if (tokens.LA(1) == grammar::InmantaLexer::MLS) {
      b.moduleDoc(tokens.LT(1));
      tokens.consume();
    }
    while (tokens.LA(1) != antlr4::Token::EOF) {
      size_t start = tokens.index();
      G::TopStmtContext* stmt = nullptr;
      nesting.reset();
      sim->setPredictionMode(antlr4::atn::PredictionMode::SLL);
      parser.setErrorHandler(sllStrategy);
      try {
        stmt = parser.topStmt();
      } catch (const antlr4::ParseCancellationException&) {
        stmt = nullptr;
      } catch (const antlr4::RecognitionException&) {
        stmt = nullptr;
      }
      if (!stmt || errors.first.set) {
        errors.first = SyntaxError{};
        parser.getTreeTracker().reset();
        nesting.reset();
        tokens.seek(start);
        parser.setErrorHandler(llStrategy);
        parser.addErrorListener(&errors);
        sim->setPredictionMode(antlr4::atn::PredictionMode::LL);
        try {
          stmt = parser.topStmt();
        } catch (const std::exception&) {
          stmt = nullptr;
        }  // AntlrTooDeep is no std::exception: it reaches the handler below
        parser.removeErrorListeners();
        if (!errors.first.set && stmt && tokens.index() == start) {
          // no progress without an error: report the token that could not start a statement
          errors.first.set = true;
          errors.first.kind = DiagKind::SyntaxError;
          antlr4::Token* t = tokens.LT(1);
          errors.first.range = SourceRange{file, uint32_t(t->getLine()), uint32_t(t->getCharPositionInLine() + 1),
                                           uint32_t(t->getLine()), uint32_t(t->getCharPositionInLine() + 2)};
          errors.first.arg = t->getText();
        }
      }
      if (errors.first.set || !stmt) {
        reportSyntaxError(errors.first, file, diags);
        return ast;
      }
      b.top(stmt);
      parser.getTreeTracker().reset();
    }
  } catch (const AntlrTooDeep& t) {
    SourceRange at{file, uint32_t(t.line), uint32_t(t.col), uint32_t(t.line), uint32_t(t.col + 1)};
    diags.error(DiagKind::NestedTooDeep, at,
                fmt::format("more than {} levels of brackets, operators or blocks (--max-nesting)", limits().maxNesting));
  } catch (const std::exception& e) {
    Diagnostic d = makeDiag(DiagKind::SyntaxErrorDetail, SourceRange::at(SourceLoc{file, 1, 1}),
                            std::string("could not parse file: ") + e.what());
    d.locWithColumn = true;
    diags.report(std::move(d));
  } catch (...) {
    Diagnostic d = makeDiag(DiagKind::SyntaxErrorDetail, SourceRange::at(SourceLoc{file, 1, 1}), "could not parse file");
    d.locWithColumn = true;
    diags.report(std::move(d));
  }
  return ast;
}

} // namespace

// Dispatch: the hand-written fast path (FastParser.h) first; on any doubt it gives up without a word and the
// ANTLR path parses the file and reports. INM_PARSER=antlr forces the ANTLR path; INM_PARSER=fast-strict makes
// a fast-path rejection of a file ANTLR accepts an error; INM_PARSER=fast-check runs both and reports any
// difference of the Asts (testing only).
/// Reports an Ast nested deeper than the limit (Nesting.h); such an Ast is replaced by an empty one so that no
/// later walk sees it. Returns the Ast to use.
static Ast checkedNesting(Ast ast, DiagnosticEngine& diags) {
  SourceRange at = findTooDeep(ast, limits().maxNesting);
  if (!at.file.valid()) return ast;
  diags.error(DiagKind::NestedTooDeep, at,
              fmt::format("more than {} levels of expressions and blocks (--max-nesting)", limits().maxNesting));
  Ast empty;
  empty.file = ast.file;
  return empty;
}

static Ast parseFileChecked(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags);

/// Before the ANTLR path: the first token where brackets plus a run of `not`s nest deeper than the limit, found
/// in one linear pass of the fast lexer. ANTLR's adaptive prediction looks ahead to the matching bracket at every
/// level, so 20,000 nested brackets cost it minutes before its recursion could be counted (found by the evaluator
/// fuzzer); this check answers first. An invalid range when within the limit.
static SourceRange tooDeepTokens(FileId file, llvm::StringRef text) {
  FastLexer lex(text);
  uint32_t brackets = 0, nots = 0;
  const uint32_t limit = limits().maxNesting;
  for (;;) {
    Token t = lex.next();
    if (t.kind == TokKind::Eof || t.kind == TokKind::Error) return SourceRange{};
    if (t.kind == TokKind::LParen || t.kind == TokKind::LBrack || t.kind == TokKind::LBrace) ++brackets;
    else if ((t.kind == TokKind::RParen || t.kind == TokKind::RBrack || t.kind == TokKind::RBrace) && brackets) --brackets;
    nots = t.kind == TokKind::KNot ? nots + 1 : 0;
    if (brackets + nots > limit) return SourceRange{file, t.line, t.col, t.endLine, t.endCol};
  }
}

/// Offset of the first byte that is not part of well-formed UTF-8 (overlong forms, surrogates and code points
/// above U+10FFFF included), or npos.
static size_t firstInvalidUtf8(llvm::StringRef t) {
  const auto* p = reinterpret_cast<const unsigned char*>(t.data());
  size_t n = t.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!len || i + len > n) return i;
    unsigned char c1 = p[i + 1];
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    else if (c == 0xED) hi = 0x9F;  // no surrogates
    else if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;
    if (c1 < lo || c1 > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return llvm::StringRef::npos;
}

Ast parseFile(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags) {
  unsigned before = diags.errorCount();
  // Invalid UTF-8 is reported at the offending byte's own line and column (columns count characters), before
  // either parser sees the text.
  llvm::StringRef text = sm.text(file);
  if (size_t bad = firstInvalidUtf8(text); bad != llvm::StringRef::npos) {
    size_t lineStart = text.rfind('\n', bad);
    lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
    uint32_t line = uint32_t(1 + text.take_front(bad).count('\n'));
    uint32_t col = 1;
    for (size_t k = lineStart; k < bad; ++k)
      if ((static_cast<unsigned char>(text[k]) & 0xC0) != 0x80) ++col;
    diags.error(DiagKind::InvalidEncoding, SourceRange{file, line, col, line, col + 1},
                fmt::format("invalid UTF-8: byte 0x{:02x} at line {}, column {} is not valid UTF-8", static_cast<unsigned char>(text[bad]),
                            line, col));
    Ast empty;
    empty.file = file;
    return empty;
  }
  Ast ast = parseFileChecked(file, sm, strings, diags);
  if (diags.errorCount() != before) return ast;
  return checkedNesting(std::move(ast), diags);
}

static Ast parseFileChecked(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags) {
  const char* env = std::getenv("INM_PARSER");
  llvm::StringRef mode = env ? env : "";
  if (mode == "antlr") return parseFileAntlr(file, sm, strings, diags);
  llvm::StringRef text = sm.text(file);
  Ast fast;
  fast.file = file;
  std::vector<SourceRange> warnings;
  SourceRange tooDeep;
  bool fastOk = text.empty() || fastParseFile(file, text, strings, fast, &warnings, &tooDeep);
  if (tooDeep.file.valid()) {
    diags.error(DiagKind::NestedTooDeep, tooDeep,
                fmt::format("more than {} levels of brackets, operators or blocks (--max-nesting)", limits().maxNesting));
    Ast empty;
    empty.file = file;
    return empty;
  }
  if (fastOk && mode != "fast-check") {
    for (const SourceRange& r : warnings) diags.report(makeDiag(DiagKind::InvalidEscape, r));
    return fast;
  }
  if (SourceRange deep = tooDeepTokens(file, text); deep.file.valid()) {
    diags.error(DiagKind::NestedTooDeep, deep,
                fmt::format("more than {} levels of brackets, operators or blocks (--max-nesting)", limits().maxNesting));
    Ast empty;
    empty.file = file;
    return empty;
  }
  unsigned before = diags.errorCount();
  Ast ast = parseFileAntlr(file, sm, strings, diags);
  bool antlrOk = diags.errorCount() == before;
  auto fail = [&](const std::string& msg) {
    Diagnostic& d = diags.error(DiagKind::CompilerError, SourceRange::at(SourceLoc{file, 1, 1}), msg);
    d.locWithColumn = true;
  };
  if (!fastOk && antlrOk && (mode == "fast-strict" || mode == "fast-check"))
    fail("fast parser rejected a file the ANTLR parser accepts");
  if (mode == "fast-check" && fastOk) {
    if (!antlrOk) fail("fast parser accepted a file the ANTLR parser rejects");
    else if (rawDumpAst(fast, strings) != rawDumpAst(ast, strings)) fail("fast parser built a different AST");
  }
  return ast;
}

} // namespace inm::frontend

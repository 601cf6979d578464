// The ANTLR path's builder, statement and expression rule family (AntlrBuilder.h): assignments, for, if/elif,
// operators, references, calls, constructors, lookups, list comprehensions and dict literals. Invariant: an
// invalid ExprId/StmtId is returned only after a diagnostic was reported.

#include "AntlrBuilder.h"

#include <fmt/format.h>

namespace inm::frontend {

StmtId AntlrBuilder::statement(G::StatementContext* c) {
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

StmtId AntlrBuilder::assign(G::AssignContext* c) {
  Stmt s;
  s.kind = StmtKind::Assign;
  s.range = rangeOf(c);
  s.plusAssign = c->PEQ() != nullptr;
  s.target = varRef(c->varRef());
  if (!s.target.valid()) return StmtId{};
  const Expr& t = ast_.exprs[s.target];
  if (t.kind == ExprKind::Name) {
    if (s.plusAssign) {
      error(DiagKind::PlusAssignOnVariable, rangeOf(c), st_.str(t.name).str());
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

StmtId AntlrBuilder::forStmt(G::ForStmtContext* c) {
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

StmtId AntlrBuilder::ifBody(G::IfBodyContext* c, SourceRange r) {
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

size_t AntlrBuilder::exprOp(G::ExpressionContext* c) {
  if (c->children.size() == 1) return 0;
  if (c->children.size() == 2) return grammar::InmantaLexer::K_NOT;
  return static_cast<antlr4::tree::TerminalNode*>(c->children[1])->getSymbol()->getType();
}

G::ExpressionContext* AntlrBuilder::sub(G::ExpressionContext* c, size_t i) {
  return static_cast<G::ExpressionContext*>(c->children[i]);
}

ExprId AntlrBuilder::expression(G::ExpressionContext* c) {
  using L = grammar::InmantaLexer;
  if (!c) return ExprId{};
  size_t op = exprOp(c);
  if (op == 0) return primary(static_cast<G::PrimaryContext*>(c->children[0]));
  SourceRange r = rangeOf(c);
  size_t n = c->children.size();
  switch (op) {
  case L::K_NOT: {
    if (n == 4) return binary(ExprKind::NotIn, BinaryOp::Eq, sub(c, 0), sub(c, 3), r); // a not in b
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
    BinaryOp b = o == "=="   ? BinaryOp::Eq
                 : o == "!=" ? BinaryOp::Ne
                 : o == "<"  ? BinaryOp::Lt
                 : o == ">"  ? BinaryOp::Gt
                 : o == "<=" ? BinaryOp::Le
                             : BinaryOp::Ge;
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

ExprId AntlrBuilder::binary(ExprKind k, BinaryOp op, G::ExpressionContext* l, G::ExpressionContext* rr,
                            SourceRange r) {
  ExprId a = expression(l), b = expression(rr);
  if (!a.valid() || !b.valid()) return ExprId{};
  Expr e = mk(k, r);
  e.op = op;
  e.a = a;
  e.b = b;
  return addExpr(e);
}

ExprId AntlrBuilder::primary(G::PrimaryContext* c) {
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
  if (auto* x = dynamic_cast<G::ComprehensionPrimaryContext*>(c))
    return comprehension(x->listComprehension());
  if (auto* x = dynamic_cast<G::IndexLookupPrimaryContext*>(c)) return indexLookup(x->indexLookup());
  if (auto* x = dynamic_cast<G::MapLookupPrimaryContext*>(c)) return mapLookup(x->mapLookup());
  if (auto* x = dynamic_cast<G::IsDefinedPrimaryContext*>(c)) {
    // only a bare name or an attribute reference can be tested: `ns::x is defined` is a syntax error
    if (x->varRef()->anyIdOrCid().empty() && x->varRef()->nsRef()->anyId().size() > 1) {
      error(DiagKind::SyntaxError, pastToken(file_, x->K_IS()->getSymbol()), "is");
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

ExprId AntlrBuilder::varRef(G::VarRefContext* c) {
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
      error(DiagKind::TypeAccessedWithDot, rangeOf(part), n);
      return ExprId{};
    }
    Expr a = mk(ExprKind::AttrRef,
                SourceRange{file_, e.range.line, e.range.col, uint32_t(part->getStop()->getLine()),
                            uint32_t(part->getStop()->getCharPositionInLine() + 1 + n.size())});
    a.a = cur;
    a.name = st_.intern(n);
    cur = addExpr(a);
  }
  return cur;
}

bool AntlrBuilder::keywordArg(G::AnyIdContext* id, G::ExpressionContext* value, Arg& arg) {
  arg.kind = ArgKind::Keyword;
  if (id->keywordAsId()) {
    error(DiagKind::ReservedKeyword, rangeOf(id), id->getText());
    return false;
  }
  arg.name = st_.intern(id->getText());
  arg.value = expression(value);
  return true;
}

void AntlrBuilder::storeArgs(const std::vector<Arg>& out, Expr& e) {
  e.argBegin = uint32_t(ast_.args.size());
  ast_.args.insert(ast_.args.end(), out.begin(), out.end());
  e.argEnd = uint32_t(ast_.args.size());
}

bool AntlrBuilder::args(const std::vector<G::ArgContext*>& as, Expr& e) {
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

bool AntlrBuilder::kwargs(const std::vector<G::KwargContext*>& as, Expr& e) {
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

ExprId AntlrBuilder::functionCall(G::FunctionCallContext* c) {
  G::VarRefContext* v = c->varRef();
  if (!v->anyIdOrCid().empty()) {
    error(DiagKind::InvalidNamespaceAccess, rangeOf(v), v->getText());
    return ExprId{};
  }
  Expr e = mk(ExprKind::Call, rangeOf(c));
  e.name = st_.intern(v->nsRef()->getText());
  if (!args(c->arg(), e)) return ExprId{};
  return addExpr(e);
}

ExprId AntlrBuilder::constructor(G::ConstructorContext* c) {
  if (!checkTypeRefParts(c->classRef()->anyId())) return ExprId{};
  Expr e = mk(ExprKind::Constructor, rangeOf(c));
  e.name = st_.intern(c->classRef()->getText());
  if (!kwargs(c->kwarg(), e)) return ExprId{};
  return addExpr(e);
}

ExprId AntlrBuilder::indexLookup(G::IndexLookupContext* c) {
  if (auto* t = dynamic_cast<G::TypeIndexLookupContext*>(c)) {
    if (!checkTypeRefParts(t->classRef()->anyId())) return ExprId{};
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

ExprId AntlrBuilder::mapLookup(G::MapLookupContext* c) {
  ExprId cur = varRef(c->varRef());
  if (!cur.valid()) return cur;
  SourceRange base = rangeOf(c->varRef());
  for (G::ExpressionContext* k : c->expression()) {
    ExprId key = expression(k);
    if (!key.valid()) return key;
    Expr e =
        mk(ExprKind::MapLookup, SourceRange{file_, base.line, base.col, uint32_t(k->getStop()->getLine()),
                                            uint32_t(k->getStop()->getCharPositionInLine() + 2)});
    e.a = cur;
    e.b = key;
    cur = addExpr(e);
  }
  return cur;
}

ExprId AntlrBuilder::comprehension(G::ListComprehensionContext* c) {
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

ExprId AntlrBuilder::mapDef(G::MapDefContext* c) {
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
    if (type == grammar::InmantaLexer::RSTRING)
      key = text.substr(2, text.size() - 3);
    else if (type == grammar::InmantaLexer::STRING) {
      bool bad = false, badCp = false;
      key = decodeEscapes(llvm::StringRef(text).drop_front().drop_back(), &bad, &badCp);
      if (badCp) badCodePoint(tok);
      if (!findPlaceholders(key).empty()) {
        error(DiagKind::InterpolationInDictKey, rangeOf(tok, tok));
        return ExprId{};
      }
    } else {
      error(DiagKind::SyntaxError, pastToken(file_, tok), text);
      return ExprId{};
    }
    StringId k = st_.intern(key);
    if (std::find(keys.begin(), keys.end(), k) != keys.end()) {
      error(DiagKind::DuplicateDictKey, rangeOf(tok, tok), key);
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

} // namespace inm::frontend

// The ANTLR path's builder, top-level rule family (AntlrBuilder.h): locations and errors, node helpers, and
// the definitions of a file (import, entity and its attributes, implementation, implement, relation, typedef,
// index). Invariant: a definition with a bad name is reported here and not added to the Ast.

#include "AntlrBuilder.h"

#include <fmt/format.h>

namespace inm::frontend {

void AntlrBuilder::build(G::MainContext* m) {
  if (m->MLS()) ast_.doc = st_.intern(mlsBody(m->MLS()->getText(), m->MLS()->getSymbol()));
  for (G::TopStmtContext* t : m->topStmt()) topStmt(t);
}

SourceRange pastToken(FileId file, antlr4::Token* tok) {
  SourceRange r;
  r.file = file;
  if (tok->getType() == antlr4::Token::EOF) {
    r.line = r.endLine = uint32_t(tok->getLine() + 1);
    r.col = r.endCol = 1;
    return r;
  }
  std::string t = tok->getText();
  size_t chars = size_t(std::count_if(t.begin(), t.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  r.line = r.endLine = uint32_t(tok->getLine() + std::count(t.begin(), t.end(), '\n'));
  r.col = r.endCol = uint32_t(tok->getCharPositionInLine() + 1 + chars);
  return r;
}

SourceRange AntlrBuilder::rangeOf(antlr4::Token* a, antlr4::Token* b) {
  assert(a && "every rule context and terminal has a start token");
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

bool AntlrBuilder::checkTypeRefParts(const std::vector<G::AnyIdContext*>& parts) {
  for (G::AnyIdContext* id : parts)
    if (id->keywordAsId()) {
      error(DiagKind::ReservedKeyword, rangeOf(id), id->getText());
      return false;
    }
  return true;
}

bool AntlrBuilder::checkDefinedName(llvm::StringRef name, SourceRange r) {
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

Expr AntlrBuilder::mk(ExprKind k, SourceRange r) {
  Expr e;
  e.kind = k;
  e.range = r;
  return e;
}

void AntlrBuilder::topStmt(G::TopStmtContext* t) {
  if (auto* c = t->statement()) {
    StmtId s = statement(c);
    if (s.valid()) ast_.topLevel.push_back(s);
  } else if (auto* c = t->entityDef())
    entityDef(c);
  else if (auto* c = t->implementDef())
    implementDef(c);
  else if (auto* c = t->implementationDef())
    implementationDef(c);
  else if (auto* c = t->relation())
    relation(c);
  else if (auto* c = t->typedefDef())
    typedefDef(c);
  else if (auto* c = t->indexDef())
    indexDef(c);
  else if (auto* c = t->importStmt())
    importStmt(c);
}

Decl AntlrBuilder::mkDecl(DeclKind k, SourceRange r) {
  Decl d;
  d.kind = k;
  d.range = r;
  return d;
}

void AntlrBuilder::importStmt(G::ImportStmtContext* c) {
  Decl d = mkDecl(DeclKind::Import, rangeOf(c));
  std::string path = c->nsRef()->getText();
  d.name = st_.intern(path);
  d.nameRange = rangeOf(c->nsRef());
  if (llvm::StringRef(path).contains('-')) {
    error(DiagKind::InvalidModuleName, d.nameRange, path);
    return;
  }
  if (c->anyId()) {
    std::string alias = c->anyId()->getText();
    if (!checkDefinedName(alias, rangeOf(c->anyId()))) return;
    d.alias = st_.intern(alias);
  }
  addDecl(d);
}

void AntlrBuilder::entityDef(G::EntityDefContext* c) {
  Decl d = mkDecl(DeclKind::Entity, rangeOf(c));
  std::string name = c->name()->getText();
  d.nameRange = rangeOf(c->name());
  if (!isupper((unsigned char)name[0])) {
    if (isKeyword(name))
      error(DiagKind::ReservedKeyword, d.nameRange, name);
    else
      error(DiagKind::SyntaxErrorDetail, d.nameRange,
            "Invalid identifier: Entity names must start with a capital");
    return;
  }
  if (!checkDefinedName(name, d.nameRange)) return;
  d.name = st_.intern(name);
  if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
  d.nameBegin = uint32_t(ast_.names.size());
  for (G::ParentRefContext* p : c->parentRef()) {
    if (!checkTypeRefParts(p->anyId())) return;
    std::string last = p->name()->getText();
    if (!isupper((unsigned char)last[0])) {
      error(DiagKind::SyntaxErrorDetail, rangeOf(p->name()),
            "Invalid identifier: Entity names must start with a capital");
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

bool AntlrBuilder::attrName(G::NameContext* n, AttrDecl& ad) {
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

bool AntlrBuilder::attr(G::AttrContext* a, AttrDecl& ad) {
  ad.range = rangeOf(a);
  if (auto* t = dynamic_cast<G::TypedAttrContext*>(a)) {
    G::AttrTypeContext* ty = t->attrType();
    ad.type.name = st_.intern(ty->nsRef()->getText());
    ad.type.range = rangeOf(ty);
    ad.type.isList = ty->LBRACK() != nullptr;
    ad.type.nullable = ty->QMARK() != nullptr;
    if (!attrName(t->name(), ad)) return false;
    if (t->K_UNDEF())
      ad.undef = true;
    else if (t->constant())
      ad.defaultValue = constant(t->constant());
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
  if (t->K_UNDEF())
    ad.undef = true;
  else if (t->K_NULL()) {
    if (!ad.type.nullable) {
      error(DiagKind::SyntaxErrorDetail, rangeOf(t->name()), // the reference points at the name
            "null can not be assigned to dict, did you mean \"dict? " + st_.str(ad.name).str() + " = null\"");
      return false;
    }
    ad.defaultValue = addExpr(mk(ExprKind::Null, rangeOf(t->K_NULL())));
  } else if (t->mapDef()) {
    ad.defaultValue = mapDef(t->mapDef());
  }
  return true;
}

void AntlrBuilder::implementationDef(G::ImplementationDefContext* c) {
  Decl d = mkDecl(DeclKind::Implementation, rangeOf(c));
  std::string name = c->name()->getText();
  d.nameRange = rangeOf(c->name());
  if (!checkDefinedName(name, d.nameRange)) return;
  d.name = st_.intern(name);
  if (!checkTypeRefParts(c->classRef()->anyId())) return;
  d.forEntity = st_.intern(c->classRef()->getText());
  if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
  auto [b, e] = pushStmts(c->statement());
  d.bodyBegin = b;
  d.bodyEnd = e;
  addDecl(d);
}

void AntlrBuilder::implementDef(G::ImplementDefContext* c) {
  Decl d = mkDecl(DeclKind::Implement, rangeOf(c));
  if (!checkTypeRefParts(c->classRef()->anyId())) return;
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
      Diagnostic& e = error(DiagKind::ConditionalImplementWithParents, d.nameRange);
      e.reportedIn = "Implement(" + c->classRef()->getText() + ")";
      return;
    }
    d.expr = expression(c->expression());
  }
  if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
  addDecl(d);
}

Multiplicity AntlrBuilder::multi(G::MultiContext* m) {
  Multiplicity r;
  auto ints = m->INT();
  // Bounds are 32-bit (kUnbounded excluded); a larger bound is an error, never a wrapped value.
  auto val = [&](size_t i) {
    uint64_t v = 0;
    if (llvm::StringRef(ints[i]->getText()).getAsInteger(10, v) || v >= Multiplicity::kUnbounded) {
      error(DiagKind::MultiplicityOutOfRange, rangeOf(ints[i]), ints[i]->getText(),
            Multiplicity::kUnbounded - 1);
      return uint32_t(0);
    }
    return uint32_t(v);
  };
  bool colon = m->COLON() != nullptr;
  if (!colon) {
    r.low = r.high = val(0);
  } else if (ints.size() == 2) {
    r.low = val(0);
    r.high = val(1);
  } else if (ints.size() == 1 &&
             m->INT(0)->getSymbol()->getTokenIndex() < m->COLON()->getSymbol()->getTokenIndex()) {
    r.low = val(0);
    r.high = Multiplicity::kUnbounded;
  } else {
    r.low = 0;
    r.high = val(0);
  }
  return r;
}

void AntlrBuilder::relation(G::RelationContext* c) {
  Decl d = mkDecl(DeclKind::Relation, rangeOf(c));
  G::RelationEndContext* l = c->relationEnd();
  if (!checkTypeRefParts(l->classRef()->anyId())) return;
  d.left.entity = st_.intern(l->classRef()->getText());
  d.left.entityRange = rangeOf(l->classRef());
  std::string ln = l->anyId()->getText();
  d.left.nameRange = rangeOf(l->anyId());
  if (!checkDefinedName(ln, d.left.nameRange)) return;
  d.left.name = st_.intern(ln);
  d.left.mult = multi(l->multi());
  G::RelationTargetContext* r = c->relationTarget();
  if (!checkTypeRefParts(r->classRef()->anyId())) return;
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
    for (G::AnnotationContext* a : c->annotations()->annotation())
      anns.push_back(expression(a->expression()));
    d.annBegin = uint32_t(ast_.exprLists.size());
    ast_.exprLists.insert(ast_.exprLists.end(), anns.begin(), anns.end());
    d.annEnd = uint32_t(ast_.exprLists.size());
  }
  if (c->MLS()) d.doc = st_.intern(mlsBody(c->MLS()->getText(), c->MLS()->getSymbol()));
  addDecl(d);
}

void AntlrBuilder::typedefDef(G::TypedefDefContext* c) {
  if (auto* t = dynamic_cast<G::TypedefCtorContext*>(c)) {
    error(DiagKind::SyntaxErrorDetail, rangeOf(t->CID()),
          "The use of default constructors is no longer supported");
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
      Diagnostic& e = error(DiagKind::TypedefWithoutSelf, rangeOf(t->expression()));
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

void AntlrBuilder::indexDef(G::IndexDefContext* c) {
  Decl d = mkDecl(DeclKind::Index, rangeOf(c));
  if (!checkTypeRefParts(c->classRef()->anyId())) return;
  d.name = st_.intern(c->classRef()->getText());
  d.nameRange = rangeOf(c->classRef());
  d.nameBegin = uint32_t(ast_.names.size());
  for (G::AnyIdContext* a : c->anyId()) ast_.names.push_back(NameRef{st_.intern(a->getText()), rangeOf(a)});
  d.nameEnd = uint32_t(ast_.names.size());
  addDecl(d);
}

} // namespace inm::frontend

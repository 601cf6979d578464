// Fast-path parser, part 1: token helpers, the file and top-level declarations, and statements (see
// FastParser.h). Each function mirrors one rule of grammar/Inmanta.g4 together with the checks the ANTLR
// path's Builder makes on it; where the Builder would report anything, this parser bails instead.
// Invariant: nodes are added to the Ast in exactly the order the Builder adds them (children first, runs of
// lists appended once complete), so ids and run offsets match the ANTLR path.
#include "FastParser.h"

#include "Desugar.h"
#include "Strings.h"
#include "support/Limits.h"

#include <sys/mman.h>

#include <cstdint>

namespace inm::frontend {

namespace fast {

StringId Parser::internSpan(const Token& a, const Token& b) {
  llvm::StringRef all = lex_.text(Token{TokKind::Id, a.offset, b.offset + b.length - a.offset});
  bool gaps = false;
  for (char c : all)
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '#') {
      gaps = true;
      break;
    }
  if (!gaps) return st_.intern(all);
  scratch_.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    char c = all[i];
    if (c == '#') {
      while (i < all.size() && all[i] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    scratch_ += c;
  }
  return st_.intern(scratch_);
}

unsigned Parser::nsRef(Token& first, Token& last, bool keywords) {
  auto ok = [&](TokKind k) { return k == TokKind::Id || (keywords && isKeywordAsId(k)); };
  if (!ok(kind())) bail();
  first = last = take();
  unsigned n = 1;
  while (kind() == TokKind::Sep) {
    if (!ok(kind(1))) bail();
    take();
    last = take();
    n += 2;
  }
  return n;
}

unsigned Parser::classRefAhead(size_t k) {
  size_t i = k;
  while ((kind(i) == TokKind::Id || isKeywordAsId(kind(i))) && kind(i + 1) == TokKind::Sep) i += 2;
  if (kind(i) != TokKind::Cid) return 0;
  return unsigned(i - k + 1);
}

unsigned Parser::classRef(Token& first, Token& last) {
  unsigned n = classRefAhead(0);
  if (!n) bail();
  first = peek();
  // A keyword as a namespace part is the reference's reserved-keyword error: the ANTLR path reports it.
  for (unsigned i = 0; i + 1 < n; ++i)
    if (isKeywordAsId(take().kind)) bail();
  last = take();
  return n;
}

StringId Parser::docOf(const Token& mls) {
  llvm::StringRef body = text(mls).drop_front(3).drop_back(3);
  if (body.find('\\') == llvm::StringRef::npos) return st_.intern(body);
  bool bad = false, badCp = false;
  std::string s = decodeEscapes(body, &bad, &badCp);
  if (badCp) bail();
  if (bad) escapeWarnings_.push_back(range(mls, mls));
  return st_.intern(s);
}

/// Asks for transparent huge pages on a large reserved buffer: filling the Expr store of a 10 MB file
/// page by page costs more than parsing it (page faults are slow on this VM).
static void adviseHugePages(const void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (bytes < 2 * kHuge) return;
  uintptr_t b = (uintptr_t(p) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t e = (uintptr_t(p) + bytes) & ~(kHuge - 1);
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
}

static bool hasHyphen(llvm::StringRef s) { return s.contains('-'); }

// ---------------------------------------------------------------- file and declarations

void Parser::parseFile() {
  buf_.reserve(64);
  // Reserve the stores from the file size (generated models: ~1 expression per 13 bytes, 1 argument per 18,
  // 1 statement per 90): growth by reallocation dominated the profile. Untouched capacity costs no RSS.
  size_t n = lex_.size();
  ast_.exprs.reserve(n / 10 + 16);
  ast_.args.reserve(n / 14 + 16);
  ast_.stmts.reserve(n / 64 + 16);
  ast_.topLevel.reserve(n / 64 + 16);
  ast_.exprLists.reserve(n / 64 + 16);
  ast_.dictKeys.reserve(n / 128 + 16);
  ast_.stmtLists.reserve(n / 256 + 16);
  adviseHugePages(ast_.exprs.items().data(), ast_.exprs.items().capacity() * sizeof(Expr));
  adviseHugePages(ast_.args.data(), ast_.args.capacity() * sizeof(Arg));
  if (kind() == TokKind::Mls) ast_.doc = docOf(take());
  while (kind() != TokKind::Eof) {
    // drop consumed tokens: the buffer only holds the lookahead of the current statement
    if (pos_ > 0) {
      buf_.erase(buf_.begin(), buf_.begin() + long(pos_));
      pos_ = 0;
    }
    topStmt();
  }
}

void Parser::topStmt() {
  // `index(x)`, `entity::f()`: a keyword as a call's name starts a statement, not a declaration
  TokKind k1 = kind(1);
  if (kind() == TokKind::Id || kind() == TokKind::Cid || (isKeywordAsId(kind()) && k1 == TokKind::Sep)) {
    unsigned n = classRefAhead(0);
    if (n && kind(n) == TokKind::Dot) {
      relation();
      return;
    }
  }
  bool kwCall = isKeywordAsId(kind()) && (k1 == TokKind::LParen || k1 == TokKind::Sep);
  switch (kwCall ? TokKind::Eof : kind()) {
  case TokKind::KEntity: entityDef(); return;
  case TokKind::KImplementation: implementationDef(); return;
  case TokKind::KImplement: implementDef(); return;
  case TokKind::KTypedef: typedefDef(); return;
  case TokKind::KIndex: indexDef(); return;
  case TokKind::KImport: importStmt(); return;
  default: break;
  }
  PStmt s = statement();
  ast_.topLevel.push_back(s.id);
}

void Parser::importStmt() {
  Decl d;
  d.kind = DeclKind::Import;
  Token first = take(), a, b;
  nsRef(a, b, true);
  d.name = internSpan(a, b);
  d.nameRange = range(a, b);
  if (hasHyphen(st_.str(d.name))) bail();
  Token last = b;
  if (kind() == TokKind::KAs) {
    take();
    Token alias = expect(TokKind::Id);
    if (hasHyphen(text(alias))) bail();
    d.alias = st_.intern(text(alias));
    last = alias;
  }
  d.range = range(first, last);
  addDecl(d);
}

void Parser::entityDef() {
  Decl d;
  d.kind = DeclKind::Entity;
  Token first = take();
  Token name = expect(TokKind::Cid);
  if (hasHyphen(text(name))) bail();
  d.nameRange = range(name, name);
  d.name = st_.intern(text(name));
  d.nameBegin = uint32_t(ast_.names.size());
  if (kind() == TokKind::KExtends) {
    take();
    for (;;) {
      Token a, b;
      classRef(a, b);
      ast_.names.push_back(NameRef{internSpan(a, b), range(a, b)});
      if (kind() != TokKind::Comma) break;
      take();
    }
  }
  d.nameEnd = uint32_t(ast_.names.size());
  expect(TokKind::Colon);
  if (kind() == TokKind::Mls) d.doc = docOf(take());
  d.attrBegin = uint32_t(ast_.attrs.size());
  while (kind() != TokKind::KEnd) {
    AttrDecl ad;
    Token attrFirst = peek(), attrLast;
    if (kind() == TokKind::KDict)
      dictAttr(ad, attrLast);
    else
      typedAttr(ad, attrLast);
    ad.range = range(attrFirst, attrLast);
    ast_.attrs.push_back(ad);
  }
  d.attrEnd = uint32_t(ast_.attrs.size());
  Token end = take();
  d.range = range(first, end);
  addDecl(d);
}

static void attrName(Parser* p, AttrDecl& ad, const Token& t, llvm::StringRef text, StringTable& st,
                     SourceRange r) {
  (void)p;
  if (t.kind != TokKind::Id || text.contains('-')) throw Bail{};
  ad.nameRange = r;
  ad.name = st.intern(text);
}

void Parser::typedAttr(AttrDecl& ad, Token& last) {
  Token a, b;
  nsRef(a, b, true);
  ad.type.name = internSpan(a, b);
  Token typeLast = b;
  if (kind() == TokKind::LBrack) {
    take();
    typeLast = expect(TokKind::RBrack);
    ad.type.isList = true;
  }
  if (kind() == TokKind::QMark) {
    typeLast = take();
    ad.type.nullable = true;
  }
  ad.type.range = range(a, typeLast);
  Token name = take();
  attrName(this, ad, name, text(name), st_, range(name, name));
  last = name;
  if (kind() != TokKind::Eq) return;
  take();
  if (kind() == TokKind::KUndef) {
    last = take();
    ad.undef = true;
  } else if (kind() == TokKind::LBrack) {
    Token open = take();
    uint32_t base = uint32_t(exprStack_.size());
    while (kind() != TokKind::RBrack) {
      if (!isConstant(kind())) bail();
      exprStack_.push_back(constant(take()));
      if (kind() != TokKind::Comma) break;
      take();
    }
    last = expect(TokKind::RBrack);
    Expr e = mk(ExprKind::List, range(open, last));
    pushExprs(base, e.begin, e.end);
    ad.defaultValue = add(e);
  } else if (isConstant(kind())) {
    last = take();
    ad.defaultValue = constant(last);
  } else
    bail();
}

void Parser::dictAttr(AttrDecl& ad, Token& last) {
  Token dict = take();
  ad.type.name = st_.intern("dict");
  if (kind() == TokKind::QMark) {
    take();
    ad.type.nullable = true;
  }
  ad.type.range = range(dict, dict);
  Token name = take();
  attrName(this, ad, name, text(name), st_, range(name, name));
  last = name;
  if (kind() != TokKind::Eq) return;
  take();
  if (kind() == TokKind::KUndef) {
    last = take();
    ad.undef = true;
  } else if (kind() == TokKind::KNull) {
    if (!ad.type.nullable) bail();
    last = take();
    ad.defaultValue = add(mk(ExprKind::Null, range(last, last)));
  } else if (kind() == TokKind::LBrace) {
    PExpr m = mapDef();
    last = m.last;
    ad.defaultValue = m.id;
  } else
    bail();
}

void Parser::implementationDef() {
  Decl d;
  d.kind = DeclKind::Implementation;
  Token first = take();
  Token name = take();
  if ((name.kind != TokKind::Id && name.kind != TokKind::Cid) || hasHyphen(text(name))) bail();
  d.nameRange = range(name, name);
  d.name = st_.intern(text(name));
  expect(TokKind::KFor);
  Token a, b;
  classRef(a, b);
  d.forEntity = internSpan(a, b);
  expect(TokKind::Colon);
  if (kind() == TokKind::Mls) d.doc = docOf(take());
  body(d.bodyBegin, d.bodyEnd, nullptr);
  Token end = expect(TokKind::KEnd);
  d.range = range(first, end);
  addDecl(d);
}

void Parser::implementDef() {
  Decl d;
  d.kind = DeclKind::Implement;
  Token first = take(), a, b;
  classRef(a, b);
  d.name = internSpan(a, b);
  d.nameRange = range(a, b);
  expect(TokKind::KUsing);
  d.nameBegin = uint32_t(ast_.names.size());
  bool parents = false;
  Token last;
  for (;;) {
    Token x, y;
    if (kind() == TokKind::KParents && kind(1) != TokKind::Sep) {
      x = y = take();
      parents = true;
    } else
      nsRef(x, y, true);
    ast_.names.push_back(NameRef{internSpan(x, y), range(x, y)});
    last = y;
    if (kind() != TokKind::Comma) break;
    take();
  }
  d.nameEnd = uint32_t(ast_.names.size());
  if (kind() == TokKind::KWhen) {
    if (parents) bail();
    take();
    PExpr e = expr(0);
    d.expr = e.id;
    last = e.last;
  }
  if (kind() == TokKind::Mls) {
    last = take();
    d.doc = docOf(last);
  }
  d.range = range(first, last);
  addDecl(d);
}

Multiplicity Parser::multi(Token& last) {
  expect(TokKind::LBrack);
  auto value = [&](const Token& t) {
    llvm::StringRef s = text(t);
    if (s.empty() || s.size() > 9 || s[0] == '-') bail();
    uint32_t v = 0;
    for (char c : s) v = v * 10 + uint32_t(c - '0');
    return v;
  };
  Multiplicity m;
  if (kind() == TokKind::Colon) {
    take();
    m.low = 0;
    m.high = value(expect(TokKind::Int));
  } else {
    m.low = value(expect(TokKind::Int));
    if (kind() == TokKind::Colon) {
      take();
      m.high = kind() == TokKind::Int ? value(take()) : Multiplicity::kUnbounded;
    } else
      m.high = m.low;
  }
  last = expect(TokKind::RBrack);
  return m;
}

void Parser::relation() {
  Decl d;
  d.kind = DeclKind::Relation;
  Token first, b, last;
  classRef(first, b);
  d.left.entity = internSpan(first, b);
  d.left.entityRange = range(first, b);
  expect(TokKind::Dot);
  Token ln = expect(TokKind::Id);
  if (hasHyphen(text(ln))) bail();
  d.left.nameRange = range(ln, ln);
  d.left.name = st_.intern(text(ln));
  d.left.mult = multi(last);
  if (kind() == TokKind::Rel)
    take();
  else {
    d.hasAnnotations = true;
    uint32_t base = uint32_t(exprStack_.size());
    for (;;) {
      exprStack_.push_back(expr(0).id);
      if (kind() != TokKind::Comma) break;
      take();
    }
    pushExprs(base, d.annBegin, d.annEnd);
  }
  Token ra, rb;
  classRef(ra, rb);
  d.right.entity = internSpan(ra, rb);
  d.right.entityRange = range(ra, rb);
  last = rb;
  if (kind() == TokKind::Dot) {
    take();
    Token rn = expect(TokKind::Id);
    if (hasHyphen(text(rn))) bail();
    d.right.nameRange = range(rn, rn);
    d.right.name = st_.intern(text(rn));
    d.right.mult = multi(last);
  }
  if (kind() == TokKind::Mls) {
    last = take();
    d.doc = docOf(last);
  }
  d.range = range(first, last);
  addDecl(d);
}

bool Parser::mentionsSelf(ExprId id, StringId typedefName) {
  return frontend::mentionsSelf(ast_, st_, id, typedefName);
}

void Parser::typedefDef() {
  Decl d;
  d.kind = DeclKind::Typedef;
  Token first = take();
  Token name = take();
  if ((name.kind != TokKind::Id && name.kind != TokKind::Cid) || hasHyphen(text(name))) bail();
  expect(TokKind::KAs);
  Token a, b;
  nsRef(a, b, true); // a class reference here is the unsupported default-constructor form: bails
  d.nameRange = range(name, name);
  d.name = st_.intern(text(name));
  d.forEntity = internSpan(a, b);
  Token last;
  if (kind() == TokKind::KMatching) {
    take();
    PExpr e = expr(0);
    d.expr = e.id;
    last = e.last;
    if (!mentionsSelf(d.expr, d.name)) bail();
  } else if (kind() == TokKind::Regex) {
    last = take();
    d.expr = regex(last);
  } else
    bail();
  if (kind() == TokKind::Mls) {
    last = take();
    d.doc = docOf(last);
  }
  d.range = range(first, last);
  addDecl(d);
}

void Parser::indexDef() {
  Decl d;
  d.kind = DeclKind::Index;
  Token first = take(), a, b;
  classRef(a, b);
  d.name = internSpan(a, b);
  d.nameRange = range(a, b);
  expect(TokKind::LParen);
  d.nameBegin = uint32_t(ast_.names.size());
  for (;;) {
    Token t = take();
    if (t.kind != TokKind::Id && !isKeywordAsId(t.kind)) bail();
    ast_.names.push_back(NameRef{st_.intern(text(t)), range(t, t)});
    if (kind() != TokKind::Comma) break;
    take();
  }
  d.nameEnd = uint32_t(ast_.names.size());
  Token close = expect(TokKind::RParen);
  d.range = range(first, close);
  addDecl(d);
}

// ---------------------------------------------------------------- statements

void Parser::body(uint32_t& begin, uint32_t& end, Token* last) {
  Nest nest(*this);
  uint32_t base = uint32_t(stmtStack_.size());
  for (;;) {
    TokKind k = kind();
    if (k == TokKind::KEnd || k == TokKind::KElif || k == TokKind::KElse) break;
    PStmt s = statement();
    stmtStack_.push_back(s.id);
    if (last) *last = s.last;
  }
  begin = uint32_t(ast_.stmtLists.size());
  ast_.stmtLists.insert(ast_.stmtLists.end(), stmtStack_.begin() + base, stmtStack_.end());
  end = uint32_t(ast_.stmtLists.size());
  stmtStack_.resize(base);
}

PStmt Parser::statement() {
  switch (kind()) {
  case TokKind::KFor: return forStmt();
  case TokKind::KIf: {
    Token first = take(), last;
    StmtId id = ifBody(last);
    Token end = expect(TokKind::KEnd);
    ast_.stmts[id].range = range(first, end);
    return PStmt{id, first, end};
  }
  case TokKind::Id: {
    // assign : varRef ('=' | '+=') expression
    size_t k = 1;
    while (kind(k) == TokKind::Sep && kind(k + 1) == TokKind::Id) k += 2;
    while (kind(k) == TokKind::Dot && kind(k + 1) == TokKind::Id) k += 2;
    if (kind(k) == TokKind::Eq || kind(k) == TokKind::Peq) return assign();
    break;
  }
  default: break;
  }
  PExpr e = expr(0);
  Stmt s;
  s.kind = StmtKind::ExprStmt;
  s.range = range(e.first, e.last);
  s.value = e.id;
  return PStmt{ast_.stmts.add(s), e.first, e.last};
}

PStmt Parser::assign() {
  Stmt s;
  s.kind = StmtKind::Assign;
  Token first, nsLast;
  unsigned n = nsRef(first, nsLast);
  size_t partsBegin = partStack_.size();
  while (kind() == TokKind::Dot) {
    take();
    partStack_.push_back(expect(TokKind::Id));
  }
  size_t partsEnd = partStack_.size();
  s.target = varRefNodes(first, nsLast, n, partsBegin, partsEnd);
  partStack_.resize(partsBegin);
  s.plusAssign = take().kind == TokKind::Peq;
  const Expr& t = ast_.exprs[s.target];
  if (t.kind == ExprKind::Name) {
    if (s.plusAssign) bail();
    llvm::StringRef nm = st_.str(t.name);
    if (!nm.contains("::") && nm.contains('-')) bail();
  }
  PExpr v = expr(0);
  s.value = v.id;
  s.range = range(first, v.last);
  return PStmt{ast_.stmts.add(s), first, v.last};
}

PStmt Parser::forStmt() {
  Stmt s;
  s.kind = StmtKind::For;
  Token first = take();
  Token var = expect(TokKind::Id);
  if (hasHyphen(text(var))) bail();
  s.varRange = range(var, var);
  s.var = st_.intern(text(var));
  expect(TokKind::KIn);
  s.value = expr(0).id;
  expect(TokKind::Colon);
  body(s.bodyBegin, s.bodyEnd, nullptr);
  Token end = expect(TokKind::KEnd);
  s.range = range(first, end);
  return PStmt{ast_.stmts.add(s), first, end};
}

StmtId Parser::ifBody(Token& last) {
  Stmt s;
  s.kind = StmtKind::If;
  s.value = expr(0).id;
  last = expect(TokKind::Colon);
  body(s.bodyBegin, s.bodyEnd, &last);
  if (kind() == TokKind::KElif) {
    Nest nest(*this); // an elif chain nests one If per elif
    take();
    Token nestedFirst = peek();
    StmtId nested = ifBody(last);
    ast_.stmts[nested].range = range(nestedFirst, last);
    s.elseBegin = uint32_t(ast_.stmtLists.size());
    ast_.stmtLists.push_back(nested);
    s.elseEnd = uint32_t(ast_.stmtLists.size());
  } else if (kind() == TokKind::KElse) {
    take();
    last = expect(TokKind::Colon);
    body(s.elseBegin, s.elseEnd, &last);
  } else {
    s.elseBegin = s.elseEnd = uint32_t(ast_.stmtLists.size()); // the ANTLR path appends an empty run
  }
  return ast_.stmts.add(s);
}

} // namespace fast

namespace fast {
Parser::Nest::Nest(Parser& parser) : p(parser) {
  if (++p.depth_ > limits().maxNesting || stackNearlyExhausted()) {
    const Token& t = p.peek();
    throw TooDeep{p.range(t, t)};
  }
}
} // namespace fast

bool fastParseFile(FileId file, llvm::StringRef text, StringTable& strings, Ast& ast,
                   std::vector<SourceRange>* escapeWarnings, SourceRange* tooDeep) {
  fast::Parser p(file, text, strings, ast);
  try {
    p.parseFile();
  } catch (const fast::Bail&) {
    return false;
  } catch (const fast::TooDeep& t) {
    if (tooDeep) *tooDeep = t.at;
    return false;
  }
  if (escapeWarnings) *escapeWarnings = p.escapeWarnings();
  return true;
}

} // namespace inm::frontend

// Fast-path parser, part 2: expressions (precedence climbing with the levels of the ANTLR rule `expression`:
// in 9, prefix not 8, ** 7, * / % 6, + - 5, comparisons 4, and 3, or 2, ?: 1), primaries and literals.
// String, f-string and regex literals use the same helpers (Strings.h) and node shapes as the ANTLR path.
// Invariant: an expression's nodes are added children first, left to right, parent last.
#include "Desugar.h"
#include "FastParser.h"
#include "Strings.h"

#include <llvm/ADT/SmallVector.h>

#include <cstdlib>
#include <functional>

namespace inm::frontend {
namespace fast {

void Parser::pushExprs(uint32_t base, uint32_t& begin, uint32_t& end) {
  begin = uint32_t(ast_.exprLists.size());
  ast_.exprLists.insert(ast_.exprLists.end(), exprStack_.begin() + base, exprStack_.end());
  end = uint32_t(ast_.exprLists.size());
  exprStack_.resize(base);
}

bool Parser::isConstant(TokKind k) const {
  switch (k) {
  case TokKind::Int:
  case TokKind::Float:
  case TokKind::KNull:
  case TokKind::Regex:
  case TokKind::KTrue:
  case TokKind::KFalse:
  case TokKind::String:
  case TokKind::FString:
  case TokKind::RString:
  case TokKind::Mls: return true;
  default: return false;
  }
}

// ---------------------------------------------------------------- operators

PExpr Parser::expr(int minPrec) {
  PExpr lhs = unary();
  for (;;) {
    TokKind k = kind();
    int prec;
    ExprKind ek = ExprKind::Binary;
    BinaryOp op = BinaryOp::Eq;
    bool notIn = false;
    switch (k) {
    case TokKind::KIn:
      prec = 9;
      ek = ExprKind::In;
      break;
    case TokKind::KNot:
      if (kind(1) != TokKind::KIn) return lhs;
      prec = 9;
      ek = ExprKind::NotIn;
      notIn = true;
      break;
    case TokKind::DStar:
      prec = 7;
      op = BinaryOp::Pow;
      break;
    case TokKind::Star:
      prec = 6;
      op = BinaryOp::Mul;
      break;
    case TokKind::Div:
      prec = 6;
      op = BinaryOp::Div;
      break;
    case TokKind::Percent:
      prec = 6;
      op = BinaryOp::Mod;
      break;
    case TokKind::Plus:
      prec = 5;
      op = BinaryOp::Add;
      break;
    case TokKind::Minus:
      prec = 5;
      op = BinaryOp::Sub;
      break;
    case TokKind::CmpOp: {
      prec = 4;
      llvm::StringRef o = text(peek());
      op = o == "=="   ? BinaryOp::Eq
           : o == "!=" ? BinaryOp::Ne
           : o == "<"  ? BinaryOp::Lt
           : o == ">"  ? BinaryOp::Gt
           : o == "<=" ? BinaryOp::Le
                       : BinaryOp::Ge;
      break;
    }
    case TokKind::KAnd:
      prec = 3;
      ek = ExprKind::And;
      break;
    case TokKind::KOr:
      prec = 2;
      ek = ExprKind::Or;
      break;
    case TokKind::QMark:
      prec = 1;
      ek = ExprKind::Conditional;
      break;
    default: return lhs;
    }
    if (prec < minPrec) return lhs;
    take();
    if (notIn) take();
    if (ek == ExprKind::Conditional) {
      Nest nest(*this); // `a ? b : c ? d : …` nests one level per `?`
      PExpr mid = expr(0);
      expect(TokKind::Colon);
      PExpr rhs = expr(1);
      Expr e = mk(ExprKind::Conditional, range(lhs.first, rhs.last));
      e.a = lhs.id;
      e.b = mid.id;
      e.c = rhs.id;
      lhs.id = add(e);
      lhs.last = rhs.last;
      continue;
    }
    PExpr rhs = expr(prec + 1);
    Expr e = mk(ek, range(lhs.first, rhs.last));
    e.op = op;
    e.a = lhs.id;
    e.b = rhs.id;
    lhs.id = add(e);
    lhs.last = rhs.last;
  }
}

// The recursion guard sits here: every operand passes through unary(), so a bracket, a `not` or a nested call
// argument costs one level, as it does in the Ast (a binary operator's right operand is not a level of its
// own).
PExpr Parser::unary() {
  Nest nest(*this);
  if (kind() != TokKind::KNot) return primary();
  Token t = take();
  PExpr operand = expr(8);
  Expr e = mk(ExprKind::Not, range(t, operand.last));
  e.a = operand.id;
  return PExpr{add(e), t, operand.last};
}

PExpr Parser::primary() {
  TokKind k = kind();
  if (isConstant(k)) {
    Token t = take();
    return PExpr{constant(t), t, t};
  }
  switch (k) {
  case TokKind::LParen: {
    Token open = take();
    PExpr inner = expr(0);
    Token close = expect(TokKind::RParen);
    return PExpr{inner.id, open, close};
  }
  case TokKind::LBrack: return listPrimary();
  case TokKind::LBrace: return mapDef();
  case TokKind::Cid: return classPrimary();
  case TokKind::Id: return classRefAhead(0) ? classPrimary() : namePrimary();
  default:
    if (isKeywordAsId(k)) return classRefAhead(0) ? classPrimary() : keywordCall();
    bail();
  }
}

PExpr Parser::keywordCall() {
  // A call's name is taken as written, so `index(x)` / `std::parents(x)` are calls (any other use of these
  // keywords as names is an error of the ANTLR path).
  size_t k = 0;
  for (;;) {
    if (kind(k) != TokKind::Id && !isKeywordAsId(kind(k))) bail();
    if (kind(k + 1) != TokKind::Sep) break;
    k += 2;
  }
  if (kind(k + 1) != TokKind::LParen) bail();
  Token first = peek(), last;
  for (size_t i = 0; i <= k; ++i) last = take();
  Expr e = mk(ExprKind::Call, SourceRange{});
  e.name = internSpan(first, last);
  Token close;
  args(e, TokKind::RParen, true, false, close);
  e.range = range(first, close);
  return PExpr{add(e), first, close};
}

// ---------------------------------------------------------------- names, calls, lookups

ExprId Parser::varRefNodes(const Token& first, const Token& nsLast, unsigned, size_t partsBegin,
                           size_t partsEnd) {
  Expr n = mk(ExprKind::Name, range(first, nsLast));
  n.name = internSpan(first, nsLast);
  ExprId cur = add(n);
  for (size_t i = partsBegin; i < partsEnd; ++i) {
    const Token& p = partStack_[i];
    Expr a = mk(ExprKind::AttrRef, SourceRange{file_, first.line, first.col, p.endLine, p.endCol});
    a.a = cur;
    a.name = st_.intern(text(p));
    cur = add(a);
  }
  return cur;
}

void Parser::args(Expr& e, TokKind close, bool positional, bool nonEmpty, Token& closeTok) {
  take(); // '(' or '['
  size_t base = argStack_.size();
  while (kind() != close) {
    Arg a;
    Token af = peek();
    PExpr v;
    if (af.kind == TokKind::DStar) {
      take();
      a.kind = ArgKind::Spread;
      v = expr(0);
    } else if (kind(1) == TokKind::Eq) {
      if (af.kind != TokKind::Id) bail(); // a keyword or a type as argument name
      take();
      take();
      a.kind = ArgKind::Keyword;
      a.name = st_.intern(text(af));
      v = expr(0);
    } else {
      if (!positional) bail();
      v = expr(0);
      af = v.first;
    }
    a.value = v.id;
    a.range = range(af, v.last);
    argStack_.push_back(a);
    if (kind() != TokKind::Comma) break;
    take();
  }
  closeTok = expect(close);
  if (nonEmpty && argStack_.size() == base) bail();
  e.argBegin = uint32_t(ast_.args.size());
  ast_.args.insert(ast_.args.end(), argStack_.begin() + long(base), argStack_.end());
  e.argEnd = uint32_t(ast_.args.size());
  argStack_.resize(base);
}

PExpr Parser::classPrimary() {
  Token first, last;
  classRef(first, last);
  Expr e;
  if (kind() == TokKind::LParen)
    e.kind = ExprKind::Constructor;
  else if (kind() == TokKind::LBrack)
    e.kind = ExprKind::IndexLookup;
  else
    bail();
  e.name = internSpan(first, last);
  Token close;
  if (e.kind == ExprKind::Constructor)
    args(e, TokKind::RParen, false, false, close);
  else
    args(e, TokKind::RBrack, false, true, close);
  e.range = range(first, close);
  return PExpr{add(e), first, close};
}

bool Parser::lookupAhead() {
  // `name [` starts a map lookup unless the bracket holds a list (a top-level `,`, a comprehension `for`, or
  // nothing): then ANTLR ends the expression at the name and the list is the next statement.
  int depth = 0;
  for (size_t k = 1;; ++k) {
    switch (kind(k)) {
    case TokKind::Eof:
    case TokKind::Error: return true;
    case TokKind::LBrack:
    case TokKind::LParen:
    case TokKind::LBrace: ++depth; break;
    case TokKind::RBrack:
    case TokKind::RParen:
    case TokKind::RBrace:
      if (depth == 0) return k > 1;
      --depth;
      break;
    case TokKind::Comma:
    case TokKind::KFor:
      if (depth == 0) return false;
      break;
    default: break;
    }
  }
}

PExpr Parser::namePrimary() {
  for (size_t k = 1; kind(k) == TokKind::Sep; k += 2)
    if (isKeywordAsId(kind(k + 1))) return keywordCall();
  Token first, nsLast;
  unsigned n = nsRef(first, nsLast);
  size_t pb = partStack_.size();
  bool shortIndex = false;
  while (kind() == TokKind::Dot) {
    if (kind(1) != TokKind::Id) bail(); // `.Type` / `.keyword`: errors of the ANTLR path
    if (kind(2) == TokKind::LBrack &&
        (kind(3) == TokKind::DStar ||
         ((kind(3) == TokKind::Id || isKeywordAsId(kind(3))) && kind(4) == TokKind::Eq))) {
      shortIndex = true;
      break;
    }
    take();
    partStack_.push_back(take());
  }
  size_t pe = partStack_.size();
  struct PopParts {
    std::vector<Token>& v;
    size_t n;
    ~PopParts() { v.resize(n); }
  } pop{partStack_, pb};

  if (shortIndex) {
    take();
    Token rel = take();
    Expr e = mk(ExprKind::ShortIndexLookup, SourceRange{});
    e.a = varRefNodes(first, nsLast, n, pb, pe);
    e.name = st_.intern(text(rel));
    Token close;
    args(e, TokKind::RBrack, false, true, close);
    e.range = range(first, close);
    return PExpr{add(e), first, close};
  }
  if (kind() == TokKind::LParen) {
    if (pe != pb) bail(); // `x.f(...)`: invalid namespace access
    Expr e = mk(ExprKind::Call, SourceRange{});
    e.name = internSpan(first, nsLast);
    Token close;
    args(e, TokKind::RParen, true, false, close);
    e.range = range(first, close);
    return PExpr{add(e), first, close};
  }
  if (kind() == TokKind::LBrack && lookupAhead()) {
    ExprId cur = varRefNodes(first, nsLast, n, pb, pe);
    Token last;
    while (kind() == TokKind::LBrack && lookupAhead()) {
      take();
      PExpr key = expr(0);
      last = expect(TokKind::RBrack);
      Expr e =
          mk(ExprKind::MapLookup, SourceRange{file_, first.line, first.col, key.last.line, key.last.col + 1});
      e.a = cur;
      e.b = key.id;
      cur = add(e);
    }
    if (kind() != TokKind::KIs || kind(1) != TokKind::KDefined) return PExpr{cur, first, last};
    take();
    Token defined = take();
    // (key in map) and (map[key] != null) and (map[key] != [])
    return PExpr{desugarMapIsDefined(ast_, cur, range(first, defined)), first, defined};
  }
  if (kind() == TokKind::KIs) {
    if (kind(1) != TokKind::KDefined) bail();
    if (pe == pb && n > 1) bail(); // `ns::x is defined`
    ExprId v = varRefNodes(first, nsLast, n, pb, pe);
    take();
    Token defined = take();
    Expr e = mk(ExprKind::IsDefined, range(first, defined));
    e.a = v;
    return PExpr{add(e), first, defined};
  }
  ExprId v = varRefNodes(first, nsLast, n, pb, pe);
  return PExpr{v, first, pe != pb ? partStack_[pe - 1] : nsLast};
}

// ---------------------------------------------------------------- lists, comprehensions, dicts

PExpr Parser::listPrimary() {
  Token open = take();
  uint32_t base = uint32_t(exprStack_.size());
  if (kind() == TokKind::RBrack) {
    Token close = take();
    Expr e = mk(ExprKind::List, range(open, close));
    e.begin = e.end = uint32_t(ast_.exprLists.size());
    return PExpr{add(e), open, close};
  }
  PExpr head = expr(0);
  if (kind() != TokKind::KFor) {
    exprStack_.push_back(head.id);
    while (kind() == TokKind::Comma) {
      take();
      if (kind() == TokKind::RBrack) break;
      exprStack_.push_back(expr(0).id);
    }
    Token close = expect(TokKind::RBrack);
    Expr e = mk(ExprKind::List, range(open, close));
    pushExprs(base, e.begin, e.end);
    return PExpr{add(e), open, close};
  }
  Expr e = mk(ExprKind::ListComprehension, SourceRange{});
  e.a = head.id;
  llvm::SmallVector<ComprehensionLoop, 2> loops;
  while (kind() == TokKind::KFor) {
    Token f = take();
    Token var = take();
    if (var.kind != TokKind::Id && !isKeywordAsId(var.kind)) bail();
    expect(TokKind::KIn);
    PExpr it = expr(0);
    ComprehensionLoop l;
    l.var = st_.intern(text(var));
    l.range = range(f, it.last);
    l.iterable = it.id;
    loops.push_back(l);
  }
  while (kind() == TokKind::KIf) {
    take();
    exprStack_.push_back(expr(0).id);
  }
  Token close = expect(TokKind::RBrack);
  e.range = range(open, close);
  e.loopBegin = uint32_t(ast_.loops.size());
  ast_.loops.insert(ast_.loops.end(), loops.begin(), loops.end());
  e.loopEnd = uint32_t(ast_.loops.size());
  pushExprs(base, e.begin, e.end);
  return PExpr{add(e), open, close};
}

PExpr Parser::mapDef() {
  Token open = take();
  uint32_t base = uint32_t(exprStack_.size());
  size_t keyBase = keyStack_.size();
  while (kind() != TokKind::RBrace) {
    Token t = take();
    llvm::StringRef s = text(t);
    StringId k;
    if (t.kind == TokKind::RString)
      k = st_.intern(s.substr(2, s.size() - 3));
    else if (t.kind == TokKind::String) {
      llvm::StringRef raw = s.drop_front().drop_back();
      if (raw.find('\\') == llvm::StringRef::npos) {
        if (raw.contains("{{") && !findPlaceholders(raw).empty()) bail();
        k = st_.intern(raw);
      } else {
        bool bad = false, badCp = false;
        std::string key = decodeEscapes(raw, &bad, &badCp);
        if (badCp || !findPlaceholders(key).empty()) bail();
        k = st_.intern(key);
      }
    } else
      bail();
    for (size_t i = keyBase; i < keyStack_.size(); ++i)
      if (keyStack_[i] == k) bail(); // duplicate key
    expect(TokKind::Colon);
    PExpr v = expr(0);
    keyStack_.push_back(k);
    exprStack_.push_back(v.id);
    if (kind() != TokKind::Comma) break;
    take();
  }
  Token close = expect(TokKind::RBrace);
  Expr e = mk(ExprKind::Dict, range(open, close));
  pushExprs(base, e.begin, e.end);
  e.keyBegin = uint32_t(ast_.dictKeys.size());
  ast_.dictKeys.insert(ast_.dictKeys.end(), keyStack_.begin() + long(keyBase), keyStack_.end());
  e.keyEnd = uint32_t(ast_.dictKeys.size());
  keyStack_.resize(keyBase);
  return PExpr{add(e), open, close};
}

// ---------------------------------------------------------------- literals

ExprId Parser::regex(const Token& t) {
  llvm::StringRef s = text(t);
  size_t b = s.find('/'), e = s.rfind('/');
  std::string pattern = s.substr(b + 1, e - b - 1).str();
  if (!checkRegex(pattern).empty()) bail();
  Expr x = mk(ExprKind::Regex, range(t, t));
  x.name = st_.intern(pattern);
  return add(x);
}

ExprId Parser::dottedRef(llvm::StringRef text, SourceRange r) {
  return frontend::dottedRef(ast_, st_, text, r);
}

ExprId Parser::stringValue(const std::string& decoded, llvm::StringRef original, SourceRange r) {
  return stringLiteral(ast_, st_, decoded, original, r);
}

namespace {
/// f-string fields to FormatParts, exactly as the ANTLR path's builder lays them out.
struct FParts {
  Parser* p;
  Ast& ast;
  StringTable& st;
  SourceRange r;
  std::function<ExprId(llvm::StringRef)> ref;
  void run(const std::vector<FField>& fields, std::vector<FormatPart>& out) {
    for (const FField& f : fields) {
      FormatPart part;
      if (!f.isField) {
        part.literal = st.intern(f.literal);
        out.push_back(part);
        continue;
      }
      if (f.name.empty()) throw Bail{}; // positional `{}`
      part.fieldText = st.intern(f.name);
      part.expr = ref(f.name);
      part.conversion = f.conversion;
      std::vector<FormatPart> spec;
      run(f.spec, spec);
      out.push_back(part);
      size_t idx = out.size() - 1;
      uint32_t sb = uint32_t(ast.formatParts.size());
      ast.formatParts.insert(ast.formatParts.end(), spec.begin(), spec.end());
      out[idx].specBegin = sb;
      out[idx].specEnd = uint32_t(ast.formatParts.size());
    }
  }
};
} // namespace

ExprId Parser::constant(const Token& t) {
  SourceRange r = range(t, t);
  llvm::StringRef s = text(t);
  auto decode = [&](llvm::StringRef raw) {
    if (raw.find('\\') == llvm::StringRef::npos) return raw.str();
    bool bad = false, badCp = false;
    std::string body = decodeEscapes(raw, &bad, &badCp);
    if (badCp) bail(); // the ANTLR path reports it
    if (bad) escapeWarnings_.push_back(r);
    return body;
  };
  switch (t.kind) {
  case TokKind::Int: {
    Expr e = mk(ExprKind::Int, r);
    if (s.getAsInteger(10, e.intValue)) {
      e.bigInt = true;
      e.intValue = 0;
      e.name = st_.intern(s);
      scratch_ = s.str();
      e.floatValue = std::strtod(scratch_.c_str(), nullptr);
    }
    return add(e);
  }
  case TokKind::Float: {
    Expr e = mk(ExprKind::Float, r);
    scratch_ = s.str();
    e.floatValue = std::strtod(scratch_.c_str(), nullptr);
    return add(e);
  }
  case TokKind::KNull: return add(mk(ExprKind::Null, r));
  case TokKind::KTrue:
  case TokKind::KFalse: {
    Expr e = mk(ExprKind::Bool, r);
    e.intValue = t.kind == TokKind::KTrue;
    return add(e);
  }
  case TokKind::Regex: return regex(t);
  case TokKind::RString: {
    Expr e = mk(ExprKind::String, r);
    e.name = st_.intern(s.substr(2, s.size() - 3));
    return add(e);
  }
  case TokKind::Mls: {
    std::string body = decode(s.drop_front(3).drop_back(3));
    return stringValue(body, body, r);
  }
  case TokKind::String: {
    llvm::StringRef raw = s.drop_front().drop_back();
    if (raw.find('\\') == llvm::StringRef::npos && !raw.contains("{{")) { // the common case: no copy
      Expr e = mk(ExprKind::String, r);
      e.name = st_.intern(raw);
      return add(e);
    }
    return stringValue(decode(raw), raw, r);
  }
  case TokKind::FString: {
    llvm::StringRef raw = s.drop_front(2).drop_back();
    std::string body = decode(raw);
    std::vector<FField> fields;
    std::string err;
    if (!parseFString(body, fields, err)) bail();
    std::vector<FormatPart> parts;
    FParts fp{this, ast_, st_, r, [&](llvm::StringRef name) { return dottedRef(name, r); }};
    fp.run(fields, parts);
    Expr e = mk(ExprKind::FString, r);
    e.name = st_.intern(raw);
    e.partBegin = uint32_t(ast_.formatParts.size());
    ast_.formatParts.insert(ast_.formatParts.end(), parts.begin(), parts.end());
    e.partEnd = uint32_t(ast_.formatParts.size());
    return add(e);
  }
  default: bail();
  }
}

} // namespace fast
} // namespace inm::frontend

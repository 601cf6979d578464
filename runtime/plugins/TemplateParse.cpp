// Lexer and parser of the std::template Jinja subset (see Template.h). The lexer splits the source into
// text and tag tokens (`{{ }}`, `{% %}`, comments dropped) applying `-` whitespace control and Jinja's
// default of dropping one trailing newline; the parser builds the Node/Expr tree with Jinja's operator
// precedence (or < and < not < compare < + - < ~ < * / // % < ** < unary < filters/postfix).
#include "Template.h"
#include "support/Limits.h"

#include <algorithm>
#include <cctype>

namespace inm::runtime::plugins::tmpl {

namespace {

enum class TK : uint8_t { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, Str, Int, Float, Op, End };

struct Tok {
  TK kind;
  std::string s;
  int line;
};

struct ParseError {
  std::string msg;
};

class Lexer {
 public:
  explicit Lexer(llvm::StringRef src) : src_(src) {}

  bool run(std::vector<Tok>& out, std::string& err) {
    size_t p = 0;
    bool stripNext = false;
    while (p < src_.size()) {
      size_t open = findTag(p);
      std::string text =
          src_.substr(p, open == llvm::StringRef::npos ? llvm::StringRef::npos : open - p).str();
      if (stripNext) text = llvm::StringRef(text).ltrim().str();
      stripNext = false;
      if (open == llvm::StringRef::npos) {
        push(out, TK::Text, text, p);
        break;
      }
      bool stripPrev = open + 2 < src_.size() && src_[open + 2] == '-';
      if (stripPrev) text = llvm::StringRef(text).rtrim().str();
      push(out, TK::Text, text, p);
      char kind = src_[open + 1];
      size_t q = open + 2 + (stripPrev ? 1 : 0);
      if (kind == '#') {
        size_t close = src_.find("#}", q);
        if (close == llvm::StringRef::npos) return fail(err, open, "unterminated comment");
        stripNext = close > q && src_[close - 1] == '-';
        p = close + 2;
        continue;
      }
      push(out, kind == '{' ? TK::VarBegin : TK::BlockBegin, "", open);
      const char* closer = kind == '{' ? "}}" : "%}";
      // Tokens up to the closer.
      while (true) {
        while (q < src_.size() && isspace(static_cast<unsigned char>(src_[q]))) ++q;
        if (q >= src_.size()) return fail(err, open, "unexpected end of template, tag not closed");
        if (src_.substr(q).startswith(closer) || (src_[q] == '-' && src_.substr(q + 1).startswith(closer))) {
          stripNext = src_[q] == '-';
          q += stripNext ? 3 : 2;
          push(out, kind == '{' ? TK::VarEnd : TK::BlockEnd, "", q);
          break;
        }
        char c = src_[q];
        size_t start = q;
        if (isalpha(static_cast<unsigned char>(c)) || c == '_') {
          while (q < src_.size() && (isalnum(static_cast<unsigned char>(src_[q])) || src_[q] == '_')) ++q;
          push(out, TK::Name, src_.slice(start, q).str(), start);
        } else if (isdigit(static_cast<unsigned char>(c))) {
          while (q < src_.size() && (isdigit(static_cast<unsigned char>(src_[q])) || src_[q] == '_')) ++q;
          bool isFloat = false;
          if (q + 1 < src_.size() && src_[q] == '.' && isdigit(static_cast<unsigned char>(src_[q + 1]))) {
            isFloat = true;
            ++q;
            while (q < src_.size() && isdigit(static_cast<unsigned char>(src_[q]))) ++q;
          }
          std::string num;
          for (char d : src_.slice(start, q))
            if (d != '_') num += d;
          push(out, isFloat ? TK::Float : TK::Int, num, start);
        } else if (c == '"' || c == '\'') {
          std::string s;
          ++q;
          while (q < src_.size() && src_[q] != c) {
            if (src_[q] == '\\' && q + 1 < src_.size()) {
              char e = src_[++q];
              s += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
            } else {
              s += src_[q];
            }
            ++q;
          }
          if (q >= src_.size()) return fail(err, start, "unterminated string");
          ++q;
          push(out, TK::Str, s, start);
        } else {
          static const char* ops[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<",
                                      ">",  "|",  ".",  ",",  ":",  "(",  ")", "[", "]", "{", "}", "="};
          bool found = false;
          for (const char* op : ops)
            if (src_.substr(q).startswith(op)) {
              push(out, TK::Op, op, q);
              q += strlen(op);
              found = true;
              break;
            }
          if (!found) return fail(err, q, std::string("unexpected character '") + c + "'");
        }
      }
      p = q;
    }
    // Jinja drops a single trailing newline (keep_trailing_newline=False).
    for (auto it = out.rbegin(); it != out.rend(); ++it) {
      if (it->kind != TK::Text) break;
      if (it->s.empty()) continue;
      if (llvm::StringRef(it->s).endswith("\n")) it->s.pop_back();
      break;
    }
    out.push_back({TK::End, "", lineOf(src_.size())});
    return true;
  }

 private:
  size_t findTag(size_t p) const {
    while (true) {
      size_t b = src_.find('{', p);
      if (b == llvm::StringRef::npos || b + 1 >= src_.size()) return llvm::StringRef::npos;
      char n = src_[b + 1];
      if (n == '{' || n == '%' || n == '#') return b;
      p = b + 1;
    }
  }
  /// Line of byte `pos`. Tokens come in source order, so the count continues from the previous call (counting
  /// from the start each time made a template of many tokens quadratic: found by the evaluator fuzzer).
  int lineOf(size_t pos) {
    if (pos < linePos_) {
      linePos_ = 0;
      lineNo_ = 1;
    }
    lineNo_ += int(src_.slice(linePos_, pos).count('\n'));
    linePos_ = std::max(linePos_, std::min(pos, src_.size()));
    return lineNo_;
  }
  size_t linePos_ = 0;
  int lineNo_ = 1;
  void push(std::vector<Tok>& out, TK k, std::string s, size_t pos) {
    if (k == TK::Text && s.empty()) return;
    out.push_back({k, std::move(s), lineOf(pos)});
  }
  bool fail(std::string& err, size_t pos, const std::string& msg) {
    err = "line " + std::to_string(lineOf(pos)) + ": " + msg;
    return false;
  }
  llvm::StringRef src_;
};

class Parser {
 public:
  explicit Parser(std::vector<Tok> toks) : t_(std::move(toks)) {}

  std::vector<NodeP> parseBody(std::initializer_list<const char*> stops, std::string& stoppedAt) {
    std::vector<NodeP> nodes;
    while (true) {
      const Tok& k = cur();
      if (k.kind == TK::End) {
        if (stops.size()) error("unexpected end of template, expected '" + std::string(*stops.begin()) + "'");
        stoppedAt.clear();
        return nodes;
      }
      if (k.kind == TK::Text) {
        auto n = std::make_unique<Node>();
        n->kind = NK::Text;
        n->text = k.s;
        n->line = k.line;
        nodes.push_back(std::move(n));
        ++pos_;
      } else if (k.kind == TK::VarBegin) {
        ++pos_;
        auto n = std::make_unique<Node>();
        n->kind = NK::Output;
        n->line = k.line;
        n->expr = parseExpr();
        expect(TK::VarEnd, "'}}'");
        nodes.push_back(std::move(n));
      } else if (k.kind == TK::BlockBegin) {
        const Tok& kw = t_[pos_ + 1];
        if (kw.kind != TK::Name) error("expected a tag name after '{%'");
        for (const char* s : stops)
          if (kw.s == s) {
            stoppedAt = kw.s;
            pos_ += 2;
            return nodes;
          }
        pos_ += 2;
        nodes.push_back(parseTag(kw));
      } else {
        error("unexpected '" + k.s + "'");
      }
    }
  }

  [[noreturn]] void error(const std::string& msg) {
    throw ParseError{"line " + std::to_string(cur().line) + ": " + msg};
  }
  /// Bounds the parser's recursion (blocks, brackets, prefix operators) by Limits::maxNesting.
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) {
      if (++p.depth_ > limits().maxNesting || stackNearlyExhausted())
        p.error("nested too deep: more than " + std::to_string(limits().maxNesting) +
                " levels (--max-nesting)");
    }
    ~Nest() { --p.depth_; }
  };
  size_t depth_ = 0;

 private:
  const Tok& cur() const { return t_[pos_]; }
  bool isOp(const char* op) const { return cur().kind == TK::Op && cur().s == op; }
  bool isName(const char* n) const { return cur().kind == TK::Name && cur().s == n; }
  bool acceptOp(const char* op) {
    if (!isOp(op)) return false;
    ++pos_;
    return true;
  }
  bool acceptName(const char* n) {
    if (!isName(n)) return false;
    ++pos_;
    return true;
  }
  void expect(TK k, const char* what) {
    if (cur().kind != k) error(std::string("expected ") + what);
    ++pos_;
  }
  void expectOp(const char* op) {
    if (!acceptOp(op)) error(std::string("expected '") + op + "'");
  }
  std::string expectName() {
    if (cur().kind != TK::Name) error("expected a name");
    return t_[pos_++].s;
  }

  NodeP parseTag(const Tok& kw) {
    Nest nest(*this);
    auto n = std::make_unique<Node>();
    n->line = kw.line;
    std::string stop;
    if (kw.s == "if") {
      n->kind = NK::If;
      ExprP cond = parseExpr();
      expect(TK::BlockEnd, "'%}'");
      while (true) {
        auto body = parseBody({"elif", "else", "endif"}, stop);
        n->branches.emplace_back(std::move(cond), std::move(body));
        if (stop == "endif") break;
        if (stop == "else") {
          expect(TK::BlockEnd, "'%}'");
          auto elseBody = parseBody({"endif"}, stop);
          n->branches.emplace_back(nullptr, std::move(elseBody));
          break;
        }
        cond = parseExpr();
        expect(TK::BlockEnd, "'%}'");
      }
      expect(TK::BlockEnd, "'%}'");
      return n;
    }
    if (kw.s == "for") {
      n->kind = NK::For;
      n->targets.push_back(expectName());
      while (acceptOp(",")) n->targets.push_back(expectName());
      if (!acceptName("in")) error("expected 'in'");
      n->expr = parseOr(/*allowCond=*/false);
      if (isName("if")) error("loop filters ('for … if …') are not supported in templates");
      if (isName("recursive")) error("recursive loops are not supported in templates");
      expect(TK::BlockEnd, "'%}'");
      n->body = parseBody({"else", "endfor"}, stop);
      if (stop == "else") {
        expect(TK::BlockEnd, "'%}'");
        n->elseBody = parseBody({"endfor"}, stop);
      }
      expect(TK::BlockEnd, "'%}'");
      return n;
    }
    if (kw.s == "set") {
      n->kind = NK::Set;
      n->targets.push_back(expectName());
      while (acceptOp(",")) n->targets.push_back(expectName());
      if (!acceptOp("="))
        error("block assignments ('{% set x %}…{% endset %}') are not supported in templates");
      n->expr = parseExpr();
      expect(TK::BlockEnd, "'%}'");
      return n;
    }
    static const char* unsupported[] = {"macro",      "call",  "include", "import",   "from",
                                        "extends",    "block", "filter",  "with",     "raw",
                                        "autoescape", "do",    "break",   "continue", "trans"};
    for (const char* u : unsupported)
      if (kw.s == u) error("'" + kw.s + "' tags are not supported in templates");
    error("unknown tag '" + kw.s + "'");
  }

  ExprP make(EK k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = cur().line;
    return e;
  }

 public:
  ExprP parseExpr() {
    Nest n(*this);
    return parseOr(true);
  }

 private:
  ExprP parseOr(bool allowCond) {
    ExprP left = parseAnd();
    while (isName("or")) {
      ++pos_;
      ExprP e = make(EK::Or);
      e->kids.push_back(std::move(left));
      e->kids.push_back(parseAnd());
      left = std::move(e);
    }
    if (allowCond && isName("if")) {
      ++pos_;
      ExprP e = make(EK::Cond);
      ExprP cond = parseOr(false);
      ExprP other;
      if (acceptName("else")) other = parseOr(true);
      e->kids.push_back(std::move(cond));
      e->kids.push_back(std::move(left));
      if (other) e->kids.push_back(std::move(other));
      return e;
    }
    return left;
  }
  ExprP parseAnd() {
    ExprP left = parseNot();
    while (isName("and")) {
      ++pos_;
      ExprP e = make(EK::And);
      e->kids.push_back(std::move(left));
      e->kids.push_back(parseNot());
      left = std::move(e);
    }
    return left;
  }
  ExprP parseNot() {
    Nest n(*this);
    if (isName("not")) {
      ++pos_;
      ExprP e = make(EK::Not);
      e->kids.push_back(parseNot());
      return e;
    }
    return parseCompare();
  }
  ExprP parseCompare() {
    ExprP left = parseMath1();
    while (true) {
      std::string op;
      bool neg = false;
      if (cur().kind == TK::Op && (cur().s == "==" || cur().s == "!=" || cur().s == "<" || cur().s == ">" ||
                                   cur().s == "<=" || cur().s == ">=")) {
        op = cur().s;
        ++pos_;
      } else if (isName("in")) {
        op = "in";
        ++pos_;
      } else if (isName("not") && t_[pos_ + 1].kind == TK::Name && t_[pos_ + 1].s == "in") {
        op = "in";
        neg = true;
        pos_ += 2;
      } else {
        break;
      }
      ExprP e = make(EK::Cmp);
      e->s = op;
      e->negated = neg;
      e->kids.push_back(std::move(left));
      e->kids.push_back(parseMath1());
      left = std::move(e);
    }
    return left;
  }
  ExprP bin(ExprP left, const std::string& op, ExprP right) {
    ExprP e = make(EK::Bin);
    e->s = op;
    e->kids.push_back(std::move(left));
    e->kids.push_back(std::move(right));
    return e;
  }
  ExprP parseMath1() {
    ExprP left = parseConcat();
    while (isOp("+") || isOp("-")) {
      std::string op = t_[pos_++].s;
      left = bin(std::move(left), op, parseConcat());
    }
    return left;
  }
  ExprP parseConcat() {
    ExprP left = parseMath2();
    while (acceptOp("~")) left = bin(std::move(left), "~", parseMath2());
    return left;
  }
  ExprP parseMath2() {
    ExprP left = parsePow();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      std::string op = t_[pos_++].s;
      left = bin(std::move(left), op, parsePow());
    }
    return left;
  }
  ExprP parsePow() {
    ExprP left = parseUnary();
    while (acceptOp("**")) left = bin(std::move(left), "**", parseUnary());
    return left;
  }
  /// Jinja: `-x|f` is `(-x)|f`; filters bind after the unary operator.
  ExprP parseUnary(bool withFilters = true) {
    Nest n(*this);
    ExprP e;
    if (isOp("-") || isOp("+")) {
      e = make(isOp("-") ? EK::Neg : EK::Pos);
      ++pos_;
      e->kids.push_back(parseUnary(false));
    } else {
      e = parsePostfix(parsePrimary());
    }
    return withFilters ? parseFilters(std::move(e)) : std::move(e);
  }
  void parseArgs(Expr& call) {
    // after '(' : positional then keyword arguments
    while (!acceptOp(")")) {
      if (cur().kind == TK::Name && t_[pos_ + 1].kind == TK::Op && t_[pos_ + 1].s == "=") {
        call.kwNames.push_back(cur().s);
        pos_ += 2;
        call.kids.push_back(parseExpr());
      } else {
        if (!call.kwNames.empty()) error("positional argument after keyword argument");
        call.kids.push_back(parseExpr());
      }
      if (!acceptOp(",")) {
        expectOp(")");
        break;
      }
    }
  }
  ExprP parsePostfix(ExprP e) {
    while (true) {
      if (acceptOp(".")) {
        ExprP a = make(EK::Attr);
        if (cur().kind == TK::Int)
          a->s = t_[pos_++].s;
        else
          a->s = expectName();
        a->kids.push_back(std::move(e));
        e = std::move(a);
      } else if (acceptOp("[")) {
        ExprP a = make(EK::Index);
        a->kids.push_back(std::move(e));
        if (isOp(":")) error("slices are not supported in templates");
        a->kids.push_back(parseExpr());
        if (isOp(":")) error("slices are not supported in templates");
        expectOp("]");
        e = std::move(a);
      } else if (acceptOp("(")) {
        ExprP c = make(EK::Call);
        c->kids.push_back(std::move(e));
        parseArgs(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }
  ExprP parseFilters(ExprP e) {
    while (true) {
      if (acceptOp("|")) {
        ExprP f = make(EK::Filter);
        f->s = expectName();
        while (isOp(".") && t_[pos_ + 1].kind == TK::Name) {
          ++pos_;
          f->s += "." + expectName();
        }
        f->kids.push_back(std::move(e));
        if (acceptOp("(")) parseArgs(*f);
        e = std::move(f);
      } else if (isName("is")) {
        ++pos_;
        ExprP t = make(EK::Test);
        t->negated = acceptName("not");
        t->s = expectName();
        if (t->s != "defined" && t->s != "undefined" && t->s != "none" && t->s != "None")
          error("the test '" + t->s + "' is not supported in templates");
        t->kids.push_back(std::move(e));
        e = std::move(t);
      } else {
        return e;
      }
    }
  }
  ExprP parsePrimary() {
    const Tok& k = cur();
    ExprP e = make(EK::Lit);
    switch (k.kind) {
    case TK::Str:
      e->lit = LitKind::Str;
      e->s = k.s;
      ++pos_;
      while (cur().kind == TK::Str) e->s += t_[pos_++].s; // implicit concatenation
      return e;
    case TK::Int:
      e->lit = LitKind::Int;
      llvm::StringRef(k.s).getAsInteger(10, e->i);
      ++pos_;
      return e;
    case TK::Float:
      e->lit = LitKind::Float;
      llvm::StringRef(k.s).getAsDouble(e->f);
      ++pos_;
      return e;
    case TK::Name:
      ++pos_;
      if (k.s == "true" || k.s == "True" || k.s == "false" || k.s == "False") {
        e->lit = LitKind::Bool;
        e->i = k.s[0] == 't' || k.s[0] == 'T';
      } else if (k.s == "none" || k.s == "None") {
        e->lit = LitKind::None;
      } else {
        e->kind = EK::Name;
        e->s = k.s;
      }
      return e;
    case TK::Op:
      if (acceptOp("(")) {
        ExprP inner = parseExpr();
        if (isOp(",")) error("tuples are not supported in templates; use a list");
        expectOp(")");
        return inner;
      }
      if (acceptOp("[")) {
        e->kind = EK::List;
        while (!acceptOp("]")) {
          e->kids.push_back(parseExpr());
          if (!acceptOp(",")) {
            expectOp("]");
            break;
          }
        }
        return e;
      }
      if (acceptOp("{")) {
        e->kind = EK::Dict;
        while (!acceptOp("}")) {
          e->kids.push_back(parseExpr());
          expectOp(":");
          e->kids.push_back(parseExpr());
          if (!acceptOp(",")) {
            expectOp("}");
            break;
          }
        }
        return e;
      }
      break;
    default: break;
    }
    error("unexpected '" + (k.s.empty() ? std::string("end of tag") : k.s) + "'");
  }

  std::vector<Tok> t_;
  size_t pos_ = 0;
};

} // namespace

/// Moves the children of a node or expression onto a work list (teardown and depth walks stay iterative).
template <typename F>
static void forEachChild(Expr& e, F&& f) {
  for (ExprP& k : e.kids) f(k.get());
}

Expr::~Expr() {
  std::vector<ExprP> work;
  for (ExprP& k : kids)
    if (k) work.push_back(std::move(k));
  while (!work.empty()) {
    ExprP e = std::move(work.back());
    work.pop_back();
    for (ExprP& k : e->kids)
      if (k) work.push_back(std::move(k));
  } // each `e` dies with no children left
}

Node::~Node() {
  std::vector<NodeP> work;
  auto take = [&work](std::vector<NodeP>& v) {
    for (NodeP& c : v)
      if (c) work.push_back(std::move(c));
  };
  for (auto& [cond, b] : branches) take(b);
  take(body);
  take(elseBody);
  while (!work.empty()) {
    NodeP n = std::move(work.back());
    work.pop_back();
    for (auto& [cond, b] : n->branches) take(b);
    take(n->body);
    take(n->elseBody);
  }
}

/// Depth of the deepest expression tree under `root` (iterative); its line in `line`.
static size_t exprDepth(Expr* root, int& line) {
  size_t best = 0;
  std::vector<std::pair<Expr*, size_t>> work{{root, 1}};
  while (!work.empty()) {
    auto [e, d] = work.back();
    work.pop_back();
    if (d > best) {
      best = d;
      line = e->line;
    }
    forEachChild(*e, [&, d = d](Expr* k) {
      if (k) work.push_back({k, d + 1});
    });
  }
  return best;
}

/// Checks every expression of the template against the nesting limit (block nesting is bounded while
/// parsing).
static bool checkExprDepths(const std::vector<NodeP>& nodes, std::string& err) {
  const size_t limit = limits().maxNesting;
  std::vector<const Node*> work;
  for (const NodeP& n : nodes) work.push_back(n.get());
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    auto check = [&](Expr* e) {
      int line = n->line;
      if (!e || exprDepth(e, line) <= limit) return true;
      err = "line " + std::to_string(line) + ": nested too deep: expression deeper than " +
            std::to_string(limit) + " levels (--max-nesting)";
      return false;
    };
    if (!check(n->expr.get())) return false;
    for (auto& [cond, b] : n->branches) {
      if (!check(cond.get())) return false;
      for (const NodeP& c : b) work.push_back(c.get());
    }
    for (const NodeP& c : n->body) work.push_back(c.get());
    for (const NodeP& c : n->elseBody) work.push_back(c.get());
  }
  return true;
}

std::unique_ptr<Template> parseTemplate(llvm::StringRef source, std::string& err) {
  std::vector<Tok> toks;
  if (!Lexer(source).run(toks, err)) return nullptr;
  Parser p(std::move(toks));
  auto t = std::make_unique<Template>();
  try {
    std::string stop;
    t->nodes = p.parseBody({}, stop);
  } catch (const ParseError& e) {
    err = e.msg;
    return nullptr;
  }
  if (!checkExprDepths(t->nodes, err)) return nullptr;
  return t;
}

} // namespace inm::runtime::plugins::tmpl

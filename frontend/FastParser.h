// The fast-path parser: a hand-written recursive-descent / precedence-climbing parser over FastLexer tokens
// that builds the same Ast (every node, field, StringId and SourceRange, in the same insertion order) as the
// ANTLR path of Parser.cpp, for the files that path accepts without any diagnostic. It never reports: on any
// syntax error, targeted-error case, warning case or construct it is unsure about it gives up (throws its
// private Bail, caught in fastParseFile) and parseFile falls back to ANTLR, which produces the diagnostics.
// Grammar choices follow what ANTLR picks: greedy optional parts, `in` > prefix `not` > `**` > `* / %` >
// `+ -` > comparisons > `and` > `or` > `?:` (right-nested), postfix calls/lookups only on names.
#pragma once

#include "FastLexer.h"
#include "frontend/Ast.h"

#include <string>
#include <vector>

namespace inm::frontend {

/// Parses `text` into `ast` (already holding its FileId); false when the fast path gave up (ast is then
/// junk). On success, `escapeWarnings` receives the ranges of literals with invalid escapes (to be reported
/// as the ANTLR path's InvalidEscape warnings), in source order. When the nesting of blocks/brackets/prefix
/// operators passes Limits::maxNesting it stops at once, returns false and sets `tooDeep` (if given) to the
/// token where it happened: that is a final error, not a doubt.
bool fastParseFile(FileId file, llvm::StringRef text, StringTable& strings, Ast& ast,
                   std::vector<SourceRange>* escapeWarnings = nullptr, SourceRange* tooDeep = nullptr);

/// A canonical text dump of every store of an Ast, field by field and in id order (for differential tests).
std::string rawDumpAst(const Ast& ast, const StringTable& strings);

namespace fast {

struct Bail {};
/// Thrown when the recursion passes Limits::maxNesting (reported by parseFile, never retried with ANTLR).
struct TooDeep {
  SourceRange at;
};

/// A parsed expression with the first and last token of its syntactic extent (parentheses included).
struct PExpr {
  ExprId id;
  Token first, last;
};
struct PStmt {
  StmtId id;
  Token first, last;
};

class Parser {
 public:
  Parser(FileId file, llvm::StringRef text, StringTable& st, Ast& ast)
      : file_(file), lex_(text), st_(st), ast_(ast) {}
  void parseFile();
  const std::vector<SourceRange>& escapeWarnings() const { return escapeWarnings_; }

 private:
  // ---- tokens (FastParser.cpp) ----
  const Token& peek(size_t k = 0) {
    while (buf_.size() <= pos_ + k) buf_.push_back(lex_.next());
    return buf_[pos_ + k];
  }
  TokKind kind(size_t k = 0) { return peek(k).kind; }
  Token take() {
    Token t = peek();
    ++pos_;
    return t;
  }
  Token expect(TokKind k) {
    if (kind() != k) bail();
    return take();
  }
  [[noreturn]] static void bail() { throw Bail{}; }
  /// Counts one level of the parser's recursion; throws TooDeep past Limits::maxNesting.
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser);
    ~Nest() { --p.depth_; }
  };
  uint32_t depth_ = 0;
  llvm::StringRef text(const Token& t) const { return lex_.text(t); }
  SourceRange range(const Token& a, const Token& b) const {
    return SourceRange{file_, a.line, a.col, b.endLine, b.endCol};
  }
  /// Interns the text of tokens [a, b] as ANTLR's getText() would (token texts without the whitespace).
  StringId internSpan(const Token& a, const Token& b);
  /// `anyId ('::' anyId)*` (keywords as names only where the ANTLR path keeps them); returns #tokens.
  unsigned nsRef(Token& first, Token& last, bool keywords = false);
  /// `(anyId '::')* CID`; bails if it is not one.
  unsigned classRef(Token& first, Token& last);
  /// Tokens of a class reference starting at lookahead k (0 if none).
  unsigned classRefAhead(size_t k);

  // ---- declarations and statements (FastParser.cpp) ----
  void topStmt();
  void entityDef();
  void typedAttr(AttrDecl& ad, Token& last);
  void dictAttr(AttrDecl& ad, Token& last);
  void implementationDef();
  void implementDef();
  void relation();
  Multiplicity multi(Token& last);
  void typedefDef();
  void indexDef();
  void importStmt();
  PStmt statement();
  PStmt assign();
  PStmt forStmt();
  StmtId ifBody(Token& last);
  /// Statements until `end`/`elif`/`else`, appended as one run of Ast::stmtLists.
  void body(uint32_t& begin, uint32_t& end, Token* last);
  StringId docOf(const Token& mls);
  bool mentionsSelf(ExprId id, StringId typedefName);
  void addDecl(const Decl& d) { ast_.topDecls.push_back(ast_.decls.add(d)); }

  // ---- expressions and literals (FastParserExpr.cpp) ----
  PExpr expr(int minPrec);
  PExpr unary();
  PExpr primary();
  PExpr namePrimary();
  PExpr keywordCall();
  bool lookupAhead();
  PExpr classPrimary();
  PExpr listPrimary();
  PExpr mapDef();
  ExprId varRefNodes(const Token& first, const Token& nsLast, unsigned nsTokens, size_t partsBegin,
                     size_t partsEnd);
  void args(Expr& e, TokKind close, bool positional, bool nonEmpty, Token& closeTok);
  ExprId constant(const Token& t);
  ExprId stringValue(const std::string& decoded, llvm::StringRef original, SourceRange r);
  ExprId dottedRef(llvm::StringRef text, SourceRange r);
  ExprId regex(const Token& t);
  bool isConstant(TokKind k) const;
  ExprId add(const Expr& e) { return ast_.exprs.add(e); }
  static Expr mk(ExprKind k, SourceRange r) {
    Expr e;
    e.kind = k;
    e.range = r;
    return e;
  }
  void pushExprs(uint32_t base, uint32_t& begin, uint32_t& end);

  FileId file_;
  FastLexer lex_;
  StringTable& st_;
  Ast& ast_;
  std::vector<Token> buf_;
  size_t pos_ = 0;
  std::vector<ExprId> exprStack_; // scratch runs, copied into the Ast when complete
  std::vector<StmtId> stmtStack_;
  std::vector<Arg> argStack_;
  std::vector<StringId> keyStack_;
  std::vector<Token> partStack_;
  std::string scratch_;
  std::vector<SourceRange> escapeWarnings_;
};

} // namespace fast
} // namespace inm::frontend

// The frontend's parser entry: the hand-written fast path (FastParser.h) first, and on any doubt the
// ANTLR-generated lexer/parser (SLL prediction first, full LL only when SLL fails) whose parse trees
// AntlrBuilder.h walks into the compact Ast of Ast.h. Syntax errors become ParserException-class diagnostics
// located at the offending token (the first one of a file; the reference stops there too).
// Invariant: no ANTLR type escapes the frontend; a file either parses or gets exactly one syntax diagnostic.
#include "AntlrBuilder.h"
#include "FastLexer.h"
#include "FastParser.h"
#include "Nesting.h"
#include "frontend/Frontend.h"
#include "support/Limits.h"

#include <fmt/format.h>

namespace inm::frontend {

bool isKeyword(llvm::StringRef s) { return keywordKind(s) != TokKind::Id; }

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

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* tok, size_t line, size_t col,
                   const std::string& msg, std::exception_ptr) override {
    if (first.set) return;
    first.set = true;
    first.range = SourceRange{file_, uint32_t(line), uint32_t(col + 1), uint32_t(line), uint32_t(col + 2)};
    if (!tok) { // lexer error
      first.kind = DiagKind::IllegalCharacter;
      first.arg = msg;
      return;
    }
    std::string text = tok->getText();
    first.range.endCol = first.range.col + uint32_t(std::max<size_t>(1, text.size()));
    if (tok->getType() == antlr4::Token::EOF) {
      first.kind = DiagKind::UnexpectedEof;
      first.range = pastToken(file_, tok);
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
    first.range = pastToken(file_, tok);
  }

 private:
  FileId file_;
  const antlr4::dfa::Vocabulary& vocab_;
};

/// Reports the first syntax error of a file (the reference stops at the first one too).
void reportSyntaxError(const SyntaxError& e, FileId file, DiagnosticEngine& diags) {
  Diagnostic d;
  if (!e.set)
    d = makeDiag(DiagKind::SyntaxErrorDetail, SourceRange::at(SourceLoc{file, 1, 1}), "could not parse file");
  else if (e.kind == DiagKind::UnexpectedEof)
    d = makeDiag(e.kind, e.range);
  else if (e.kind == DiagKind::IllegalCharacter && e.arg.size() > 1) {
    // lexer message "token recognition error at: 'x'"
    std::string c = e.arg;
    size_t q = c.find('\'');
    if (q != std::string::npos) c = c.substr(q + 1, c.size() - q - 2);
    d = makeDiag(e.kind, e.range, c);
  } else
    d = makeDiag(e.kind, e.range, e.arg);
  d.locWithColumn = true;
  diags.report(std::move(d));
}

/// The ANTLR path: the reference parser, and the one that reports syntax errors.
/// Bounds ANTLR's own recursion: its rule invocations nest with the input's brackets and prefix operators,
/// and the generated parser cannot be changed, so a parse listener counts them and aborts the parse (an
/// exception that is no RecognitionException passes through the generated code) when the nesting passes the
/// limit.
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
    AntlrBuilder b(file, sm, strings, diags, ast);
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
        } // AntlrTooDeep is no std::exception: it reaches the handler below
        parser.removeErrorListeners();
        if (!errors.first.set && stmt && tokens.index() == start) {
          // no progress without an error: report the token that could not start a statement
          errors.first.set = true;
          errors.first.kind = DiagKind::SyntaxError;
          antlr4::Token* t = tokens.LT(1);
          errors.first.range = pastToken(file, t);
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
                fmt::format("more than {} levels of brackets, operators or blocks (--max-nesting)",
                            limits().maxNesting));
  } catch (const std::exception& e) {
    Diagnostic d = makeDiag(DiagKind::SyntaxErrorDetail, SourceRange::at(SourceLoc{file, 1, 1}),
                            std::string("could not parse file: ") + e.what());
    d.locWithColumn = true;
    diags.report(std::move(d));
  } catch (...) {
    Diagnostic d =
        makeDiag(DiagKind::SyntaxErrorDetail, SourceRange::at(SourceLoc{file, 1, 1}), "could not parse file");
    d.locWithColumn = true;
    diags.report(std::move(d));
  }
  return ast;
}

} // namespace

// Dispatch: the hand-written fast path (FastParser.h) first; on any doubt it gives up without a word and the
// ANTLR path parses the file and reports. ParseOptions::mode (Frontend.h) can force the ANTLR path or, for
// testing, make fast-path rejections errors or compare both paths' Asts.
/// Reports an Ast nested deeper than the limit (Nesting.h); such an Ast is replaced by an empty one so that
/// no later walk sees it. Returns the Ast to use.
static Ast checkedNesting(Ast ast, DiagnosticEngine& diags) {
  SourceRange at = findTooDeep(ast, limits().maxNesting);
  if (!at.file.valid()) return ast;
  diags.error(
      DiagKind::NestedTooDeep, at,
      fmt::format("more than {} levels of expressions and blocks (--max-nesting)", limits().maxNesting));
  Ast empty;
  empty.file = ast.file;
  return empty;
}

static Ast parseFileChecked(FileId file, const SourceManager& sm, StringTable& strings,
                            DiagnosticEngine& diags, ParserMode mode);

/// Before the ANTLR path: the first token where brackets plus a run of `not`s nest deeper than the limit,
/// found in one linear pass of the fast lexer. ANTLR's adaptive prediction looks ahead to the matching
/// bracket at every level, so 20,000 nested brackets cost it minutes before its recursion could be counted
/// (found by the evaluator fuzzer); this check answers first. An invalid range when within the limit.
static SourceRange tooDeepTokens(FileId file, llvm::StringRef text) {
  FastLexer lex(text);
  uint32_t brackets = 0, nots = 0;
  const uint32_t limit = limits().maxNesting;
  for (;;) {
    Token t = lex.next();
    if (t.kind == TokKind::Eof || t.kind == TokKind::Error) return SourceRange{};
    if (t.kind == TokKind::LParen || t.kind == TokKind::LBrack || t.kind == TokKind::LBrace)
      ++brackets;
    else if ((t.kind == TokKind::RParen || t.kind == TokKind::RBrack || t.kind == TokKind::RBrace) &&
             brackets)
      --brackets;
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
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!len || i + len > n) return i;
    unsigned char c1 = p[i + 1];
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0)
      lo = 0xA0;
    else if (c == 0xED)
      hi = 0x9F; // no surrogates
    else if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F;
    if (c1 < lo || c1 > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return llvm::StringRef::npos;
}

std::optional<ParserMode> parserModeFromName(llvm::StringRef name) {
  if (name.empty()) return ParserMode::Default;
  if (name == "antlr") return ParserMode::Antlr;
  if (name == "fast-strict") return ParserMode::FastStrict;
  if (name == "fast-check") return ParserMode::FastCheck;
  return std::nullopt;
}

Ast parseFile(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags,
              const ParseOptions& opts) {
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
                static_cast<unsigned char>(text[bad]), line, col);
    Ast empty;
    empty.file = file;
    return empty;
  }
  Ast ast = parseFileChecked(file, sm, strings, diags, opts.mode);
  if (diags.errorCount() != before) return ast;
  return checkedNesting(std::move(ast), diags);
}

static Ast parseFileChecked(FileId file, const SourceManager& sm, StringTable& strings,
                            DiagnosticEngine& diags, ParserMode mode) {
  if (mode == ParserMode::Antlr) return parseFileAntlr(file, sm, strings, diags);
  llvm::StringRef text = sm.text(file);
  Ast fast;
  fast.file = file;
  std::vector<SourceRange> warnings;
  SourceRange tooDeep;
  bool fastOk = text.empty() || fastParseFile(file, text, strings, fast, &warnings, &tooDeep);
  if (tooDeep.file.valid()) {
    diags.error(DiagKind::NestedTooDeep, tooDeep,
                fmt::format("more than {} levels of brackets, operators or blocks (--max-nesting)",
                            limits().maxNesting));
    Ast empty;
    empty.file = file;
    return empty;
  }
  if (fastOk && mode != ParserMode::FastCheck) {
    for (const SourceRange& r : warnings) diags.report(makeDiag(DiagKind::InvalidEscape, r));
    return fast;
  }
  if (SourceRange deep = tooDeepTokens(file, text); deep.file.valid()) {
    diags.error(DiagKind::NestedTooDeep, deep,
                fmt::format("more than {} levels of brackets, operators or blocks (--max-nesting)",
                            limits().maxNesting));
    Ast empty;
    empty.file = file;
    return empty;
  }
  unsigned before = diags.errorCount();
  Ast ast = parseFileAntlr(file, sm, strings, diags);
  bool antlrOk = diags.errorCount() == before;
  auto fail = [&](const std::string& msg) {
    Diagnostic& d = diags.error(DiagKind::ParserDisagreement, SourceRange::at(SourceLoc{file, 1, 1}), msg);
    d.locWithColumn = true;
  };
  if (!fastOk && antlrOk && (mode == ParserMode::FastStrict || mode == ParserMode::FastCheck))
    fail("rejected a file the ANTLR parser accepts");
  if (mode == ParserMode::FastCheck && fastOk) {
    if (!antlrOk)
      fail("accepted a file the ANTLR parser rejects");
    else if (rawDumpAst(fast, strings) != rawDumpAst(ast, strings))
      fail("built a different AST");
  }
  return ast;
}

} // namespace inm::frontend

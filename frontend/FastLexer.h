// The hand-written lexer of the fast-path parser (FastParser.h): splits a `.cf` buffer into tokens exactly as
// the ANTLR lexer of grammar/Inmanta.g4 does (longest match, ties to the earlier rule: keywords before ID,
// `-` followed by digits is part of a number, `-` inside identifiers, REGEX only as `matching /…/`), and
// records each token's position the way the ANTLR path reports it (line; column in code points, 1-based;
// end column = start column + byte length, or for a token spanning lines the bytes after its last newline).
// Invariant: the lexer never reports anything; any input it is not certain about (an illegal character,
// an unterminated string, invalid UTF-8) yields a TokKind::Error token and the fast path gives up.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <vector>

namespace inm::frontend {

// The token list is laid out by family and the X-macro bodies must stay as written:
// clang-format off
enum class TokKind : uint8_t {
  Eof, Error,
  Id, Cid, Int, Float, String, FString, RString, Mls, Regex,
  // keywords (grammar order)
#define INM_KEYWORD(Tok, Spelling, AsId) Tok,
#include "Keywords.def"
  // punctuation
  Sep, Rel, CmpOp, Peq, Plus, Minus, Div, DStar, Star, Percent, Colon, LBrack, RBrack, LParen, RParen, Eq,
  Comma, Dot, LBrace, RBrace, QMark,
};

/// True for the keywords the grammar also accepts where an identifier is expected (`keywordAsId`).
inline bool isKeywordAsId(TokKind k) {
  switch (k) {
#define INM_KEYWORD(Tok, Spelling, AsId) \
  case TokKind::Tok:                     \
    return AsId;
#include "Keywords.def"
  default:
    return false;
  }
}
// clang-format on

/// The keyword token of a word, or TokKind::Id when the word is no keyword.
TokKind keywordKind(llvm::StringRef word);

struct Token {
  TokKind kind = TokKind::Eof;
  uint32_t offset = 0, length = 0;  // bytes in the buffer
  uint32_t line = 0, col = 0;       // start: 1-based line, 1-based column in code points
  uint32_t endLine = 0, endCol = 0; // end as the ANTLR path computes it (see file comment)
};

class FastLexer {
 public:
  explicit FastLexer(llvm::StringRef text) : text_(text) {}
  /// Produces the next token (Eof at the end, Error when unsure; both repeat forever).
  Token next();
  llvm::StringRef text(const Token& t) const { return text_.substr(t.offset, t.length); }
  size_t size() const { return text_.size(); }

 private:
  Token make(TokKind k, uint32_t begin);
  bool scanQuoted(uint32_t& pos, char quote); // a one-line string body after its opening quote
  bool advanceUtf8(uint32_t& pos);            // one non-ASCII code point; false if invalid UTF-8
  TokKind word(uint32_t begin);

  llvm::StringRef text_;
  uint32_t pos_ = 0;
  uint32_t line_ = 1, col_ = 0; // at pos_: line and 0-based column in code points
  bool failed_ = false;
};

} // namespace inm::frontend

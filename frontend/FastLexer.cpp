// The fast-path lexer (see FastLexer.h): one pass over the buffer, no allocation per token. Each branch
// mirrors one group of lexer rules of grammar/Inmanta.g4 and resolves overlaps by ANTLR's longest-match
// discipline; anything outside the certain cases becomes an Error token so the ANTLR path takes over.
#include "FastLexer.h"

#include <llvm/ADT/StringSwitch.h>

namespace inm::frontend {

namespace {

bool isIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }

} // namespace

bool FastLexer::advanceUtf8(uint32_t& pos) {
  auto byte = [&](uint32_t i) -> unsigned { return i < text_.size() ? (unsigned char)text_[i] : 0u; };
  unsigned c = byte(pos);
  unsigned n;
  unsigned lo = 0x80, hi = 0xBF; // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    n = 1;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F; // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else
    return false;
  unsigned second = byte(pos + 1);
  if (second < lo || second > hi) return false;
  for (unsigned i = 2; i <= n; ++i)
    if ((byte(pos + i) & 0xC0) != 0x80) return false;
  pos += n + 1;
  return true;
}

Token FastLexer::make(TokKind k, uint32_t begin) {
  Token t;
  t.kind = k;
  t.offset = begin;
  t.length = pos_ - begin;
  t.line = line_;
  t.col = col_ + 1;
  t.endLine = line_;
  t.endCol = t.col + t.length;
  col_ += t.length; // ASCII-only tokens; multi-line/UTF-8 tokens are fixed up by the caller
  return t;
}

bool FastLexer::scanQuoted(uint32_t& pos, char quote) {
  const uint32_t n = uint32_t(text_.size());
  while (pos < n) {
    char c = text_[pos];
    if (c == quote) {
      ++pos;
      return true;
    }
    if (c == '\n') return false;
    if (c == '\\') {
      if (pos + 1 >= n) return false;
      pos += 2;
      continue;
    }
    ++pos;
  }
  return false;
}

TokKind keywordKind(llvm::StringRef w) {
  if (w.size() < 2 || w.size() > 14) return TokKind::Id;
  llvm::StringSwitch<TokKind> sw(w);
#define INM_KEYWORD(Tok, Spelling, AsId) sw.Case(Spelling, TokKind::Tok);
#include "Keywords.def"
  return sw.Default(TokKind::Id);
}

TokKind FastLexer::word(uint32_t begin) { return keywordKind(text_.substr(begin, pos_ - begin)); }

Token FastLexer::next() {
  const uint32_t n = uint32_t(text_.size());
  auto at = [&](uint32_t i) -> char { return i < n ? text_[i] : '\0'; };
  Token err;
  err.kind = TokKind::Error;
  if (failed_) return err;
  // whitespace and comments
  for (;;) {
    if (pos_ >= n) {
      Token eof;
      eof.offset = n;
      eof.line = line_;
      eof.col = col_ + 1;
      eof.endLine = line_;
      eof.endCol = col_ + 1;
      return eof;
    }
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
      ++col_;
    } else if (c == '\n') {
      ++pos_;
      ++line_;
      col_ = 0;
    } else if (c == '#') {
      while (pos_ < n && text_[pos_] != '\n') {
        if ((unsigned char)text_[pos_] >= 0x80) {
          if (!advanceUtf8(pos_)) {
            failed_ = true;
            return err;
          }
        } else
          ++pos_;
      }
    } else
      break;
  }
  const uint32_t b = pos_;
  const char c = text_[pos_];
  // A token that may span lines or hold UTF-8: recompute line/column over its bytes.
  auto spanning = [&](TokKind k) -> Token {
    Token t;
    t.kind = k;
    t.offset = b;
    t.length = pos_ - b;
    t.line = line_;
    t.col = col_ + 1;
    uint32_t lastNl = UINT32_MAX;
    uint32_t i = b;
    while (i < pos_) {
      unsigned char ch = (unsigned char)text_[i];
      if (ch == '\n') {
        lastNl = i;
        ++line_;
        col_ = 0;
        ++i;
      } else if (ch >= 0x80) {
        if (!advanceUtf8(i) || i > pos_) {
          failed_ = true;
          return err;
        }
        ++col_;
      } else {
        ++col_;
        ++i;
      }
    }
    if (lastNl == UINT32_MAX) {
      t.endLine = t.line;
      t.endCol = t.col + t.length;
    } else {
      t.endLine = line_;
      t.endCol = pos_ - lastNl;
    }
    return t;
  };
  auto fail = [&]() {
    failed_ = true;
    return err;
  };

  if ((c >= 'a' && c <= 'z') || c == '_') {
    ++pos_;
    while (pos_ < n && isIdChar(text_[pos_])) ++pos_;
    uint32_t len = pos_ - b;
    if (len == 1 && (c == 'f' || c == 'r') && (at(pos_) == '"' || at(pos_) == '\'')) {
      char q = text_[pos_++];
      if (!scanQuoted(pos_, q)) return fail();
      return spanning(c == 'f' ? TokKind::FString : TokKind::RString);
    }
    TokKind k = word(b);
    if (k == TokKind::KMatching) {
      // REGEX : 'matching' [ \t\r\n]+ '/' (~[/\\\n] | '\\' .)+ '/'
      uint32_t p = pos_;
      while (p < n && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\r' || text_[p] == '\n')) ++p;
      if (p > pos_ && at(p) == '/') {
        ++p;
        uint32_t bodyStart = p;
        bool ok = false;
        while (p < n) {
          char ch = text_[p];
          if (ch == '/') {
            ok = p > bodyStart;
            break;
          }
          if (ch == '\n') break;
          if (ch == '\\') {
            if (p + 1 >= n) break;
            p += 2;
            continue;
          }
          ++p;
        }
        if (ok) {
          pos_ = p + 1;
          return spanning(TokKind::Regex);
        }
        // `matching /` without a regex: ANTLR falls back to the keyword; be safe and give up.
        return fail();
      }
    }
    return make(k, b);
  }
  if (c >= 'A' && c <= 'Z') {
    ++pos_;
    while (pos_ < n && isIdChar(text_[pos_])) ++pos_;
    return make(TokKind::Cid, b);
  }
  // numbers: FLOAT : '-'? [0-9]* '.' [0-9]+ ;  INT : '-'? [0-9]+
  if (isDigit(c) || (c == '-' && (isDigit(at(pos_ + 1)) || (at(pos_ + 1) == '.' && isDigit(at(pos_ + 2))))) ||
      (c == '.' && isDigit(at(pos_ + 1)))) {
    if (c == '-') ++pos_;
    while (pos_ < n && isDigit(text_[pos_])) ++pos_;
    if (at(pos_) == '.' && isDigit(at(pos_ + 1))) {
      pos_ += 2;
      while (pos_ < n && isDigit(text_[pos_])) ++pos_;
      return make(TokKind::Float, b);
    }
    return make(TokKind::Int, b);
  }
  auto one = [&](TokKind k) {
    ++pos_;
    return make(k, b);
  };
  auto two = [&](TokKind k) {
    pos_ += 2;
    return make(k, b);
  };
  char d = at(pos_ + 1);
  switch (c) {
  case '"':
    if (d == '"' && at(pos_ + 2) == '"') {
      size_t close = text_.find("\"\"\"", pos_ + 3);
      if (close == llvm::StringRef::npos) return fail();
      pos_ = uint32_t(close + 3);
      return spanning(TokKind::Mls);
    }
    [[fallthrough]];
  case '\'':
    ++pos_;
    if (!scanQuoted(pos_, c)) return fail();
    return spanning(TokKind::String);
  case '-': return (d == '-' || d == '>') ? two(TokKind::Rel) : one(TokKind::Minus);
  case '<': return d == '-' ? two(TokKind::Rel) : d == '=' ? two(TokKind::CmpOp) : one(TokKind::CmpOp);
  case '>': return d == '=' ? two(TokKind::CmpOp) : one(TokKind::CmpOp);
  case '=': return d == '=' ? two(TokKind::CmpOp) : one(TokKind::Eq);
  case '!': return d == '=' ? two(TokKind::CmpOp) : fail();
  case '+': return d == '=' ? two(TokKind::Peq) : one(TokKind::Plus);
  case '*': return d == '*' ? two(TokKind::DStar) : one(TokKind::Star);
  case ':': return d == ':' ? two(TokKind::Sep) : one(TokKind::Colon);
  case '/': return one(TokKind::Div);
  case '%': return one(TokKind::Percent);
  case '[': return one(TokKind::LBrack);
  case ']': return one(TokKind::RBrack);
  case '(': return one(TokKind::LParen);
  case ')': return one(TokKind::RParen);
  case '{': return one(TokKind::LBrace);
  case '}': return one(TokKind::RBrace);
  case ',': return one(TokKind::Comma);
  case '.': return one(TokKind::Dot);
  case '?': return one(TokKind::QMark);
  default: return fail();
  }
}

} // namespace inm::frontend

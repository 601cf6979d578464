// A JSON text walker that hands out byte ranges instead of building trees: the cursor (strings with escapes
// found by memchr, nested values skipped by bracket depth, scalars up to their delimiter) and, on it, the
// member and element walks used by the artifact's streaming reader (artifact/ArtifactScan.h), the executor
// protocol's frame decoder and the Python bridge. It validates only the structure it walks, not the inside of
// the values it skips, which the consumer parses if it needs them. Invariant: a raw value handed out is one
// complete JSON value as it appears in the text; malformed text is an error naming the byte offset.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace inm::support {

/// A position in a JSON text. Each method skips leading whitespace; a failing one records the first error
/// with the byte offset and returns false.
class JsonCursor {
 public:
  explicit JsonCursor(std::string_view s) : s_(s) {}
  const std::string& error() const { return err_; }

  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool expect(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return fail(std::string("expected '") + c + "'");
  }
  /// Consumes `c` if it is next (after whitespace).
  bool accept(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool atEnd() {
    ws();
    return i_ == s_.size();
  }
  /// A string token; `raw` is its text including the quotes.
  bool string(std::string_view& raw) {
    ws();
    if (i_ >= s_.size() || s_[i_] != '"') return fail("expected a string");
    size_t b = i_++;
    // The closing quote is the first '"' preceded by an even number of backslashes (memchr: the hot loop).
    for (;;) {
      const void* q = i_ < s_.size() ? std::memchr(s_.data() + i_, '"', s_.size() - i_) : nullptr;
      if (!q) return fail("unterminated string");
      size_t at = size_t(static_cast<const char*>(q) - s_.data());
      size_t slashes = 0;
      while (at - slashes > b + 1 && s_[at - slashes - 1] == '\\') ++slashes;
      i_ = at + 1;
      if (slashes % 2 == 0) break;
    }
    raw = s_.substr(b, i_ - b);
    return true;
  }
  /// Any value; `raw` is its text.
  bool value(std::string_view& raw) {
    ws();
    if (i_ >= s_.size()) return fail("expected a value");
    size_t b = i_;
    if (s_[i_] == '"') return string(raw);
    if (s_[i_] == '{' || s_[i_] == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        char c = s_[i_];
        if (c == '"') {
          std::string_view ignored;
          if (!string(ignored)) return false;
          continue;
        }
        ++i_;
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) {
          raw = s_.substr(b, i_ - b);
          return true;
        }
      }
      return fail("unterminated object or array");
    }
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' &&
           s_[i_] != '\n' && s_[i_] != '\t' && s_[i_] != '\r')
      ++i_;
    if (i_ == b) return fail("expected a value");
    raw = s_.substr(b, i_ - b);
    return true;
  }
  bool fail(const std::string& what) {
    if (err_.empty()) err_ = what + " at byte " + std::to_string(i_);
    return false;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  std::string err_;
};

/// Calls `member(key, raw)` for each member of the JSON object `object` in document order; `key` is the text
/// between its quotes (escapes are not decoded: callers compare plain keys). `what` names the object in
/// errors. The whole text must be the object (whitespace around it allowed).
llvm::Error forEachMember(std::string_view object, std::string_view what,
                          llvm::function_ref<llvm::Error(std::string_view key, std::string_view raw)> member);

/// Calls `element(index, raw)` for each element of the JSON array `array`.
llvm::Error forEachElement(std::string_view array, std::string_view what,
                           llvm::function_ref<llvm::Error(size_t index, std::string_view raw)> element);

/// The text of a JSON string token without its quotes, decoded (escapes applied); `raw` includes the quotes.
/// Strings without a backslash are returned without parsing.
llvm::Expected<std::string> decodeString(std::string_view raw);

/// The errors of the walks, for callers that drive a JsonCursor themselves.
llvm::Error notAJson(std::string_view what, std::string_view kind);
llvm::Error malformedJson(std::string_view what, const JsonCursor& c);

} // namespace inm::support

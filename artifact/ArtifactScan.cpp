// The streaming reader of ArtifactScan.h: a small JSON cursor (strings with escapes, nested values skipped by
// bracket depth, scalars up to their delimiter) that records byte ranges. It validates only the structure it
// walks: the members and elements it hands out, not the inside of the values it skips, which the consumer
// parses if it needs them.
#include "artifact/ArtifactScan.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>

namespace inm::artifact {

namespace {

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
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

llvm::Error notAn(std::string_view what, std::string_view kind) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%.*s is not a JSON %.*s", int(what.size()),
                                 what.data(), int(kind.size()), kind.data());
}

llvm::Error malformed(std::string_view what, const Cursor& c) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%.*s is malformed: %s", int(what.size()),
                                 what.data(), c.error().c_str());
}

} // namespace

llvm::Error forEachMember(std::string_view object, std::string_view what,
                          llvm::function_ref<llvm::Error(std::string_view, std::string_view)> member) {
  Cursor c(object);
  if (!c.accept('{')) return notAn(what, "object");
  if (!c.accept('}')) {
    do {
      std::string_view key, raw;
      if (!c.string(key) || !c.expect(':') || !c.value(raw)) return malformed(what, c);
      if (llvm::Error e = member(key.substr(1, key.size() - 2), raw)) return e;
    } while (c.accept(','));
    if (!c.expect('}')) return malformed(what, c);
  }
  if (!c.atEnd()) return c.fail("text after the end"), malformed(what, c);
  return llvm::Error::success();
}

llvm::Error forEachElement(std::string_view array, std::string_view what,
                           llvm::function_ref<llvm::Error(size_t, std::string_view)> element) {
  Cursor c(array);
  if (!c.accept('[')) return notAn(what, "array");
  if (!c.accept(']')) {
    size_t index = 0;
    do {
      std::string_view raw;
      if (!c.value(raw)) return malformed(what, c);
      if (llvm::Error e = element(index++, raw)) return e;
    } while (c.accept(','));
    if (!c.expect(']')) return malformed(what, c);
  }
  if (!c.atEnd()) return c.fail("text after the end"), malformed(what, c);
  return llvm::Error::success();
}

llvm::Error scanArtifact(std::string_view text, const ArtifactVisitor& visitor) {
  // The top level is walked here rather than with forEachMember, so that `resources` is read once, element
  // by element, instead of being skipped as one value first.
  constexpr std::string_view what = "the export artifact";
  bool sawResources = false;
  Cursor c(text);
  if (!c.accept('{')) return notAn(what, "object");
  if (!c.accept('}')) {
    do {
      std::string_view key, raw;
      if (!c.string(key) || !c.expect(':')) return malformed(what, c);
      key = key.substr(1, key.size() - 2);
      if (key != "resources") {
        if (!c.value(raw)) return malformed(what, c);
        if (llvm::Error e = visitor.member(key, raw)) return e;
        continue;
      }
      sawResources = true;
      if (!c.expect('[')) return malformed(what, c);
      if (!c.accept(']')) {
        size_t index = 0;
        do {
          if (!c.value(raw)) return malformed(what, c);
          if (llvm::Error e = visitor.resource(index++, raw)) return e;
        } while (c.accept(','));
        if (!c.expect(']')) return malformed(what, c);
      }
    } while (c.accept(','));
    if (!c.expect('}')) return malformed(what, c);
  }
  if (!c.atEnd()) return c.fail("text after the end"), malformed(what, c);
  if (!sawResources)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the export artifact has no `resources` array");
  return llvm::Error::success();
}

llvm::Expected<std::string> decodeString(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"')
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "expected a JSON string");
  if (raw.find('\\') == std::string_view::npos) return std::string(raw.substr(1, raw.size() - 2));
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_string()) return llvm::createStringError(llvm::inconvertibleErrorCode(), "malformed JSON string");
  return j.get<std::string>();
}

} // namespace inm::artifact

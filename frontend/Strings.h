// Private helpers of the frontend for string literals; see Strings.cpp.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace inm::frontend {

/// Python-style escape decoding; sets *invalidEscape when a backslash sequence was kept verbatim.
/// `badCodePoint` (optional) is set when a \u/\U/\x escape names a surrogate (U+D800..U+DFFF) or a value
/// above U+10FFFF: such a string cannot be UTF-8, so both parsers make it an error (the escape is kept as
/// written).
std::string decodeEscapes(llvm::StringRef s, bool* invalidEscape, bool* badCodePoint = nullptr);

/// Compiles a typedef regex with RE2 (the engine the runtime matches with: linear time, no recursion); "" if
/// it is valid, else the error text (lookaround and backreferences are unsupported and say so).
std::string checkRegex(const std::string& pattern);

/// One `{{ name }}` placeholder: byte offsets [begin, end) of the whole placeholder and the name text.
struct Placeholder {
  size_t begin, end;
  std::string name;
};
std::vector<Placeholder> findPlaceholders(llvm::StringRef s);

/// A piece of an f-string: literal text, or a field `{name!conv:spec}` whose spec is itself a list.
struct FField {
  bool isField = false;
  std::string literal;
  std::string name;
  char conversion = 0;
  std::vector<FField> spec;
};
/// Parses f-string text; on failure returns false with a message for "Invalid f-string: …".
bool parseFString(llvm::StringRef s, std::vector<FField>& out, std::string& error);

} // namespace inm::frontend

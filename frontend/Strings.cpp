// String literal semantics of the frontend (language spec §1.3): escape decoding like Python's
// unicode_escape (an invalid escape keeps its backslash and is reported as a warning by the caller),
// `{{ x.y }}` placeholders of plain strings, and the field syntax of f-strings (Python's Formatter rules:
// `{{`/`}}` are literal braces, `{name!conv:spec}` fields, nested fields inside specs).
// Invariant: these helpers only compute; the AST builder turns their results into nodes and diagnostics.
#include "Strings.h"

#include <llvm/Support/ConvertUTF.h>
#include <re2/re2.h>

namespace inm::frontend {

static void appendUtf8(std::string& out, uint32_t cp) {
  char buf[8];
  char* p = buf;
  if (!llvm::ConvertCodePointToUTF8(cp, p)) return;
  out.append(buf, p);
}

static int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decodeEscapes(llvm::StringRef s, bool* invalidEscape, bool* badCodePoint) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\' || i + 1 >= s.size()) {
      out += c;
      continue;
    }
    char n = s[++i];
    switch (n) {
    case '\n': break; // line continuation
    case '\\': out += '\\'; break;
    case '\'': out += '\''; break;
    case '"': out += '"'; break;
    case 'a': out += '\a'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'n': out += '\n'; break;
    case 'r': out += '\r'; break;
    case 't': out += '\t'; break;
    case 'v': out += '\v'; break;
    case 'x':
    case 'u':
    case 'U': {
      int digits = n == 'x' ? 2 : n == 'u' ? 4 : 8;
      uint32_t cp = 0;
      int k = 0;
      for (; k < digits && i + 1 + k < s.size() && hexValue(s[i + 1 + k]) >= 0; ++k)
        cp = cp * 16 + uint32_t(hexValue(s[i + 1 + k]));
      if (k != digits) {
        out += '\\';
        out += n;
        if (invalidEscape) *invalidEscape = true;
        break;
      }
      if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
        if (badCodePoint) *badCodePoint = true;
        out += '\\';
        out += n;
        break;
      }
      i += size_t(digits);
      if (n == 'x' && cp < 0x80)
        out += char(cp);
      else
        appendUtf8(out, cp);
      break;
    }
    default:
      if (n >= '0' && n <= '7') {
        uint32_t cp = uint32_t(n - '0');
        for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k)
          cp = cp * 8 + uint32_t(s[++i] - '0');
        appendUtf8(out, cp);
        break;
      }
      out += '\\';
      out += n;
      if (invalidEscape) *invalidEscape = true;
    }
  }
  return out;
}

std::vector<Placeholder> findPlaceholders(llvm::StringRef s) {
  std::vector<Placeholder> out;
  size_t pos = 0;
  while (true) {
    size_t open = s.find("{{", pos);
    if (open == llvm::StringRef::npos) break;
    size_t i = open + 2;
    while (i < s.size() && isspace((unsigned char)s[i])) ++i;
    size_t nameBegin = i;
    while (i < s.size() && (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_' || s[i] == '-')) ++i;
    size_t nameEnd = i;
    while (i < s.size() && isspace((unsigned char)s[i])) ++i;
    if (nameEnd > nameBegin && s.substr(i).startswith("}}")) {
      out.push_back(Placeholder{open, i + 2, s.slice(nameBegin, nameEnd).str()});
      pos = i + 2;
    } else {
      pos = open + 1;
    }
  }
  return out;
}

bool parseFString(llvm::StringRef s, std::vector<FField>& out, std::string& error) {
  std::string lit;
  auto flush = [&]() {
    if (!lit.empty()) {
      FField f;
      f.literal = lit;
      out.push_back(std::move(f));
      lit.clear();
    }
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '{') {
      if (i + 1 < s.size() && s[i + 1] == '{') {
        lit += '{';
        ++i;
        continue;
      }
      // a field: name up to '!' ':' or '}' (brackets nest inside the spec)
      size_t j = i + 1;
      while (j < s.size() && s[j] != '}' && s[j] != '!' && s[j] != ':' && s[j] != '{') ++j;
      if (j >= s.size() || s[j] == '{') {
        error = "expected '}' before end of string";
        return false;
      }
      FField f;
      f.isField = true;
      f.name = s.slice(i + 1, j).trim().str();
      if (s[j] == '!') {
        if (j + 1 >= s.size()) {
          error = "end of string while looking for conversion specifier";
          return false;
        }
        f.conversion = s[j + 1];
        j += 2;
        if (j >= s.size() || (s[j] != ':' && s[j] != '}')) {
          error = "expected ':' after conversion specifier";
          return false;
        }
      }
      if (s[j] == ':') {
        size_t k = j + 1;
        int depth = 0;
        while (k < s.size() && !(s[k] == '}' && depth == 0)) {
          if (s[k] == '{')
            ++depth;
          else if (s[k] == '}')
            --depth;
          ++k;
        }
        if (k >= s.size()) {
          error = "expected '}' before end of string";
          return false;
        }
        std::vector<FField> spec;
        if (!parseFString(s.slice(j + 1, k), spec, error)) return false;
        f.spec = std::move(spec);
        j = k;
      }
      flush();
      out.push_back(std::move(f));
      i = j;
      continue;
    }
    if (c == '}') {
      if (i + 1 < s.size() && s[i + 1] == '}') {
        lit += '}';
        ++i;
        continue;
      }
      error = "Single '}' encountered in format string";
      return false;
    }
    lit += c;
  }
  flush();
  return true;
}

std::string checkRegex(const std::string& pattern) {
  RE2::Options ro;
  ro.set_log_errors(false);
  RE2 re(pattern, ro);
  if (re.ok()) return "";
  std::string err = re.error();
  if (re.error_code() == RE2::ErrorBadPerlOp || re.error_code() == RE2::ErrorBadEscape)
    err += " (lookaround and backreferences are not supported)";
  return err;
}

} // namespace inm::frontend

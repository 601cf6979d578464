// Printing and parsing of resource ids (see ResourceId.h for the escaping scheme). The parser is a
// single left-to-right scan: type up to the first `[`, agent up to the first unescaped `,`, attribute up
// to the first unescaped `=`, value up to the first unescaped `]`, then an optional `,v=<digits>` and
// the end. Invariant: parseResourceId(id.print()) reproduces `id` exactly.
#include "artifact/ResourceId.h"

#include <llvm/ADT/StringExtras.h>

#include <charconv>

namespace inm::artifact {

namespace {

bool needsEscape(char c, IdPart part) {
  switch (part) {
  case IdPart::Agent: return c == '\\' || c == ',' || c == ']';
  case IdPart::Attribute: return c == '\\' || c == ',' || c == '=' || c == ']';
  case IdPart::Value: return c == '\\' || c == ']';
  }
  return false;
}

bool isNameChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return llvm::isAlnum(c) || c == '_' || c == '-' || u >= 0x80; // \w is Unicode-aware in the reference
}

/// `[\w-]+(::[\w-]+)+`
bool validType(llvm::StringRef t) {
  size_t parts = 0;
  while (true) {
    size_t n = 0;
    while (n < t.size() && isNameChar(t[n])) ++n;
    if (n == 0) return false;
    ++parts;
    t = t.drop_front(n);
    if (t.empty()) return parts >= 2;
    if (!t.consume_front("::")) return false;
  }
}

llvm::Error fail(const llvm::Twine& why, llvm::StringRef text) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "invalid resource id '" + text + "': " + why);
}

/// Reads an escaped part up to (not including) the first unescaped `stop`; advances `pos` past it.
bool readPart(llvm::StringRef text, size_t& pos, char stop, std::string& out) {
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '\\') {
      if (pos + 1 >= text.size()) return false;
      out += text[pos + 1];
      pos += 2;
      continue;
    }
    if (c == stop) {
      ++pos;
      return true;
    }
    out += c;
    ++pos;
  }
  return false;
}

} // namespace

void appendEscaped(std::string& out, llvm::StringRef text, IdPart part) {
  for (char c : text) {
    if (needsEscape(c, part)) out += '\\';
    out += c;
  }
}

std::string ResourceId::str() const {
  std::string out;
  out.reserve(type.size() + agent.size() + attribute.size() + value.size() + 4);
  out += type;
  out += '[';
  appendEscaped(out, agent, IdPart::Agent);
  out += ',';
  appendEscaped(out, attribute, IdPart::Attribute);
  out += '=';
  appendEscaped(out, value, IdPart::Value);
  out += ']';
  return out;
}

std::string ResourceId::versioned(int64_t v) const {
  std::string out = str();
  appendVersionSuffix(out, v);
  return out;
}

void appendVersionSuffix(std::string& out, int64_t version) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, version);
  (void)ec; // 24 bytes hold every int64
  out += kVersionSeparator;
  out.append(digits, end);
}

llvm::Expected<ResourceId> parseResourceId(llvm::StringRef text) {
  ResourceId id;
  size_t open = text.find('[');
  if (open == llvm::StringRef::npos) return fail("missing '['", text);
  id.type = text.substr(0, open).str();
  if (!validType(id.type)) return fail("the type must look like 'module::Entity'", text);
  size_t pos = open + 1;
  if (!readPart(text, pos, ',', id.agent)) return fail("missing ',' after the agent", text);
  if (id.agent.empty()) return fail("empty agent", text);
  if (!readPart(text, pos, '=', id.attribute)) return fail("missing '=' after the id attribute", text);
  if (id.attribute.empty()) return fail("empty id attribute", text);
  if (!readPart(text, pos, ']', id.value)) return fail("missing ']' after the id value", text);
  if (id.value.empty()) return fail("empty id value", text);
  llvm::StringRef rest = text.substr(pos);
  if (rest.empty()) return id;
  if (!rest.consume_front(kVersionSeparator) || rest.empty() || rest.size() > 18 ||
      !llvm::all_of(rest, [](char c) { return llvm::isDigit(c); }))
    return fail("expected ',v=<number>' or the end after ']'", text);
  id.hasVersion = true;
  rest.getAsInteger(10, id.version);
  return id;
}

std::optional<VersionSplit> splitVersion(llvm::StringRef printedId) {
  size_t at = printedId.rfind(kVersionSeparator);
  if (at == llvm::StringRef::npos || at == 0 || printedId[at - 1] != ']') return std::nullopt;
  llvm::StringRef digits = printedId.substr(at + kVersionSeparator.size());
  if (digits.empty() || digits.size() > 18 || !llvm::all_of(digits, [](char c) { return llvm::isDigit(c); }))
    return std::nullopt;
  // The `]` must be the closing one, not an escaped `\]` inside the value.
  size_t slashes = 0;
  for (size_t i = at - 1; i > 0 && printedId[i - 1] == '\\'; --i) ++slashes;
  if (slashes % 2 == 1) return std::nullopt;
  VersionSplit out{printedId.substr(0, at), 0};
  digits.getAsInteger(10, out.version);
  return out;
}

llvm::StringRef stripVersion(llvm::StringRef printedId) {
  std::optional<VersionSplit> split = splitVersion(printedId);
  return split ? split->id : printedId;
}

} // namespace inm::artifact

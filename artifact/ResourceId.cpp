// Printing and parsing of resource ids (see ResourceId.h for the escaping scheme). The parser is a
// single left-to-right scan: type up to the first `[`, agent up to the first unescaped `,`, attribute up
// to the first unescaped `=`, value up to the first unescaped `]`, then an optional `,v=<digits>` and
// the end. A backslash before a character its part does not escape is literal, and an id the escapes make
// invalid is read again literally, as the reference reads ids (`…=C:\dir]`, `…=50%_off\]`), so every id the
// reference accepts parses. Invariant: parseResourceId(id.print()) reproduces `id` exactly.
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

/// Reads an escaped part up to (not including) the first unescaped `stop`; advances `pos` past it. A
/// backslash escapes only a character this part escapes (ResourceId.h); before any other character it is
/// literal, as in the reference's ids (`C:\dir` is the value `C:\dir`, never `C:dir`).
bool readPart(llvm::StringRef text, size_t& pos, char stop, IdPart part, std::string& out) {
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '\\' && pos + 1 < text.size() && needsEscape(text[pos + 1], part)) {
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

namespace {

/// `,v=<1 to 18 digits>` or nothing: the end of an id after its `]`.
bool readVersion(llvm::StringRef rest, ResourceId& id) {
  if (rest.empty()) return true;
  if (!rest.consume_front(kVersionSeparator) || rest.empty() || rest.size() > 18 ||
      !llvm::all_of(rest, [](char c) { return llvm::isDigit(c); }))
    return false;
  id.hasVersion = true;
  rest.getAsInteger(10, id.version);
  return true;
}

/// The reference's literal reading (no escapes): agent up to the first `,`, attribute up to the first `=`,
/// value up to the first `]`, which must be followed by the version or the end.
std::optional<ResourceId> parseLiteral(llvm::StringRef text, size_t open) {
  ResourceId id;
  id.type = text.substr(0, open).str();
  llvm::StringRef rest = text.substr(open + 1);
  size_t comma = rest.find(','), equals = rest.find('=', comma == llvm::StringRef::npos ? 0 : comma + 1);
  if (comma == 0 || comma == llvm::StringRef::npos || equals == llvm::StringRef::npos || equals == comma + 1)
    return std::nullopt;
  size_t close = rest.find(']', equals + 1);
  if (close == llvm::StringRef::npos || close == equals + 1) return std::nullopt;
  id.agent = rest.substr(0, comma).str();
  id.attribute = rest.slice(comma + 1, equals).str();
  id.value = rest.slice(equals + 1, close).str();
  if (!readVersion(rest.substr(close + 1), id)) return std::nullopt;
  return id;
}

} // namespace

llvm::Expected<ResourceId> parseResourceId(llvm::StringRef text) {
  ResourceId id;
  size_t open = text.find('[');
  if (open == llvm::StringRef::npos) return fail("missing '['", text);
  id.type = text.substr(0, open).str();
  if (!validType(id.type)) return fail("the type must look like 'module::Entity'", text);
  size_t pos = open + 1;
  const char* error = nullptr;
  if (!readPart(text, pos, ',', IdPart::Agent, id.agent))
    error = "missing ',' after the agent";
  else if (id.agent.empty())
    error = "empty agent";
  else if (!readPart(text, pos, '=', IdPart::Attribute, id.attribute))
    error = "missing '=' after the id attribute";
  else if (id.attribute.empty())
    error = "empty id attribute";
  else if (!readPart(text, pos, ']', IdPart::Value, id.value))
    error = "missing ']' after the id value";
  else if (id.value.empty())
    error = "empty id value";
  else if (!readVersion(text.substr(pos), id))
    error = "expected ',v=<number>' or the end after ']'";
  if (!error) return id;
  // An id the escapes make invalid may still be one of the reference's (a value ending in a backslash,
  // `…=50%_off\]`): read it literally, as the reference does.
  if (text.contains('\\'))
    if (std::optional<ResourceId> literal = parseLiteral(text, open)) return std::move(*literal);
  return fail(error, text);
}

std::optional<VersionSplit> splitVersion(llvm::StringRef printedId) {
  size_t at = printedId.rfind(kVersionSeparator);
  if (at == llvm::StringRef::npos || at == 0 || printedId[at - 1] != ']') return std::nullopt;
  llvm::StringRef digits = printedId.substr(at + kVersionSeparator.size());
  if (digits.empty() || digits.size() > 18 || !llvm::all_of(digits, [](char c) { return llvm::isDigit(c); }))
    return std::nullopt;
  // The `]` is the closing one even when a backslash precedes it: a printed id always ends in an unescaped
  // `]`, so `…\],v=3` is either the reference's literal id (value ending in `\`) or no valid id at all.
  VersionSplit out{printedId.substr(0, at), 0};
  digits.getAsInteger(10, out.version);
  return out;
}

llvm::StringRef stripVersion(llvm::StringRef printedId) {
  std::optional<VersionSplit> split = splitVersion(printedId);
  return split ? split->id : printedId;
}

} // namespace inm::artifact

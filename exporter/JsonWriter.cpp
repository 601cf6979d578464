// JSON text rendering for the artifact writer (see JsonWriter.h). Strings are escaped per RFC 8259 with
// the short escapes for \b \f \n \r \t, \u00XX for other control characters, and non-ASCII kept as
// UTF-8. Invariant: byte-identical output for equal inputs.
#include "JsonWriter.h"

#include "runtime/BigInt.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/ConvertUTF.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace inm::exporter {

using runtime::Value;
using runtime::ValueKind;

namespace {

/// Writes the JSON escape of ASCII byte `c` (a control character, the quote or the backslash) into `buf`;
/// returns its length.
size_t escapeByte(unsigned char c, char* buf) {
  char e = 0;
  switch (c) {
  case '"': e = '"'; break;
  case '\\': e = '\\'; break;
  case '\b': e = 'b'; break;
  case '\f': e = 'f'; break;
  case '\n': e = 'n'; break;
  case '\r': e = 'r'; break;
  case '\t': e = 't'; break;
  default: break;
  }
  buf[0] = '\\';
  if (e) {
    buf[1] = e;
    return 2;
  }
  static const char* hex = "0123456789abcdef";
  buf[1] = 'u';
  buf[2] = '0';
  buf[3] = '0';
  buf[4] = hex[c >> 4];
  buf[5] = hex[c & 15];
  return 6;
}

/// Bytes copied as they are inside a JSON string: printable ASCII except the quote and the backslash.
constexpr std::array<bool, 256> kPlainTable = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[size_t(c)] = c != '"' && c != '\\';
  return t;
}();

/// Appends the JSON string contents of `s` (no quotes) through `put(const char*, size_t)`: runs of plain
/// bytes in one call, escapes for the rest, U+FFFD for an ill-formed UTF-8 byte.
template <typename Put>
void escapeInto(llvm::StringRef s, Put put) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const auto* run = p;
    while (p < end && kPlainTable[*p]) ++p;
    if (p != run) put(reinterpret_cast<const char*>(run), size_t(p - run));
    if (p == end) return;
    unsigned char c = *p;
    if (c < 0x80) {
      char buf[6];
      put(buf, escapeByte(c, buf));
      ++p;
      continue;
    }
    unsigned len = llvm::getNumBytesForUTF8(c);
    if (size_t(end - p) >= len && llvm::isLegalUTF8Sequence(p, p + len)) {
      put(reinterpret_cast<const char*>(p), len);
      p += len;
    } else {
      put("\xEF\xBF\xBD", 3); // U+FFFD for an ill-formed byte
      ++p;
    }
  }
}

} // namespace

void writeJsonString(llvm::raw_ostream& os, llvm::StringRef s) {
  os << '"';
  escapeInto(s, [&](const char* p, size_t n) { os.write(p, n); });
  os << '"';
}

void TextBuffer::grow(size_t n) {
  size_t capacity = std::max({capacity_ * 2, size_ + n, size_t(4096)});
  std::unique_ptr<char[]> data(new char[capacity]);
  if (size_) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

void appendJsonStringBody(TextBuffer& out, llvm::StringRef s) {
  escapeInto(s, [&](const char* p, size_t n) { out.append(llvm::StringRef(p, n)); });
}

void appendJsonString(TextBuffer& out, llvm::StringRef s) {
  out.append('"');
  appendJsonStringBody(out, s);
  out.append('"');
}

void appendJsonValue(TextBuffer& out, const Value& v) {
  switch (v.kind) {
  case ValueKind::Null: out.append("null"); return;
  case ValueKind::Bool: out.append(v.b ? llvm::StringRef("true") : llvm::StringRef("false")); return;
  case ValueKind::Int: {
    char* p = out.room(24);
    out.commit(size_t(std::to_chars(p, p + 24, v.i).ptr - p));
    return;
  }
  case ValueKind::String: appendJsonString(out, v.str()); return;
  case ValueKind::Unknown: appendJsonString(out, kUndefinedText); return;
  default: break;
  }
  std::string text; // big integers, floats, lists, dicts, instances: the stream writer
  llvm::raw_string_ostream os(text);
  writeJsonValue(os, v);
  os.flush();
  out.append(text);
}

void writeJsonDouble(llvm::raw_ostream& os, double d) {
  if (!std::isfinite(d)) {
    os << "null";
    return;
  }
  // Shortest round-trip digits, as Python's repr; keep a fraction or exponent so it reads back as float.
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  os << s;
}

void writeJsonValue(llvm::raw_ostream& os, const Value& v) {
  switch (v.kind) {
  case ValueKind::Null: os << "null"; return;
  case ValueKind::Bool: os << (v.b ? "true" : "false"); return;
  case ValueKind::Int: os << v.i; return;
  case ValueKind::BigInt:
    os << runtime::intToString(v);
    return; // a JSON integer of any size, as Python writes it
  case ValueKind::Float: writeJsonDouble(os, v.f); return;
  case ValueKind::String: writeJsonString(os, v.str()); return;
  case ValueKind::Unknown: writeJsonString(os, kUndefinedText); return;
  case ValueKind::Instance: os << "null"; return;
  case ValueKind::List: {
    os << '[';
    bool first = true;
    for (const Value& item : v.items()) {
      if (!first) os << ", ";
      first = false;
      writeJsonValue(os, item);
    }
    os << ']';
    return;
  }
  case ValueKind::Dict: {
    llvm::SmallVector<uint32_t, 16> order;
    for (uint32_t i = 0; i < v.d->size; ++i) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return v.d->entries[a].key->str() < v.d->entries[b].key->str();
    });
    os << '{';
    bool first = true;
    for (uint32_t i : order) {
      if (!first) os << ", ";
      first = false;
      writeJsonString(os, v.d->entries[i].key->str());
      os << ": ";
      writeJsonValue(os, v.d->entries[i].value);
    }
    os << '}';
    return;
  }
  }
}

bool containsInstance(const Value& v) {
  switch (v.kind) {
  case ValueKind::Instance: return true;
  case ValueKind::List:
    for (const Value& item : v.items())
      if (containsInstance(item)) return true;
    return false;
  case ValueKind::Dict:
    for (uint32_t i = 0; i < v.d->size; ++i)
      if (containsInstance(v.d->entries[i].value)) return true;
    return false;
  default: return false;
  }
}

} // namespace inm::exporter

// JSON text rendering for the artifact writer (see JsonWriter.h). Strings are escaped per RFC 8259 with
// the short escapes for \b \f \n \r \t, \u00XX for other control characters, and non-ASCII kept as
// UTF-8. Invariant: byte-identical output for equal inputs.
#include "JsonWriter.h"

#include "runtime/BigInt.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/ConvertUTF.h>

#include <algorithm>
#include <cmath>

namespace inm::exporter {

using runtime::Value;
using runtime::ValueKind;

namespace {

void writeEscapedByte(llvm::raw_ostream& os, unsigned char c) {
  switch (c) {
  case '"': os << "\\\""; return;
  case '\\': os << "\\\\"; return;
  case '\b': os << "\\b"; return;
  case '\f': os << "\\f"; return;
  case '\n': os << "\\n"; return;
  case '\r': os << "\\r"; return;
  case '\t': os << "\\t"; return;
  default: break;
  }
  if (c < 0x20) {
    static const char* hex = "0123456789abcdef";
    char buf[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
    os.write(buf, 6);
    return;
  }
  os << char(c);
}

} // namespace

void writeJsonString(llvm::raw_ostream& os, llvm::StringRef s) {
  os << '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      // Copy a run of plain ASCII in one write.
      const auto* run = p;
      while (p < end && *p < 0x80 && *p >= 0x20 && *p != '"' && *p != '\\') ++p;
      if (p != run) {
        os.write(reinterpret_cast<const char*>(run), size_t(p - run));
        continue;
      }
      writeEscapedByte(os, c);
      ++p;
      continue;
    }
    unsigned len = llvm::getNumBytesForUTF8(c);
    if (p + len <= end && llvm::isLegalUTF8Sequence(p, p + len)) {
      os.write(reinterpret_cast<const char*>(p), len);
      p += len;
    } else {
      os << "\xEF\xBF\xBD"; // U+FFFD for an ill-formed byte
      ++p;
    }
  }
  os << '"';
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

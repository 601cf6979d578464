// Python-compatible JSON text and the md5 attribute hash (see AttributeHash.h). nlohmann's object type is a
// std::map, so keys already iterate in byte order, which for UTF-8 equals Python's code-point order.
#include "artifact/AttributeHash.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/MD5.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace inm::artifact {

namespace {

void appendEscapedString(std::string& out, const std::string& s) {
  out += '"';
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) { // ensure_ascii escapes control characters and DEL
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence (nlohmann has validated the text when it was parsed).
    uint32_t cp = 0;
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < len && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    }
    out += buf;
  }
  out += '"';
}

void appendFloat(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "Infinity" : "-Infinity";
    return;
  }
  // nlohmann prints the shortest round-trip digits with Python's thresholds (exponent form below 1e-4 and
  // from 1e16) and a ".0" on integral values, which is exactly float.__repr__.
  std::string s = nlohmann::json(d).dump();
  size_t e = s.find('e');
  if (e == std::string::npos) {
    out += s;
    return;
  }
  // nlohmann switches to exponent form from 1e15, Python only from 1e16: rewrite as fixed notation in
  // between.
  int exp = std::atoi(s.c_str() + e + 1);
  if (exp < -4 || exp >= 16) {
    out += s;
    return;
  }
  std::string mant = s.substr(0, e), digits;
  bool neg = !mant.empty() && mant[0] == '-';
  for (char c : mant)
    if (c >= '0' && c <= '9') digits += c;
  std::string fixed = neg ? "-" : "";
  if (exp >= 0) {
    std::string intPart = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
    intPart.append(exp + 1 - intPart.size(), '0');
    std::string frac = digits.size() > size_t(exp) + 1 ? digits.substr(exp + 1) : "0";
    fixed += intPart + "." + frac;
  } else {
    fixed += "0." + std::string(-exp - 1, '0') + digits;
  }
  out += fixed;
}

void append(std::string& out, const nlohmann::json& v, int indent, int depth) {
  switch (v.type()) {
  case nlohmann::json::value_t::null: out += "null"; break;
  case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned: out += v.dump(); break;
  case nlohmann::json::value_t::number_float: appendFloat(out, v.get<double>()); break;
  case nlohmann::json::value_t::string: appendEscapedString(out, v.get_ref<const std::string&>()); break;
  case nlohmann::json::value_t::array: {
    if (v.empty()) {
      out += "[]";
      break;
    }
    out += '[';
    bool first = true;
    for (const auto& e : v) {
      if (!first) out += indent ? "," : ", ";
      first = false;
      if (indent) out += "\n" + std::string(size_t(indent) * (depth + 1), ' ');
      append(out, e, indent, depth + 1);
    }
    if (indent) out += "\n" + std::string(size_t(indent) * depth, ' ');
    out += ']';
    break;
  }
  case nlohmann::json::value_t::object: {
    if (v.empty()) {
      out += "{}";
      break;
    }
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += indent ? "," : ", ";
      first = false;
      if (indent) out += "\n" + std::string(size_t(indent) * (depth + 1), ' ');
      appendEscapedString(out, it.key());
      out += ": ";
      append(out, it.value(), indent, depth + 1);
    }
    if (indent) out += "\n" + std::string(size_t(indent) * depth, ' ');
    out += '}';
    break;
  }
  default: out += "null"; break; // binary/discarded never come out of a parsed document
  }
}

} // namespace

std::string pythonJsonDumps(const nlohmann::json& value, int indent) {
  std::string out;
  append(out, value, indent, 0);
  return out;
}

std::string attributeHash(const std::string& unversionedId, const nlohmann::json& attributes) {
  std::string text;
  auto excluded = [&](const char* k) { return attributes.contains(k); };
  if (attributes.is_object() &&
      !(excluded("id") || excluded("requires") || excluded("provides") || excluded("version"))) {
    text = pythonJsonDumps(attributes); // nothing to leave out: no copy (put_version hashes 100k of these)
  } else if (attributes.is_object()) {
    nlohmann::json copy = nlohmann::json::object();
    for (auto it = attributes.begin(); it != attributes.end(); ++it) {
      const std::string& k = it.key();
      if (k == "id" || k == "requires" || k == "provides" || k == "version") continue;
      copy[k] = it.value();
    }
    text = pythonJsonDumps(copy);
  } else {
    text = pythonJsonDumps(attributes);
  }
  return attributeHashOfDump(unversionedId, text);
}

std::string attributeHashOfDump(const std::string& unversionedId, const std::string& dumped) {
  llvm::MD5 md5;
  md5.update(unversionedId);
  md5.update(dumped);
  llvm::MD5::MD5Result r;
  md5.final(r);
  return std::string(r.digest().str());
}

} // namespace inm::artifact

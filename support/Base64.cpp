// RFC 4648 base64 (include/support/Base64.h): a table-driven encoder and a strict single-pass decoder that
// tracks the position inside the current 4-character quantum to reject impossible lengths and stray padding.
#include "support/Base64.h"

#include <cstdint>

namespace inm::support {

namespace {
constexpr const char* kStandard = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr const char* kUrlSafe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The 6-bit value of `c` in `alphabet`, -1 when it is not one of its characters.
int sextet(char c, Base64Alphabet alphabet) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  bool standard = alphabet != Base64Alphabet::UrlSafe, urlSafe = alphabet != Base64Alphabet::Standard;
  if ((c == '+' && standard) || (c == '-' && urlSafe)) return 62;
  if ((c == '/' && standard) || (c == '_' && urlSafe)) return 63;
  return -1;
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::optional<std::string> failed(std::string* error, std::string why) {
  if (error) *error = std::move(why);
  return std::nullopt;
}

std::string describe(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* hex = "0123456789abcdef";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}
} // namespace

std::string base64Encode(std::string_view bytes, Base64Alphabet alphabet, bool pad) {
  const char* tbl = alphabet == Base64Alphabet::UrlSafe ? kUrlSafe : kStandard;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v =
        (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    out += tbl[v >> 18];
    out += tbl[(v >> 12) & 63];
    out += tbl[(v >> 6) & 63];
    out += tbl[v & 63];
  }
  size_t rest = bytes.size() - i; // 0, 1 or 2 bytes left: 0, 2 or 3 characters (+ 0, 2 or 1 padding)
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += tbl[v >> 18];
    out += tbl[(v >> 12) & 63];
    if (rest == 2) out += tbl[(v >> 6) & 63];
    if (pad) out.append(3 - rest, '=');
  }
  return out;
}

std::optional<std::string> base64Decode(std::string_view text, Base64Decoding how, std::string* error) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t inQuantum = 0; // characters of the current 4-character group, data and padding
  size_t padding = 0;
  for (size_t at = 0; at < text.size(); ++at) {
    char c = text[at];
    if (how.skipWhitespace && isSpace(c)) continue;
    if (c == '=') {
      // Padding completes a group of 2 or 3 data characters, with 2 or 1 '=' respectively.
      if (padding == 0 && (inQuantum < 2 || inQuantum == 4))
        return failed(error, "'=' at offset " + std::to_string(at) + " comes where data is expected");
      if (inQuantum == 4) return failed(error, "too much padding at offset " + std::to_string(at));
      ++padding;
      ++inQuantum;
      continue;
    }
    if (padding > 0)
      return failed(error, describe(c) + " at offset " + std::to_string(at) + " follows the padding");
    int v = sextet(c, how.alphabet);
    if (v < 0)
      return failed(error, describe(c) + " at offset " + std::to_string(at) + " is not a base64 character");
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
    inQuantum = inQuantum == 4 ? 1 : inQuantum + 1;
  }
  if (padding > 0 && inQuantum != 4) return failed(error, "incomplete padding at the end");
  if (padding == 0 && inQuantum == 1)
    return failed(error, "a single character in the last group (truncated input)");
  if (padding == 0 && inQuantum == 4) inQuantum = 0;
  if (how.requirePadding && padding == 0 && inQuantum != 0)
    return failed(error, "missing padding at the end");
  return out;
}

} // namespace inm::support

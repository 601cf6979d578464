// HS256 token primitives (see include/jwt/Jwt.h): base64url both ways and the HMAC from OpenSSL.
#include "jwt/Jwt.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>

namespace inm::jwt {

std::string base64url(const std::string& bytes) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += tbl[(v >> s) & 63];
  }
  size_t rest = bytes.size() - i; // 0, 1 or 2 bytes: 0, 2 or 3 characters
  if (rest > 0) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (rest == 2) v |= uint8_t(bytes[i + 1]) << 8;
    out += tbl[v >> 18];
    out += tbl[(v >> 12) & 63];
    if (rest == 2) out += tbl[(v >> 6) & 63];
  }
  return out;
}

llvm::Expected<std::string> unbase64url(const std::string& text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '-' || c == '+')
      v = 62;
    else if (c == '_' || c == '/')
      v = 63;
    else if (c == '=')
      break;
    else
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "'%c' is not a base64 character", c);
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string hmacSha256(const std::string& key, const std::string& data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), mac, &len);
  return std::string(reinterpret_cast<char*>(mac), len);
}

std::string signHs256(const std::string& key, const std::string& claimsJson) {
  std::string input = base64url(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url(claimsJson);
  return input + "." + base64url(hmacSha256(key, input));
}

} // namespace inm::jwt

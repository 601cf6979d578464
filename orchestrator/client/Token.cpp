// HS256 token minting for `inmanta-cli token bootstrap` (see include/client/Token.h): HMAC-SHA256 from
// OpenSSL over base64url(header) "." base64url(claims).
// TODO(#10): use orchestrator/auth (the server's signer and verifier) once it is on main.
#include "client/Token.h"
#include "config/Config.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace inm::client {

std::string base64url(const std::string& data) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    uint32_t v = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8) | uint8_t(data[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += tbl[(v >> s) & 63];
  }
  if (i + 1 == data.size()) {
    uint32_t v = uint8_t(data[i]) << 16;
    out += tbl[v >> 18];
    out += tbl[(v >> 12) & 63];
  } else if (i + 2 == data.size()) {
    uint32_t v = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8);
    out += tbl[v >> 18];
    out += tbl[(v >> 12) & 63];
    out += tbl[(v >> 6) & 63];
  }
  return out;
}

llvm::Expected<std::string> unbase64url(const std::string& text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '-' || c == '+') v = 62;
    else if (c == '_' || c == '/') v = 63;
    else if (c == '=') break;
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

llvm::Expected<SigningKey> signingKeyFromConfig(const config::Config& cfg) {
  for (const std::string& name : cfg.sectionNames()) {
    if (name.rfind("auth_jwt_", 0) != 0) continue;
    auto sign = cfg.getBool(name, "sign", false);
    if (!sign) return sign.takeError();
    if (!*sign) continue;
    std::string alg = cfg.getString(name, "algorithm", "");
    if (alg != "HS256")
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "[%s] has sign=true but algorithm '%s': only HS256 tokens can be minted",
                                     name.c_str(), alg.c_str());
    SigningKey k;
    k.section = name;
    auto key = unbase64url(cfg.getString(name, "key", ""));
    if (!key)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "[%s] key: %s", name.c_str(),
                                     llvm::toString(key.takeError()).c_str());
    if (key->empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "[%s] has no key", name.c_str());
    k.key = std::move(*key);
    k.issuer = cfg.getString(name, "issuer", k.issuer);
    k.audience = cfg.getString(name, "audience", k.issuer);
    auto expire = cfg.getInt(name, "expire", 0);
    if (!expire) return expire.takeError();
    k.expire = *expire;
    return k;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no [auth_jwt_*] section with sign=true in the configuration (read with -c "
                                 "FILE or from the standard locations)");
}

std::string signToken(const SigningKey& key, const std::vector<std::string>& clientTypes,
                      const std::string& environment, int64_t expireSeconds, int64_t now) {
  std::string types;
  for (const std::string& t : clientTypes) types += (types.empty() ? "" : ",") + t;
  nlohmann::json claims = {{"iss", key.issuer}, {"aud", {key.audience}}, {"iat", now}, {"urn:inmanta:ct", types}};
  if (expireSeconds > 0) claims["exp"] = now + expireSeconds;
  if (!environment.empty()) claims["urn:inmanta:env"] = environment;
  std::string input = base64url(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url(claims.dump());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.key.data(), int(key.key.size()), reinterpret_cast<const unsigned char*>(input.data()),
       input.size(), mac, &len);
  return input + "." + base64url(std::string(reinterpret_cast<char*>(mac), len));
}

}  // namespace inm::client

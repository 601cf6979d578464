// HS256 token primitives (see include/jwt/Jwt.h): base64url both ways and the HMAC from OpenSSL.
#include "jwt/Jwt.h"

#include "support/Base64.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>

namespace inm::jwt {

std::string base64url(const std::string& bytes) {
  return support::base64Encode(bytes, support::Base64Alphabet::UrlSafe, /*pad=*/false);
}

llvm::Expected<std::string> unbase64url(const std::string& text) {
  std::string error;
  auto bytes = support::base64Decode(text, {support::Base64Alphabet::Either}, &error);
  if (!bytes) return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", error.c_str());
  return std::move(*bytes);
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

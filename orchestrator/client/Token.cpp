// HS256 token minting for `inmanta-cli token bootstrap` (see include/client/Token.h): the claims of a
// server-minted token, signed with the primitives the server verifies with (orchestrator/jwt).
#include "client/Token.h"

#include "config/Config.h"
#include "jwt/Jwt.h"

#include <nlohmann/json.hpp>

namespace inm::client {

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
    auto key = jwt::unbase64url(cfg.getString(name, "key", ""));
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
  nlohmann::json claims = {
      {"iss", key.issuer}, {"aud", {key.audience}}, {"iat", now}, {"urn:inmanta:ct", types}};
  if (expireSeconds > 0) claims["exp"] = now + expireSeconds;
  if (!environment.empty()) claims["urn:inmanta:env"] = environment;
  return jwt::signHs256(key.key, claims.dump());
}

} // namespace inm::client

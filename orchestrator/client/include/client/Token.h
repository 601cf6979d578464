// Minting HS256 JWTs the way the reference server does for itself (orchestrator.md §12): used by
// `inmanta-cli token bootstrap`, which signs locally with the `[auth_jwt_<id>]` section that has sign=true.
// Invariant: the claims are exactly iss, aud (a list), iat, exp (unless expire is 0), urn:inmanta:ct (comma
// list) and, when scoped, urn:inmanta:env.
#pragma once

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace inm::config {
class Config;
}

namespace inm::client {

/// The signing section of a configuration.
struct SigningKey {
  std::string section; // e.g. "auth_jwt_default"
  std::string key;     // raw secret bytes (decoded from the url-safe base64 `key`)
  std::string issuer = "https://localhost:8888/";
  std::string audience; // defaults to the issuer
  int64_t expire = 0;   // the section's default lifetime, seconds (0 = never)
};

/// Finds the one `[auth_jwt_*]` section with sign=true and algorithm HS256; an error names what is missing.
llvm::Expected<SigningKey> signingKeyFromConfig(const config::Config& cfg);

/// A signed token for `clientTypes`, optionally scoped to `environment`, valid `expireSeconds` (0 = no exp).
std::string signToken(const SigningKey& key, const std::vector<std::string>& clientTypes,
                      const std::string& environment, int64_t expireSeconds, int64_t now);

} // namespace inm::client

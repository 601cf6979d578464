// Private to api/: HS256 JWT bearer tokens (orchestrator.md §12). verifyBearer checks the signature against
// the configured `[auth_jwt_*]` keys, the expiry and reads the client types (urn:inmanta:ct, default api) and
// the environment scope (urn:inmanta:env) and a revocable token's `jti` (checked by the dispatcher).
// mintToken signs with the `sign = true` key.
#pragma once

#include "Request.h"
#include "api/HttpServer.h"

namespace inm::api {

/// The caller of a request with an Authorization header value, or an ApiError (401) thrown.
Caller verifyBearer(const std::string& authorization, const std::vector<JwtKey>& keys);
/// A signed token; Failure when no key signs.
llvm::Expected<std::string> mintToken(const std::vector<JwtKey>& keys,
                                      const std::vector<std::string>& clientTypes,
                                      const std::optional<std::string>& environment, int64_t expireSeconds,
                                      const std::optional<std::string>& jti = std::nullopt);

} // namespace inm::api

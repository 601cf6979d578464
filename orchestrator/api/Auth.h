// Private to api/: HS256 JWT bearer tokens (orchestrator.md §12, docs/server.md "JWT rules"). verifyBearer
// selects the `[auth_jwt_*]` section by the token's `iss`, checks the signature with its key, that `aud`
// holds its audience, `exp` and `nbf` (numbers), and reads the client types (urn:inmanta:ct, default api,
// each one of api/agent/compiler), the environment scope (urn:inmanta:env: one environment id) and a
// revocable token's `jti` (checked by the dispatcher). Any claim of the wrong shape is refused (401), never
// ignored. mintToken signs with the `sign = true` key.
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

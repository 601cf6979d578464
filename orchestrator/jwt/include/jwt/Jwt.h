// HS256 JSON Web Tokens as the orchestrator uses them (orchestrator.md §12): URL-safe base64 without padding,
// HMAC-SHA256 signatures. Shared by the server (verification, minting) and the clients (`inmanta-cli token
// bootstrap`), and used to decode `[auth_jwt_*] key`, which the reference stores URL-safe base64-encoded.
// Pure functions over bytes; no claims policy lives here.
#pragma once

#include <llvm/Support/Error.h>

#include <string>

namespace inm::jwt {

/// URL-safe base64 of `bytes`, without '=' padding.
std::string base64url(const std::string& bytes);
/// Decodes URL-safe (or standard) base64, padding optional; an error names the first bad character.
llvm::Expected<std::string> unbase64url(const std::string& text);
/// HMAC-SHA256 of `data` under `key` (raw bytes).
std::string hmacSha256(const std::string& key, const std::string& data);
/// A complete HS256 token: base64url({"alg":"HS256","typ":"JWT"}) "." base64url(claimsJson) "." signature.
std::string signHs256(const std::string& key, const std::string& claimsJson);

} // namespace inm::jwt

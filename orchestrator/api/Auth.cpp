// HS256 JWT verification and minting (see Auth.h; primitives in orchestrator/jwt), and the token route.
#include "Auth.h"

#include "jwt/Jwt.h"
#include "model/Ids.h"

#include <openssl/crypto.h>

#include <chrono>

namespace inm::api {

using model::ErrorCode;

namespace {

/// Decodes one part of a token; false when it is not base64url.
bool unb64url(const std::string& in, std::string& out) {
  auto bytes = jwt::unbase64url(in);
  if (!bytes) {
    llvm::consumeError(bytes.takeError());
    return false;
  }
  out = std::move(*bytes);
  return true;
}

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

Caller verifyBearer(const std::string& authorization, const std::vector<JwtKey>& keys) {
  auto refuse = [](const std::string& why) { throw ApiError{ErrorCode::Unauthorized, why}; };
  if (authorization.empty()) refuse("no bearer token given (Authorization header)");
  if (authorization.size() < 7 || strncasecmp(authorization.c_str(), "Bearer ", 7) != 0)
    refuse("the Authorization header is not a bearer token");
  std::string token = authorization.substr(7);
  size_t d1 = token.find('.'), d2 = token.rfind('.');
  if (d1 == std::string::npos || d1 == d2) refuse("the bearer token is not a JWT");
  std::string headerText, payloadText, sig;
  if (!unb64url(token.substr(0, d1), headerText) ||
      !unb64url(token.substr(d1 + 1, d2 - d1 - 1), payloadText) || !unb64url(token.substr(d2 + 1), sig))
    refuse("the bearer token is not valid base64url");
  nlohmann::json header = nlohmann::json::parse(headerText, nullptr, false);
  nlohmann::json payload = nlohmann::json::parse(payloadText, nullptr, false);
  if (!header.is_object() || !payload.is_object()) refuse("the bearer token is not a JWT");
  if (!header.contains("alg") || !header["alg"].is_string() || header["alg"] != "HS256")
    refuse("unsupported token algorithm (only HS256)");

  // The issuer selects the [auth_jwt_*] section, whose key must have signed the token.
  auto iss = payload.find("iss");
  if (iss == payload.end()) refuse("the bearer token has no iss claim (its issuer selects the key)");
  if (!iss->is_string()) refuse("the token's iss claim is not a string");
  std::string issuer = iss->get<std::string>();
  std::string signingInput = token.substr(0, d2);
  const JwtKey* matched = nullptr;
  bool knownIssuer = false;
  for (const auto& k : keys) {
    if (k.algorithm != "HS256" || k.issuer != issuer) continue;
    knownIssuer = true;
    std::string expect = jwt::hmacSha256(k.key, signingInput);
    if (expect.size() == sig.size() && CRYPTO_memcmp(expect.data(), sig.data(), sig.size()) == 0) {
      matched = &k;
      break;
    }
  }
  if (!knownIssuer) refuse("the token's issuer '" + issuer + "' matches no [auth_jwt_*] section");
  if (!matched) refuse("the bearer token's signature is invalid");

  // The audience: a string or a list of strings that must hold the section's audience.
  auto aud = payload.find("aud");
  if (aud == payload.end()) refuse("the bearer token has no aud claim (expected " + matched->audience + ")");
  bool audienceOk = false;
  if (aud->is_string())
    audienceOk = *aud == matched->audience;
  else if (aud->is_array())
    for (const auto& a : *aud) {
      if (!a.is_string()) refuse("the token's aud claim holds a non-string: " + a.dump());
      if (a == matched->audience) audienceOk = true;
    }
  else
    refuse("the token's aud claim is not a string or a list of strings");
  if (!audienceOk) refuse("the token's audience " + aud->dump() + " does not include " + matched->audience);

  // Times: numbers of seconds (a boolean or a string is refused, not read as 0).
  int64_t now = nowSeconds();
  for (const char* claim : {"exp", "nbf", "iat"})
    if (payload.contains(claim) && !payload[claim].is_number())
      refuse(std::string("the token's ") + claim + " claim is not a number");
  if (payload.contains("exp") && payload["exp"].get<double>() <= double(now))
    refuse("the bearer token has expired");
  if (payload.contains("nbf") && payload["nbf"].get<double>() > double(now))
    refuse("the bearer token is not valid yet (nbf is in the future)");

  Caller c;
  c.authenticated = true;
  // Client types: a comma-separated string (the reference's form) or a list of strings, each one known.
  auto ct = payload.find("urn:inmanta:ct");
  std::vector<std::string> types;
  if (ct == payload.end()) {
    types = {"api"};
  } else if (ct->is_string()) {
    std::string s = ct->get<std::string>();
    size_t i = 0;
    while (i <= s.size()) {
      size_t j = s.find(',', i);
      if (j == std::string::npos) j = s.size();
      std::string part = s.substr(i, j - i);
      while (!part.empty() && part.front() == ' ') part.erase(0, 1);
      while (!part.empty() && part.back() == ' ') part.pop_back();
      if (!part.empty()) types.push_back(part);
      i = j + 1;
    }
  } else if (ct->is_array()) {
    for (const auto& x : *ct) {
      if (!x.is_string()) refuse("the token's urn:inmanta:ct claim holds a non-string: " + x.dump());
      types.push_back(x.get<std::string>());
    }
  } else {
    refuse("the token's urn:inmanta:ct claim is not a string");
  }
  if (types.empty()) refuse("the token's urn:inmanta:ct claim names no client type");
  for (const auto& t : types)
    if (t != "api" && t != "agent" && t != "compiler")
      refuse("the token's urn:inmanta:ct claim holds unknown client type '" + t +
             "' (expected api, agent or compiler)");
  c.clientTypes = std::move(types);
  // The environment scope: one environment id; any other shape is refused, never read as "unscoped".
  if (auto env = payload.find("urn:inmanta:env"); env != payload.end()) {
    if (!env->is_string())
      refuse("the token's urn:inmanta:env claim must be one environment id (a string), not " + env->dump());
    std::string e = env->get<std::string>();
    if (!model::isUuid(e)) refuse("the token's urn:inmanta:env claim is not an environment id: '" + e + "'");
    for (char& ch : e) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    c.environment = e;
  }
  if (auto jti = payload.find("jti"); jti != payload.end()) {
    if (!jti->is_string() || jti->get<std::string>().empty()) refuse("the token's jti claim is not a string");
    c.jti = jti->get<std::string>();
  }
  return c;
}

llvm::Expected<std::string> mintToken(const std::vector<JwtKey>& keys,
                                      const std::vector<std::string>& clientTypes,
                                      const std::optional<std::string>& environment, int64_t expireSeconds,
                                      const std::optional<std::string>& jti) {
  const JwtKey* signer = nullptr;
  for (const auto& k : keys)
    if (k.sign && k.algorithm == "HS256") signer = &k;
  if (!signer)
    return model::fail(ErrorCode::BadRequest,
                       "no [auth_jwt_*] section with sign=true and algorithm=HS256 is configured");
  std::string ct;
  for (const auto& t : clientTypes) ct += (ct.empty() ? "" : ",") + t;
  nlohmann::json payload = {{"iss", signer->issuer}, {"iat", nowSeconds()}, {"urn:inmanta:ct", ct}};
  payload["aud"] = nlohmann::json::array({signer->audience.empty() ? signer->issuer : signer->audience});
  int64_t expire = expireSeconds > 0 ? expireSeconds : signer->expire;
  if (expire > 0) payload["exp"] = nowSeconds() + expire;
  if (environment) payload["urn:inmanta:env"] = *environment;
  if (jti) payload["jti"] = *jti;
  return jwt::signHs256(signer->key, payload.dump());
}

void addAuthRoutes(std::vector<Route>& routes, const HttpOptions& options, service::Service& svc) {
  const HttpOptions* opts = &options;
  // Tokens are idempotent by default (no jti: valid until they expire); `idempotent: false` records a jti in
  // the token table, which DELETE /api/v2/environment_auth/<jti> revokes.
  routes.push_back(
      Route{http::verb::post,
            splitPattern("/api/v2/environment_auth"),
            [opts, &svc](Request& req) -> asio::awaitable<Reply> {
              std::string env = environmentOf(req);
              auto types = findParam(req, "client_types");
              std::vector<std::string> clientTypes;
              if (!types || !types->is_array() || types->empty())
                throw ApiError{ErrorCode::BadRequest,
                               "'client_types' must be a non-empty list of api, agent, compiler"};
              for (const auto& t : *types) {
                if (!t.is_string() || (t != "api" && t != "agent" && t != "compiler"))
                  throw ApiError{ErrorCode::BadRequest,
                                 "'client_types' holds " + t.dump() + ": expected api, agent or compiler"};
                clientTypes.push_back(t.get<std::string>());
              }
              int64_t expire = intParam(req, "expire", 0);
              bool idempotent = boolParam(req, "idempotent", true);
              std::optional<std::string> jti;
              if (!idempotent) {
                int64_t recorded = expire;
                for (const auto& k : opts->jwtKeys)
                  if (k.sign && k.algorithm == "HS256" && recorded <= 0) recorded = k.expire;
                jti = unwrap(co_await svc.issueToken(env, clientTypes, recorded)).get<std::string>();
              }
              llvm::Expected<std::string> token = mintToken(opts->jwtKeys, clientTypes, env, expire, jti);
              if (!token) {
                auto [code, msg] = model::describe(token.takeError());
                throw ApiError{code, msg};
              }
              co_return okData(*token);
            },
            {"api"},
            Policy{}});
  routes.push_back(Route{http::verb::get,
                         splitPattern("/api/v2/environment_auth"),
                         [&svc](Request& req) -> asio::awaitable<Reply> {
                           std::string env = environmentOf(req);
                           co_return okData(unwrap(co_await svc.listTokens(env)));
                         },
                         {"api"},
                         Policy{}});
  routes.push_back(Route{http::verb::delete_,
                         splitPattern("/api/v2/environment_auth/<jti>"),
                         [&svc](Request& req) -> asio::awaitable<Reply> {
                           std::string env = environmentOf(req);
                           unwrap(co_await svc.revokeToken(env, stringParam(req, "jti")));
                           co_return Reply{};
                         },
                         {"api"},
                         Policy{}});
}

} // namespace inm::api

// The authorisation table and JWT rules of orchestrator/api (Authz.h, Auth.h) without a server: a route
// missing from the table cannot register, an environment-scoped token is confined by the one check, and each
// claim rule refuses its malformed token with 401. The full route × token matrix runs against a real server
// in test/integration/test_server_authz.py.
#include "Authz.h"

#include "Auth.h"
#include "jwt/Jwt.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace inm::api;
using inm::model::ErrorCode;

namespace {

const std::string kEnvA = "6c0b7a5e-0f53-4a39-9a4e-4f7d86b2c001";
const std::string kEnvB = "6c0b7a5e-0f53-4a39-9a4e-4f7d86b2c002";

Route makeRoute(http::verb method, const char* pattern, std::vector<std::string> clients = {"api"}) {
  return Route{method, splitPattern(pattern), nullptr, std::move(clients), Policy{}};
}

std::vector<JwtKey> keys() {
  JwtKey k;
  k.key = "0123456789abcdef0123456789abcdef";
  k.issuer = "https://localhost:8888/";
  k.audience = k.issuer;
  k.sign = true;
  return {k};
}

int64_t now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string token(nlohmann::json claims) {
  nlohmann::json base = {{"iss", "https://localhost:8888/"}, {"aud", {"https://localhost:8888/"}}};
  for (auto& [k, v] : claims.items()) {
    if (v.is_null())
      base.erase(k);
    else
      base[k] = v;
  }
  return "Bearer " + inm::jwt::signHs256(keys()[0].key, base.dump());
}

/// The 401 message for `claims`, or "" when the token is accepted.
std::string refusal(nlohmann::json claims) {
  try {
    verifyBearer(token(std::move(claims)), keys());
    return "";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code, ErrorCode::Unauthorized);
    return e.message;
  }
}

int authorizeStatus(const Route& route, const Caller& caller, const std::string& tid,
                    std::map<std::string, std::string> params = {}) {
  http::fields headers;
  if (!tid.empty()) headers.set("X-Inmanta-tid", tid);
  Request req;
  req.headers = &headers;
  req.caller = caller;
  req.params = std::move(params);
  try {
    authorize(route, req);
    return 200;
  } catch (const ApiError& e) {
    return e.code == ErrorCode::Forbidden ? 403 : 500;
  }
}

} // namespace

TEST(Authz, RouteWithoutPolicyFailsToRegister) {
  std::vector<Route> routes = {makeRoute(http::verb::get, "/api/v2/project"),
                               makeRoute(http::verb::get, "/api/v2/not_in_the_table")};
  try {
    attachPolicies(routes);
    FAIL() << "a route missing from the table registered";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("GET /api/v2/not_in_the_table"), std::string::npos) << e.what();
  }
  std::vector<Route> good = {makeRoute(http::verb::get, "/api/v2/project")};
  attachPolicies(good);
  EXPECT_EQ(good[0].policy.scope, Scope::Project);
}

TEST(Authz, ScopedTokenStaysInItsEnvironment) {
  std::vector<Route> routes = {makeRoute(http::verb::get, "/api/v2/project"),
                               makeRoute(http::verb::get, "/api/v2/environment"),
                               makeRoute(http::verb::delete_, "/api/v2/environment/<id>"),
                               makeRoute(http::verb::get, "/api/v2/resource"),
                               makeRoute(http::verb::get, "/api/v1/file/<id>", {"api", "compiler", "agent"})};
  attachPolicies(routes);
  Caller scoped{true, {"api"}, kEnvA, std::nullopt};
  Caller admin{true, {"api"}, std::nullopt, std::nullopt};
  EXPECT_EQ(authorizeStatus(routes[0], scoped, kEnvA), 403);
  EXPECT_EQ(authorizeStatus(routes[1], scoped, kEnvA), 403);
  EXPECT_EQ(authorizeStatus(routes[2], scoped, "", {{"id", kEnvB}}), 403);
  EXPECT_EQ(authorizeStatus(routes[2], scoped, kEnvB, {{"id", kEnvA}}),
            200); // the path names it, not the header
  EXPECT_EQ(authorizeStatus(routes[3], scoped, kEnvB), 403);
  EXPECT_EQ(authorizeStatus(routes[3], scoped, ""), 403); // names no environment
  EXPECT_EQ(authorizeStatus(routes[3], scoped, kEnvA), 200);
  EXPECT_EQ(authorizeStatus(routes[4], scoped, kEnvB), 200); // files are shared
  for (const Route& r : routes) EXPECT_EQ(authorizeStatus(r, admin, kEnvB, {{"id", kEnvB}}), 200);
  Caller agent{true, {"agent"}, std::nullopt, std::nullopt};
  EXPECT_EQ(authorizeStatus(routes[3], agent, kEnvB), 403);
  EXPECT_EQ(authorizeStatus(routes[4], agent, kEnvB), 200);
}

TEST(Authz, JwtRules) {
  int64_t t = now();
  EXPECT_EQ(refusal({{"urn:inmanta:ct", "api,agent"}, {"exp", t + 60}, {"nbf", t - 1}}), "");
  EXPECT_EQ(refusal({{"aud", "https://localhost:8888/"}}), ""); // a single-string audience
  EXPECT_NE(refusal({{"iss", nullptr}}).find("iss"), std::string::npos);
  EXPECT_NE(refusal({{"iss", "https://other/"}}).find("issuer"), std::string::npos);
  EXPECT_NE(refusal({{"iss", 3}}).find("iss"), std::string::npos);
  EXPECT_NE(refusal({{"aud", nullptr}}).find("aud"), std::string::npos);
  EXPECT_NE(refusal({{"aud", {"https://other/"}}}).find("audience"), std::string::npos);
  EXPECT_NE(refusal({{"aud", {1}}}).find("aud"), std::string::npos);
  EXPECT_NE(refusal({{"exp", t - 1}}).find("expired"), std::string::npos);
  EXPECT_NE(refusal({{"exp", "9999999999"}}).find("exp"), std::string::npos);
  EXPECT_NE(refusal({{"exp", true}}).find("exp"), std::string::npos);
  EXPECT_NE(refusal({{"nbf", t + 600}}).find("nbf"), std::string::npos);
  EXPECT_NE(refusal({{"nbf", "0"}}).find("nbf"), std::string::npos);
  EXPECT_NE(refusal({{"iat", "0"}}).find("iat"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:env", {kEnvA}}}).find("urn:inmanta:env"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:env", 1}}).find("urn:inmanta:env"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:env", "all"}}).find("urn:inmanta:env"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:ct", "api,root"}}).find("root"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:ct", 1}}).find("urn:inmanta:ct"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:ct", {1}}}).find("urn:inmanta:ct"), std::string::npos);
  EXPECT_NE(refusal({{"urn:inmanta:ct", ""}}).find("urn:inmanta:ct"), std::string::npos);
  Caller c = verifyBearer(token({{"urn:inmanta:env", "6C0B7A5E-0F53-4A39-9A4E-4F7D86B2C001"}}), keys());
  EXPECT_EQ(c.environment, kEnvA);                           // compared lower-case
  EXPECT_EQ(c.clientTypes, std::vector<std::string>{"api"}); // the default
}

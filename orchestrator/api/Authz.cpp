// The authorisation table and its one check (see Authz.h). Each row names a route as registered
// ("METHOD /pattern") and its scope; the client types stay next to each route's registration. The scopes
// follow the reference's rule (a token's urn:inmanta:env must equal the environment a call names, and
// calls naming none are refused to it) with one difference: files and the server status are shared by
// every environment, as the reference's `ignore_env` endpoints are.
#include "Authz.h"

#include <boost/beast/http/verb.hpp>

#include <map>
#include <stdexcept>

namespace inm::api {

using model::ErrorCode;

namespace {

struct Row {
  const char* key;
  Scope scope;
  const char* envParam = "";
};

constexpr Scope kOpen = Scope::Open, kServer = Scope::Server, kProject = Scope::Project,
                kEnv = Scope::Environment, kShared = Scope::AnyEnvironment, kObject = Scope::Object;

// clang-format off
const Row kTable[] = {
    // Server status and health.
    {"GET /api/v2/health", kOpen},
    {"GET /api/v1/serverstatus", kShared},
    // Projects: above any one environment.
    {"PUT /api/v1/project", kProject}, {"PUT /api/v2/project", kProject},
    {"GET /api/v1/project", kProject}, {"GET /api/v2/project", kProject},
    {"GET /api/v1/project/<id>", kProject}, {"GET /api/v2/project/<id>", kProject},
    {"POST /api/v1/project/<id>", kProject}, {"POST /api/v2/project/<id>", kProject},
    {"DELETE /api/v1/project/<id>", kProject}, {"DELETE /api/v2/project/<id>", kProject},
    // Environments: creating one is project-level, listing them server-level; one by id is that one.
    {"PUT /api/v1/environment", kProject}, {"PUT /api/v2/environment", kProject},
    {"GET /api/v1/environment", kServer}, {"GET /api/v2/environment", kServer},
    {"GET /api/v1/environment/<id>", kEnv, "id"}, {"GET /api/v2/environment/<id>", kEnv, "id"},
    {"POST /api/v1/environment/<id>", kEnv, "id"}, {"POST /api/v2/environment/<id>", kEnv, "id"},
    {"DELETE /api/v1/environment/<id>", kEnv, "id"}, {"DELETE /api/v2/environment/<id>", kEnv, "id"},
    {"DELETE /api/v2/decommission/<id>", kEnv, "id"},
    {"POST /api/v2/actions/environment/halt", kEnv}, {"POST /api/v2/actions/environment/resume", kEnv},
    // Settings.
    {"GET /api/v1/environment_settings", kEnv}, {"GET /api/v2/environment_settings", kEnv},
    {"GET /api/v1/environment_settings/<id>", kEnv}, {"GET /api/v2/environment_settings/<id>", kEnv},
    {"POST /api/v1/environment_settings/<id>", kEnv}, {"POST /api/v2/environment_settings/<id>", kEnv},
    {"DELETE /api/v1/environment_settings/<id>", kEnv}, {"DELETE /api/v2/environment_settings/<id>", kEnv},
    {"POST /api/v2/protected_environment_settings", kEnv},
    // Versions and desired state.
    {"POST /api/v2/reserve_version", kEnv}, {"PUT /api/v1/version", kEnv}, {"PUT /api/v2/version/partial", kEnv}, {"PUT /api/v2/version/delta", kEnv},
    {"GET /api/v2/version/delta_base", kEnv},
    {"POST /api/v1/version/<id>", kEnv}, {"POST /api/v2/desiredstate/<version>/promote", kEnv},
    {"GET /api/v1/version", kEnv}, {"GET /api/v1/version/<id>", kEnv}, {"DELETE /api/v1/version/<id>", kEnv},
    {"GET /api/v2/desiredstate", kEnv}, {"GET /api/v2/desiredstate/<version>", kEnv},
    {"GET /api/v2/desiredstate/diff/<from>/<to>", kEnv},
    {"PUT /api/v1/codebatched/<id>", kEnv},
    // Files: content-addressed (sha1) and shared by every environment.
    {"POST /api/v1/file", kShared}, {"PUT /api/v1/file/<id>", kShared}, {"PUT /api/v1/files", kShared},
    {"HEAD /api/v1/file/<id>", kShared}, {"GET /api/v1/file/<id>", kShared},
    // Resources, parameters and facts.
    {"GET /api/v2/resource", kEnv}, {"GET /api/v2/resource/<rid>", kEnv},
    {"GET /api/v2/resource/<rid>/history", kEnv}, {"GET /api/v2/resource/<rid>/logs", kEnv},
    {"GET /api/v2/resource/<rid>/facts", kEnv}, {"GET /api/v1/resource/<id>", kEnv},
    {"GET /api/v1/parameter/<id>", kEnv}, {"PUT /api/v1/parameter/<id>", kEnv},
    {"DELETE /api/v1/parameter/<id>", kEnv}, {"POST /api/v1/parameter", kEnv}, {"PUT /api/v1/parameters", kEnv},
    {"GET /api/v2/parameters", kEnv}, {"GET /api/v2/facts", kEnv},
    {"GET /api/v2/facts/<id>", kEnv}, {"GET /api/v2/resource/<rid>/facts/<id>", kEnv},
    // Agents, deploys, dry runs.
    {"GET /api/v2/agents", kEnv}, {"GET /api/v1/agent", kEnv},
    {"POST /api/v2/agent/<name>/<action>", kEnv}, {"POST /api/v2/agents/<action>", kEnv},
    {"POST /api/v1/deploy", kEnv}, {"POST /api/v2/deploy_filtered", kEnv},
    {"POST /api/v2/dryrun/<id>", kEnv}, {"POST /api/v1/dryrun/<id>", kEnv},
    {"GET /api/v2/dryrun/<version>", kEnv}, {"GET /api/v2/dryrun/<version>/<id>", kEnv},
    {"GET /api/v1/dryrun", kEnv}, {"GET /api/v1/dryrun/<id>", kEnv},
    // Action log, handler helpers, compliance, scheduler.
    {"GET /api/v2/resource_actions", kEnv}, {"GET /api/v2/resource/<rvid>/events", kEnv},
    {"GET /api/v2/resource/<rvid>/did_dependency_change", kEnv},
    {"POST /api/v2/compliance_report", kEnv}, {"GET /api/v2/compliance_report", kEnv},
    {"GET /api/v2/scheduler_status", kEnv},
    // Compiles: notify names the environment in the path; a report by id is checked against its own.
    {"POST /api/v1/notify/<id>", kEnv, "id"}, {"GET /api/v1/notify/<id>", kEnv, "id"},
    {"HEAD /api/v1/notify/<id>", kEnv, "id"},
    {"GET /api/v2/compilereport", kEnv}, {"GET /api/v1/compilequeue", kEnv},
    {"GET /api/v2/compilereport/<id>", kObject}, {"GET /api/v2/compiledata/<id>", kObject},
    // Tokens of the environment.
    {"POST /api/v2/environment_auth", kEnv}, {"GET /api/v2/environment_auth", kEnv},
    {"DELETE /api/v2/environment_auth/<jti>", kEnv},
};
// clang-format on

const char* scopeName(Scope s) {
  switch (s) {
  case Scope::Undeclared: return "undeclared";
  case Scope::Open: return "open";
  case Scope::Server: return "server";
  case Scope::Project: return "project";
  case Scope::Environment: return "environment";
  case Scope::AnyEnvironment: return "any-environment";
  case Scope::Object: return "object";
  }
  return "undeclared";
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

std::string routeKey(const Route& route) {
  std::string key(boost::beast::http::to_string(route.method));
  key += ' ';
  for (const std::string& seg : route.pattern) key += "/" + seg;
  return key;
}

void attachPolicies(std::vector<Route>& routes) {
  static const std::map<std::string, const Row*> byKey = [] {
    std::map<std::string, const Row*> m;
    for (const Row& r : kTable) m.emplace(r.key, &r);
    return m;
  }();
  std::string missing;
  for (Route& route : routes) {
    if (route.policy.scope != Scope::Undeclared) continue;
    std::string key = routeKey(route);
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      missing += (missing.empty() ? "" : ", ") + key;
      continue;
    }
    const Row& row = *it->second;
    if (route.clientTypes.empty()) {
      missing += (missing.empty() ? "" : ", ") + key + " (no client types)";
      continue;
    }
    if (row.scope == Scope::Environment && *row.envParam) {
      std::string bound = std::string("<") + row.envParam + ">";
      if (std::find(route.pattern.begin(), route.pattern.end(), bound) == route.pattern.end()) {
        missing += (missing.empty() ? "" : ", ") + key + " (no path parameter " + row.envParam + ")";
        continue;
      }
    }
    route.policy = Policy{row.scope, row.envParam};
  }
  if (!missing.empty())
    throw std::logic_error("routes without an authorisation policy (orchestrator/api/Authz.cpp): " + missing);
}

void authorize(const Route& route, const Request& req) {
  const Caller& caller = req.caller;
  bool allowed = false;
  for (const auto& t : caller.clientTypes)
    if (std::find(route.clientTypes.begin(), route.clientTypes.end(), t) != route.clientTypes.end())
      allowed = true;
  if (!allowed) {
    std::string need;
    for (const auto& t : route.clientTypes) need += (need.empty() ? "" : ", ") + t;
    throw ApiError{ErrorCode::Forbidden, "this endpoint needs a token with client type " + need};
  }
  if (!caller.environment) return;
  const std::string& scoped = *caller.environment;
  switch (route.policy.scope) {
  case Scope::Open:
  case Scope::AnyEnvironment:
  case Scope::Object: return;
  case Scope::Undeclared: // attachPolicies refuses these; never serve one
  case Scope::Server:
  case Scope::Project:
    throw ApiError{ErrorCode::Forbidden, "the token is scoped to environment " + scoped + "; " +
                                             routeKey(route) + " is a " + scopeName(route.policy.scope) +
                                             "-level call outside any one environment"};
  case Scope::Environment: {
    std::optional<std::string> named;
    if (route.policy.envParam.empty()) {
      auto it = req.headers->find("X-Inmanta-tid");
      if (it != req.headers->end() && !it->value().empty()) named = std::string(it->value());
    } else if (auto p = req.params.find(route.policy.envParam); p != req.params.end()) {
      named = p->second;
    }
    if (!named)
      throw ApiError{ErrorCode::Forbidden, "the token is scoped to environment " + scoped + "; " +
                                               routeKey(route) +
                                               " names no environment (X-Inmanta-tid header)"};
    requireEnvironment(req, *named);
    return;
  }
  }
}

void requireEnvironment(const Request& req, const std::string& env) {
  if (req.caller.environment && lower(env) != *req.caller.environment)
    throw ApiError{ErrorCode::Forbidden,
                   "the token is scoped to environment " + *req.caller.environment + ", not " + env};
}

nlohmann::json describeRoutes(const std::vector<Route>& routes) {
  nlohmann::json out = nlohmann::json::array();
  for (const Route& r : routes) {
    std::string path;
    for (const std::string& seg : r.pattern) path += "/" + seg;
    nlohmann::json env;
    if (r.policy.scope == Scope::Environment)
      env = r.policy.envParam.empty() ? std::string("X-Inmanta-tid") : r.policy.envParam;
    out.push_back({{"method", std::string(boost::beast::http::to_string(r.method))},
                   {"path", path},
                   {"client_types", r.clientTypes},
                   {"scope", scopeName(r.policy.scope)},
                   {"environment", env}});
  }
  return out;
}

} // namespace inm::api

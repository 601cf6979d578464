// Private to api/: authorisation, decided in one place (docs/server.md "Authorisation"). Every route's
// Policy (Request.h) comes from the one table in Authz.cpp, attached when the route registers; a route
// missing from the table fails registration, so no route can be served without a declared policy. The
// dispatcher calls authorize() after the token was verified (Auth.h) and before the handler runs.
// Invariant: a token with an environment claim reaches only routes of that environment (or shared ones).
#pragma once

#include "Request.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace inm::api {

/// "GET /api/v2/resource/<rid>": the key of a route in the policy table.
std::string routeKey(const Route& route);
/// Attaches each route's policy from the table; throws std::logic_error naming every route without one.
void attachPolicies(std::vector<Route>& routes);
/// Throws ApiError (403) unless the authenticated caller of `req` may call `route`: one of its client types
/// is allowed and an environment-scoped token stays in its environment.
void authorize(const Route& route, const Request& req);
/// For Scope::Object routes: 403 unless the caller may act on environment `env` (the object's).
void requireEnvironment(const Request& req, const std::string& env);
/// The route table with policies, for `inmanta server --list-routes` and the tests:
/// [{"method", "path", "client_types", "scope", "environment"}].
nlohmann::json describeRoutes(const std::vector<Route>& routes);

} // namespace inm::api

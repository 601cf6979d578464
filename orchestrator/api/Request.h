// Private to api/: a decoded request as the route handlers see it, the reply they build, and the parameter
// helpers that implement §18's coercions (path params repeated in bodies with other JSON types, string
// scalars, capitalised booleans). A helper that cannot read a parameter throws ApiError, which the
// dispatcher in HttpServer.cpp turns into the JSON error body; nothing else throws out of a handler.
#pragma once

#include "Framing.h"
#include "model/Failure.h"
#include "model/QueryParams.h"
#include "service/Service.h"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inm::compile {
class CompileService;
}

namespace inm::api {

namespace http = boost::beast::http;
namespace asio = boost::asio;

/// A failure raised while decoding a request (caught by the dispatcher).
struct ApiError {
  model::ErrorCode code;
  std::string message;
};

/// What a valid bearer token grants.
struct Caller {
  bool authenticated = false;
  std::vector<std::string> clientTypes;
  std::optional<std::string> environment; ///< the token's scope (urn:inmanta:env)
  std::optional<std::string> jti;         ///< a revocable token's id (checked against the token table)
};

struct Request {
  http::verb method = http::verb::get;
  std::vector<std::string> segments;        ///< percent-decoded path segments
  std::map<std::string, std::string> query; ///< percent-decoded; later duplicates win
  std::multimap<std::string, std::string>
      queryAll;                              ///< every query pair, repeated keys kept (list parameters)
  std::map<std::string, std::string> params; ///< bound by the route pattern
  const http::fields* headers = nullptr;
  std::shared_ptr<nlohmann::json> body; ///< an object (empty when there was no body)
  std::string bodyFile;                 ///< a large put_version body spooled to disk (body stays empty)
  Caller caller;
};

struct Reply {
  int status = 200;
  std::optional<nlohmann::json> json;          ///< JSON body (none = empty body)
  std::string raw;                             ///< a non-JSON body (console files)
  std::shared_ptr<service::BodyStream> stream; ///< instead: a body written in chunks as it is produced
  std::string contentType = "application/json";
};

/// The X-Inmanta-tid environment (400 when missing or not a uuid).
std::string environmentOf(const Request& req);
/// A parameter from the path, the query or the body, in that order.
std::optional<nlohmann::json> findParam(const Request& req, const std::string& name);
std::string stringParam(const Request& req, const std::string& name);
std::optional<std::string> optStringParam(const Request& req, const std::string& name);
int64_t intParam(const Request& req, const std::string& name);
int64_t intParam(const Request& req, const std::string& name, int64_t fallback);
bool boolParam(const Request& req, const std::string& name, bool fallback);
/// Where a decoded body holds a string or key with a NUL byte (PostgreSQL text cannot): the 400's message
/// naming its path, e.g. "resources[0].name".
std::optional<std::string> nulInJson(const nlohmann::json& v, const std::string& path = "");
/// A path parameter that must be a uuid (400 naming it otherwise).
std::string uuidParam(const Request& req, const std::string& name);

/// The value of an ok Result, or throws ApiError with its code and message.
nlohmann::json unwrap(service::Result r);
/// 200 with a JSON body.
Reply ok(nlohmann::json body);
/// 200 with the Result's value: its JSON text streamed when the service produces it in pieces
/// (Result::ofStream), else its JSON tree; an error Result throws ApiError as unwrap does.
Reply okResult(service::Result r);
/// 200 with {"data": value}.
Reply okData(nlohmann::json value);
/// 200 with {"data": list, "links": {}, "metadata": {...}} for a v2 listing (the whole list as one page).
Reply okPage(nlohmann::json list);

/// A route handler.
using Handler = std::function<asio::awaitable<Reply>(Request&)>;

/// Who a route serves, beyond its client types (Authz.h; the table of every route is in Authz.cpp).
enum class Scope {
  Undeclared,     ///< no policy: the route fails to register
  Open,           ///< no authentication (health)
  Server,         ///< server-wide (lists of every environment): refused to an environment-scoped token
  Project,        ///< project-level (projects, creating an environment): refused to a scoped token
  Environment,    ///< one environment, named by `envParam` (empty = the X-Inmanta-tid header)
  AnyEnvironment, ///< shared by every environment (content-addressed files, server status)
  Object,         ///< the environment of the addressed object, checked by the handler (requireEnvironment)
};

struct Policy {
  Scope scope = Scope::Undeclared;
  std::string envParam; ///< Scope::Environment: the path or query parameter naming it; "" = X-Inmanta-tid
};

/// One route: method, pattern segments ("<name>" binds a parameter), handler, client types allowed, and
/// the policy the dispatcher applies before the handler (attached from Authz.cpp's table at registration).
struct Route {
  http::verb method;
  std::vector<std::string> pattern;
  Handler handler;
  std::vector<std::string> clientTypes = {"api"};
  Policy policy;
};

/// The page of an in-memory listing: `rows` sorted by `sort` (strings by bytes, numbers by value, ties kept
/// in order) and cut to `limit`, as okPage's body with metadata.total = all rows that passed the filters.
Reply okListing(nlohmann::json rows, const model::SortOrder& sort, int64_t limit);

/// Appends the routes of each family.
void addEnvironmentRoutes(std::vector<Route>& routes, service::Service& svc);
void addVersionRoutes(std::vector<Route>& routes, service::Service& svc);
void addResourceRoutes(std::vector<Route>& routes, service::Service& svc);
void addActionRoutes(std::vector<Route>& routes, service::Service& svc);
void addAuthRoutes(std::vector<Route>& routes, const struct HttpOptions& options, service::Service& svc);
void addCompileRoutes(std::vector<Route>& routes, service::Service& svc, const struct HttpOptions& options,
                      compile::CompileService& compiles);

/// Splits "/api/v1/x" into {"api", "v1", "x"}.
std::vector<std::string> splitPattern(const std::string& pattern);

} // namespace inm::api

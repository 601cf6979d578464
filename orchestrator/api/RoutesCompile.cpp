// Routes of the compile service (orchestrator.md §11, §13): notify (request a compile; HEAD = is compiling),
// compile reports, the queue and compile data. Transport only: each handler checks the environment through
// service::Service (404 for an unknown one) and calls compile::CompileService.
#include "Auth.h"
#include "Authz.h"
#include "Request.h"
#include "compile/CompileService.h"

namespace inm::api {

using model::ErrorCode;
using V = http::verb;

namespace {

nlohmann::json expectJson(llvm::Expected<nlohmann::json> v) {
  if (!v) throw ApiError{ErrorCode::Unavailable, llvm::toString(v.takeError())};
  return std::move(*v);
}

} // namespace

void addCompileRoutes(std::vector<Route>& routes, service::Service& svc, const HttpOptions& options,
                      compile::CompileService& compiles) {
  auto add = [&](V method, const char* pattern, Handler h) {
    routes.push_back(Route{method, splitPattern(pattern), std::move(h), {"api"}, Policy{}});
  };

  // POST|GET /api/v1/notify/<id>: queue a compile; `update` (default true) pulls the repository first.
  for (V method : {V::post, V::get}) {
    add(method, "/api/v1/notify/<id>", [&svc, &compiles](Request& req) -> asio::awaitable<Reply> {
      std::string env = uuidParam(req, "id");
      unwrap(co_await svc.getEnvironment(env));
      compile::CompileRequest r;
      r.environment = env;
      r.forceUpdate = boolParam(req, "update", true);
      r.metadata = {{"type", "api"}, {"message", "Recompile trigger through API call"}};
      if (auto m = findParam(req, "metadata")) {
        if (!m->is_object()) throw ApiError{ErrorCode::BadRequest, "'metadata' must be an object"};
        if (!m->empty()) r.metadata = *m;
      }
      if (auto vars = findParam(req, "env_vars")) {
        if (!vars->is_object()) throw ApiError{ErrorCode::BadRequest, "'env_vars' must be an object"};
        r.envVars = *vars;
      }
      auto id = co_await compiles.request(r);
      if (!id) throw ApiError{ErrorCode::Unavailable, llvm::toString(id.takeError())};
      co_return Reply{};
    });
  }
  // HEAD /api/v1/notify/<id>: 200 while compiling, 204 when idle.
  add(V::head, "/api/v1/notify/<id>", [&svc, &compiles](Request& req) -> asio::awaitable<Reply> {
    std::string env = uuidParam(req, "id");
    unwrap(co_await svc.getEnvironment(env));
    bool busy = co_await compiles.isCompiling(env);
    Reply r;
    r.status = busy ? 200 : 204;
    co_return r;
  });

  add(V::get, "/api/v2/compilereport", [&svc, &compiles](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    unwrap(co_await svc.getEnvironment(env));
    const model::QueryPairs& q = req.queryAll;
    int64_t limit = model::limitParam(q, 1000, 1000);
    model::sortParam(q, {"requested"}, {"requested", false}); // the only order: newest first
    if (auto s = model::singleParam(q, "sort"); s && model::sortParam(q, {"requested"}, {}).ascending)
      throw ApiError{ErrorCode::BadRequest, "'sort' must be requested.desc here (newest first), got " + *s};
    model::filterParams(q, {});
    model::cursorParams(q, false);
    auto compilesOr = co_await compiles.listCompiles(env, int(limit));
    nlohmann::json list = expectJson(std::move(compilesOr));
    for (auto& c : list) c.erase("handled");
    co_return okPage(std::move(list));
  });
  add(V::get, "/api/v2/compilereport/<id>", [&compiles](Request& req) -> asio::awaitable<Reply> {
    std::string id = uuidParam(req, "id");
    auto detail = co_await compiles.compileDetail(id);
    nlohmann::json c = expectJson(std::move(detail));
    if (c.is_null()) throw ApiError{ErrorCode::NotFound, "no compile with id " + id};
    if (c["environment"].is_string()) requireEnvironment(req, c["environment"].get<std::string>());
    c.erase("compile_data");
    c.erase("handled");
    co_return okData(std::move(c));
  });
  add(V::get, "/api/v1/compilequeue", [&svc, &compiles](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    unwrap(co_await svc.getEnvironment(env));
    auto queue = co_await compiles.queue(env);
    nlohmann::json list = expectJson(std::move(queue));
    co_return ok(nlohmann::json{{"queue", std::move(list)}});
  });
  add(V::get, "/api/v2/compiledata/<id>", [&compiles](Request& req) -> asio::awaitable<Reply> {
    std::string id = uuidParam(req, "id");
    auto detail = co_await compiles.compileDetail(id);
    nlohmann::json c = expectJson(std::move(detail));
    if (c.is_null()) throw ApiError{ErrorCode::NotFound, "no compile with id " + id};
    if (c["environment"].is_string()) requireEnvironment(req, c["environment"].get<std::string>());
    co_return okData(c["compile_data"]);
  });

  // The compiler exports back to this server: with auth on it gets an env-scoped compiler+api token.
  if (options.auth) {
    std::vector<JwtKey> keys = options.jwtKeys;
    compiles.setTokenMinter([keys](const std::string& env) {
      auto t = mintToken(keys, {"compiler", "api"}, env, 0);
      if (!t) {
        llvm::consumeError(t.takeError());
        return std::string();
      }
      return *t;
    });
  }
}

} // namespace inm::api

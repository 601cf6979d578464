// Routes for projects, environments, settings, halt/resume and server status (orchestrator.md §10, §13, §18).
// v1 answers use the method-specific keys and field names the 11.5.5 CLI reads (`project`, `repo_url`);
// v2 answers wrap the service's values in {"data": …}.
#include "Request.h"
#include "model/Settings.h"

namespace inm::api {

using model::ErrorCode;
using V = http::verb;

namespace {

nlohmann::json envV1(const nlohmann::json& e) {
  return {{"id", e["id"]},
          {"name", e["name"]},
          {"project", e["project_id"]},
          {"repo_url", e["repo_url"]},
          {"repo_branch", e["repo_branch"]},
          {"description", e["description"]},
          {"icon", e["icon"]},
          {"halted", e["halted"]},
          {"settings", e["settings"]}};
}

nlohmann::json projectV1(const nlohmann::json& p) {
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& e : p["environments"]) ids.push_back(e["id"]);
  return {{"id", p["id"]}, {"name", p["name"]}, {"environments", ids}};
}

nlohmann::json bodyOf(const Request& req) { return req.body ? *req.body : nlohmann::json::object(); }

} // namespace

void addEnvironmentRoutes(std::vector<Route>& routes, service::Service& svc) {
  auto add = [&](V method, const char* pattern, Handler h) {
    routes.push_back(Route{method, splitPattern(pattern), std::move(h), {"api"}, Policy{}});
  };

  add(V::get, "/api/v2/health", [&svc](Request&) -> asio::awaitable<Reply> { // Scope::Open (Authz.cpp)
    co_return okData(unwrap(co_await svc.health()));
  });
  add(V::get, "/api/v1/serverstatus", [&svc](Request&) -> asio::awaitable<Reply> {
    unwrap(co_await svc.health());
    // Our extensions are announced as features (docs/server.md): a client uses them only when listed here.
    nlohmann::json features = nlohmann::json::array();
    if (svc.options().fileBatchLimit > 0)
      features.push_back({{"slice", "core.server"},
                          {"name", "file_batch"},
                          {"value", svc.options().fileBatchLimit},
                          {"description", "PUT /api/v1/files: many files in one request"}});
    features.push_back({{"slice", "core.server"},
                        {"name", "delta_version"},
                        {"value", 1},
                        {"description", "PUT /api/v2/version/delta: a version as changes against its base"}});
    co_return ok({{"data",
                   {{"product", "inmanta-cpp"},
                    {"edition", "community"},
                    {"version", INM_VERSION},
                    {"license", "Apache Software License 2"},
                    {"extensions", nlohmann::json::array()},
                    {"slices", nlohmann::json::array()},
                    {"features", std::move(features)},
                    {"status", "up"}}}});
  });

  // Projects.
  add(V::put, "/api/v1/project", [&svc](Request& req) -> asio::awaitable<Reply> {
    auto id = optStringParam(req, "project_id");
    nlohmann::json value = unwrap(co_await svc.createProject(stringParam(req, "name"), id));
    co_return ok({{"project", projectV1(value)}});
  });
  add(V::put, "/api/v2/project", [&svc](Request& req) -> asio::awaitable<Reply> {
    auto id = optStringParam(req, "project_id");
    co_return okData(unwrap(co_await svc.createProject(stringParam(req, "name"), id)));
  });
  add(V::get, "/api/v1/project", [&svc](Request&) -> asio::awaitable<Reply> {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : unwrap(co_await svc.listProjects())) out.push_back(projectV1(p));
    co_return ok({{"projects", out}});
  });
  add(V::get, "/api/v2/project",
      [&svc](Request&) -> asio::awaitable<Reply> { co_return okData(unwrap(co_await svc.listProjects())); });
  add(V::get, "/api/v1/project/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json value = unwrap(co_await svc.getProject(uuidParam(req, "id")));
    co_return ok({{"project", projectV1(value)}});
  });
  add(V::get, "/api/v2/project/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.getProject(uuidParam(req, "id"))));
  });
  add(V::post, "/api/v1/project/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json value = unwrap(co_await svc.modifyProject(uuidParam(req, "id"), stringParam(req, "name")));
    co_return ok({{"project", projectV1(value)}});
  });
  add(V::post, "/api/v2/project/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.modifyProject(uuidParam(req, "id"), stringParam(req, "name"))));
  });
  for (const char* p : {"/api/v1/project/<id>", "/api/v2/project/<id>"})
    add(V::delete_, p, [&svc](Request& req) -> asio::awaitable<Reply> {
      unwrap(co_await svc.deleteProject(uuidParam(req, "id")));
      co_return Reply{};
    });

  // Environments.
  add(V::put, "/api/v1/environment", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json value = unwrap(co_await svc.createEnvironment(bodyOf(req)));
    co_return ok({{"environment", envV1(value)}});
  });
  add(V::put, "/api/v2/environment", [&svc](Request& req) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.createEnvironment(bodyOf(req))));
  });
  add(V::get, "/api/v1/environment", [&svc](Request&) -> asio::awaitable<Reply> {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : unwrap(co_await svc.listEnvironments())) out.push_back(envV1(e));
    co_return ok({{"environments", out}});
  });
  add(V::get, "/api/v2/environment", [&svc](Request&) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.listEnvironments()));
  });
  add(V::get, "/api/v1/environment/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json value = unwrap(co_await svc.getEnvironment(uuidParam(req, "id")));
    co_return ok({{"environment", envV1(value)}});
  });
  add(V::get, "/api/v2/environment/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.getEnvironment(uuidParam(req, "id"))));
  });
  add(V::post, "/api/v1/environment/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json value = unwrap(co_await svc.modifyEnvironment(uuidParam(req, "id"), bodyOf(req)));
    co_return ok({{"environment", envV1(value)}});
  });
  add(V::post, "/api/v2/environment/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.modifyEnvironment(uuidParam(req, "id"), bodyOf(req))));
  });
  for (const char* p : {"/api/v1/environment/<id>", "/api/v2/environment/<id>"})
    add(V::delete_, p, [&svc](Request& req) -> asio::awaitable<Reply> {
      unwrap(co_await svc.deleteEnvironment(uuidParam(req, "id")));
      co_return Reply{};
    });
  add(V::delete_, "/api/v2/decommission/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    unwrap(co_await svc.clearEnvironment(uuidParam(req, "id")));
    co_return Reply{};
  });
  add(V::post, "/api/v2/actions/environment/halt", [&svc](Request& req) -> asio::awaitable<Reply> {
    unwrap(co_await svc.halt(environmentOf(req)));
    co_return Reply{};
  });
  add(V::post, "/api/v2/actions/environment/resume", [&svc](Request& req) -> asio::awaitable<Reply> {
    unwrap(co_await svc.resume(environmentOf(req)));
    co_return Reply{};
  });

  // Settings.
  add(V::get, "/api/v1/environment_settings", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json all = unwrap(co_await svc.listSettings(environmentOf(req)));
    co_return ok({{"settings", all["settings"]}, {"metadata", all["definition"]}});
  });
  add(V::get, "/api/v2/environment_settings", [&svc](Request& req) -> asio::awaitable<Reply> {
    co_return okData(unwrap(co_await svc.listSettings(environmentOf(req))));
  });
  add(V::get, "/api/v1/environment_settings/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    nlohmann::json one = unwrap(co_await svc.getSetting(environmentOf(req), stringParam(req, "id")));
    co_return ok({{"value", one["value"]}, {"metadata", one["definition"]}});
  });
  add(V::get, "/api/v2/environment_settings/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string key = stringParam(req, "id");
    nlohmann::json one = unwrap(co_await svc.getSetting(environmentOf(req), key));
    co_return okData({{"settings", {{key, one["value"]}}}, {"definition", {{key, one["definition"]}}}});
  });
  for (const char* p : {"/api/v1/environment_settings/<id>", "/api/v2/environment_settings/<id>"}) {
    add(V::post, p, [&svc](Request& req) -> asio::awaitable<Reply> {
      std::string env = environmentOf(req), key = stringParam(req, "id");
      if (!req.body || !req.body->contains("value"))
        throw ApiError{ErrorCode::BadRequest, "'value' is required"};
      unwrap(co_await svc.setSetting(env, key, (*req.body)["value"]));
      co_return Reply{};
    });
    add(V::delete_, p, [&svc](Request& req) -> asio::awaitable<Reply> {
      unwrap(co_await svc.resetSetting(environmentOf(req), stringParam(req, "id")));
      co_return Reply{};
    });
  }
  add(V::post, "/api/v2/protected_environment_settings", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    auto s = findParam(req, "settings");
    if (!s) throw ApiError{ErrorCode::BadRequest, "'settings' is required"};
    unwrap(co_await svc.protectSettings(env, *s));
    co_return Reply{};
  });
}

} // namespace inm::api

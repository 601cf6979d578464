// Delta versions (docs/server.md "Delta versions", issue #30): our exporter's put_version that carries only
// the new and changed resources and the ids of the removed ones against a base version it names by number and
// content token. The body is a put_version body (same resource, resource_state, resource_sets, unknowns,
// version_info, pip_config fields) plus base_version, base_token and removed_resources; its resources are
// checked and hashed as put_version's are, the graph is checked by the store on the materialised version.
// Invariant: a delta version is stored only whole and only against the base it names; anything else is an
// error naming the cause, after which the exporter pushes the whole version.
#include "Util.h"
#include "VersionBody.h"
#include "artifact/ResourceId.h"
#include "service/Log.h"
#include "service/Service.h"

#include <chrono>
#include <set>

namespace inm::service {

using model::ErrorCode;

namespace {

/// base_version, base_token and removed_resources of a delta body, checked.
llvm::Error readDeltaFields(const nlohmann::json& body, store::DeltaVersionInput& d) {
  auto fail = [](std::string m) { return model::fail(ErrorCode::BadRequest, std::move(m)); };
  auto base = body.find("base_version");
  if (base == body.end() || !base->is_number_integer() || base->get<int64_t>() <= 0)
    return fail("'base_version' must be the positive number of the version the delta is against");
  d.base = base->get<int64_t>();
  auto token = body.find("base_token");
  if (token == body.end() || !token->is_string())
    return fail(
        "'base_token' must be the content token of the base version (GET /api/v2/version/delta_base)");
  d.baseToken = token->get<std::string>();
  std::set<std::string> removed;
  if (auto r = body.find("removed_resources"); r != body.end() && !r->is_null()) {
    if (!r->is_array()) return fail("'removed_resources' must be a list of resource ids");
    for (size_t i = 0; i < r->size(); ++i) {
      const nlohmann::json& id = (*r)[i];
      std::string where = "removed_resources[" + std::to_string(i) + "]";
      if (!id.is_string()) return fail(where + " must be a resource id");
      llvm::Expected<artifact::ResourceId> parsed = artifact::parseResourceId(id.get<std::string>());
      if (!parsed) return fail(where + ": " + llvm::toString(parsed.takeError()));
      removed.insert(parsed->str());
    }
  }
  d.removed.assign(removed.begin(), removed.end());
  return llvm::Error::success();
}

} // namespace

asio::awaitable<Result> Service::putDeltaVersion(std::string env,
                                                 std::shared_ptr<const nlohmann::json> body) {
  env = lowerUuid(env);
  if (!body->is_object())
    co_return Result::error(ErrorCode::BadRequest, "the request body must be a JSON object");
  auto started = std::chrono::steady_clock::now();
  store::DeltaVersionInput d;
  llvm::Error stored = co_await blocking([&]() -> llvm::Error {
    if (llvm::Error e = readDeltaFields(*body, d)) return e;
    llvm::Expected<Built> built = parseVersion(env, *body, /*partial=*/false, /*graph=*/false);
    if (!built) return built.takeError();
    d.version = std::move(built->in);
    std::set<std::string> removed(d.removed.begin(), d.removed.end());
    for (const store::ResourceRow& r : d.version.resources)
      if (removed.count(r.resourceId))
        return model::fail(ErrorCode::BadRequest,
                           r.resourceId + " is both in 'resources' and in 'removed_resources'");
    return store_.putDeltaVersion(d);
  });
  if (stored) co_return Result::error(std::move(stored));
  const int64_t version = d.version.version;
  // The new version's token, for the exporter's next delta: null when another version landed meanwhile.
  nlohmann::json token = nullptr;
  auto latest = co_await blocking([&] { return store_.deltaBase(env); });
  if (latest && (*latest)["version"] == version)
    token = (*latest)["token"];
  else if (!latest)
    llvm::consumeError(latest.takeError());
  logLine("info", "version_stored",
          {{"environment", env},
           {"version", std::to_string(version)},
           {"delta_base", std::to_string(d.base)},
           {"resources", std::to_string(d.version.resources.size())},
           {"removed", std::to_string(d.removed.size())},
           {"ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - started)
                                     .count())}});
  co_await afterStore(env, version);
  co_return Result::of(nlohmann::json{{"version", version}, {"token", token}});
}

asio::awaitable<Result> Service::deltaBase(std::string env) {
  auto v = co_await blocking([&] { return store_.deltaBase(lowerUuid(env)); });
  if (!v) co_return Result::error(v.takeError());
  co_return Result::of(std::move(*v));
}

} // namespace inm::service

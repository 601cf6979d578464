// Routes for versions, desired state, files and handler code (orchestrator.md §3.3–3.4, §4, §13, §18).
#include "ContentDiffs.h"
#include "Request.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace inm::api {

using model::ErrorCode;
using V = http::verb;

namespace {

/// Version retention after a release (orchestrator.md §4), after the answer: a purge never delays a release.
asio::awaitable<void> retainAfterRelease(service::Service& svc, std::string env) {
  auto ex = co_await asio::this_coro::executor;
  asio::co_spawn(ex, svc.retainVersions(std::move(env)), asio::detached);
}

} // namespace

void addVersionRoutes(std::vector<Route>& routes, service::Service& svc) {
  const std::vector<std::string> exportClients = {"api", "compiler"};
  auto add = [&](V method, const char* pattern, Handler h, std::vector<std::string> clients = {"api"}) {
    routes.push_back(Route{method, splitPattern(pattern), std::move(h), std::move(clients), Policy{}});
  };

  add(
      V::post, "/api/v2/reserve_version",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        co_return okData(unwrap(co_await svc.reserveVersion(environmentOf(req))));
      },
      exportClients);
  add(
      V::put, "/api/v1/version",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        if (!req.bodyFile.empty())
          unwrap(co_await svc.putVersionFile(env, req.bodyFile));
        else
          unwrap(co_await svc.putVersion(env, req.body));
        co_return ok(nlohmann::json::object());
      },
      exportClients);
  add(
      V::put, "/api/v2/version/partial",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        co_return okData(unwrap(co_await svc.putPartialVersion(env, req.body)));
      },
      exportClients);
  // Our extension (docs/server.md "Delta versions"), announced in serverstatus' features as delta_version.
  add(
      V::put, "/api/v2/version/delta",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        if (!req.body) throw ApiError{ErrorCode::BadRequest, "the delta version needs a JSON body"};
        co_return okData(unwrap(co_await svc.putDeltaVersion(env, req.body)));
      },
      exportClients);
  add(
      V::get, "/api/v2/version/delta_base",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        co_return okData(unwrap(co_await svc.deltaBase(env)));
      },
      exportClients);
  add(
      V::post, "/api/v1/version/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        nlohmann::json value = unwrap(co_await svc.release(env, intParam(req, "id")));
        co_await retainAfterRelease(svc, env);
        co_return ok({{"model", value}});
      },
      exportClients);
  add(V::post, "/api/v2/desiredstate/<version>/promote", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    unwrap(co_await svc.release(env, intParam(req, "version")));
    co_await retainAfterRelease(svc, env);
    co_return Reply{};
  });
  add(V::get, "/api/v1/version", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    int64_t start = intParam(req, "start", 0), limit = intParam(req, "limit", 1000000);
    if (start < 0)
      throw ApiError{ErrorCode::BadRequest, "'start' must be 0 or more, got " + std::to_string(start)};
    if (limit < 1)
      throw ApiError{ErrorCode::BadRequest, "'limit' must be 1 or more, got " + std::to_string(limit)};
    co_return ok(unwrap(co_await svc.listVersions(env, start, limit)));
  });
  add(V::get, "/api/v1/version/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    co_return okResult(
        co_await svc.getVersion(env, intParam(req, "id"), boolParam(req, "include_logs", false)));
  });
  add(V::delete_, "/api/v1/version/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    unwrap(co_await svc.deleteVersion(env, intParam(req, "id")));
    co_return Reply{};
  });
  add(V::get, "/api/v2/desiredstate", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    const model::QueryPairs& q = req.queryAll;
    int64_t limit = model::limitParam(q, 1000, 1000);
    model::SortOrder sort = model::sortParam(q, {"version"}, {"version", false});
    auto filters = model::filterParams(q, {"status"});
    model::checkFilterValues(filters, "status", {"active", "candidate", "retired", "skipped_candidate"});
    model::cursorParams(q, false);
    const std::vector<std::string>& statuses = filters["status"];
    nlohmann::json all = unwrap(co_await svc.desiredStates(env));
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& v : all)
      if (statuses.empty() ||
          std::find(statuses.begin(), statuses.end(), v.value("status", "")) != statuses.end())
        kept.push_back(v);
    co_return okListing(std::move(kept), sort, limit);
  });
  add(V::get, "/api/v2/desiredstate/<version>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    co_return okPage(unwrap(co_await svc.desiredStateResources(env, intParam(req, "version"))));
  });
  add(V::get, "/api/v2/desiredstate/diff/<from>/<to>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    int64_t from = intParam(req, "from"), to = intParam(req, "to");
    nlohmann::json diff = unwrap(co_await svc.diff(env, from, to));
    co_await addContentDiffs(svc, diff, "version " + std::to_string(from), "version " + std::to_string(to));
    co_return okData(std::move(diff));
  });

  // Files.
  add(
      V::post, "/api/v1/file",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        auto files = findParam(req, "files");
        if (!files) throw ApiError{ErrorCode::BadRequest, "'files' is required"};
        nlohmann::json value = unwrap(co_await svc.missingFiles(*files));
        co_return ok({{"files", value}});
      },
      exportClients);
  add(
      V::put, "/api/v1/file/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string id = stringParam(req, "id");
        if (req.body && req.body->contains("id") && (*req.body)["id"] != id)
          throw ApiError{ErrorCode::BadRequest, "'id' in the body differs from the path"};
        unwrap(co_await svc.uploadFile(id, stringParam(req, "content")));
        co_return Reply{};
      },
      exportClients);
  // Our extension (docs/server.md "File batches"): {"files": {"<sha1>": "<base64>", …}} in one request,
  // announced in serverstatus' features with its limit; absent when the limit is 0.
  if (uint64_t limit = svc.options().fileBatchLimit; limit > 0)
    add(
        V::put, "/api/v1/files",
        [&svc, limit](Request& req) -> asio::awaitable<Reply> {
          // Read in place (not copied): a batch is up to `limit` bytes of text.
          nlohmann::json* files = req.body && req.body->contains("files") ? &(*req.body)["files"] : nullptr;
          if (!files || !files->is_object())
            throw ApiError{ErrorCode::BadRequest, "'files' must be an object of sha1 -> base64 content"};
          uint64_t total = 0;
          std::vector<std::pair<std::string, std::string>> batch;
          batch.reserve(files->size());
          for (auto it = files->begin(); it != files->end(); ++it) {
            if (!it.value().is_string())
              throw ApiError{ErrorCode::BadRequest, "files." + it.key() + " must be a base64 string"};
            total += it.value().get_ref<const std::string&>().size();
            if (total > limit)
              throw ApiError{ErrorCode::PayloadTooLarge,
                             "the file batch exceeds the server's file batch limit of " +
                                 std::to_string(limit) + " base64 bytes at file " + it.key() +
                                 "; send fewer files per request"};
            batch.emplace_back(it.key(), std::move(it.value().get_ref<std::string&>()));
          }
          unwrap(co_await svc.uploadFiles(std::move(batch)));
          co_return Reply{};
        },
        exportClients);
  add(
      V::head, "/api/v1/file/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        if (!unwrap(co_await svc.fileExists(stringParam(req, "id"))).get<bool>())
          throw ApiError{ErrorCode::NotFound, "file " + stringParam(req, "id") + " not found"};
        co_return Reply{};
      },
      exportClients);
  add(V::get, "/api/v1/file/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        nlohmann::json value = unwrap(co_await svc.getFile(stringParam(req, "id")));
        co_return ok({{"content", value}});
      },
      {"api", "compiler", "agent"});
  add(
      V::put, "/api/v1/codebatched/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        auto resources = findParam(req, "resources");
        if (!resources) throw ApiError{ErrorCode::BadRequest, "'resources' is required"};
        unwrap(co_await svc.uploadCode(env, intParam(req, "id"), *resources));
        co_return Reply{};
      },
      exportClients);
}

} // namespace inm::api

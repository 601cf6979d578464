// Routes for the action log query, the handler helpers, the compliance report, the scheduler's status and
// single facts (orchestrator.md §6.6, §13, §15). Versioned resource ids arrive percent-encoded as one path
// segment.
#include "Request.h"

namespace inm::api {

using model::ErrorCode;
using V = http::verb;

namespace {

/// A list parameter: repeated query keys, comma-separated values, or a JSON list in the body.
std::vector<std::string> listParam(const Request& req, const std::string& name) {
  std::vector<std::string> out;
  auto [b, e] = req.queryAll.equal_range(name);
  for (auto it = b; it != e; ++it) {
    const std::string& v = it->second;
    size_t i = 0;
    while (i <= v.size()) {
      size_t j = v.find(',', i);
      if (j == std::string::npos) j = v.size();
      if (j > i) out.push_back(v.substr(i, j - i));
      i = j + 1;
    }
  }
  if (b == e && req.body) {
    auto it = req.body->find(name);
    if (it != req.body->end() && !it->is_null()) {
      if (!it->is_array()) throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be a list of strings"};
      for (const auto& x : *it) {
        if (!x.is_string())
          throw ApiError{ErrorCode::BadRequest,
                         "'" + name + "' must be a list of strings, holds " + x.dump()};
        out.push_back(x.get<std::string>());
      }
    }
  }
  return out;
}

} // namespace

void addActionRoutes(std::vector<Route>& routes, service::Service& svc) {
  auto add = [&](V method, const char* pattern, Handler h, std::vector<std::string> clients = {"api"}) {
    routes.push_back(Route{method, splitPattern(pattern), std::move(h), std::move(clients), Policy{}});
  };

  add(V::get, "/api/v2/resource_actions", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    std::vector<std::string> exclude = listParam(req, "exclude_changes");
    // Scalar parameters once (or repeated with one value); no filter.*/sort: this endpoint has named ones.
    for (const char* k : {"resource_type", "agent", "attribute", "attribute_value", "log_severity", "limit",
                          "action_id", "first_timestamp", "last_timestamp"})
      model::singleParam(req.queryAll, k);
    model::filterParams(req.queryAll, {});
    if (req.query.count("sort"))
      throw ApiError{ErrorCode::BadRequest, "'sort' is not supported: the action log is newest first"};
    std::map<std::string, std::string> query = req.query;
    co_return ok(unwrap(co_await svc.resourceActions(env, std::move(query), std::move(exclude))));
  });
  // The handler helpers (§6.6) are called by executors with agent tokens.
  add(V::get, "/api/v2/resource/<rvid>/events",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req), rvid = stringParam(req, "rvid");
        co_return okData(unwrap(co_await svc.resourceEvents(env, rvid)));
      },
      {"api", "agent"});
  add(V::get, "/api/v2/resource/<rvid>/did_dependency_change",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req), rvid = stringParam(req, "rvid");
        co_return okData(unwrap(co_await svc.didDependencyChange(env, rvid)));
      },
      {"api", "agent"});
  for (V method : {V::post, V::get})
    add(method, "/api/v2/compliance_report", [&svc](Request& req) -> asio::awaitable<Reply> {
      std::string env = environmentOf(req);
      std::vector<std::string> rids = listParam(req, "resource_ids");
      co_return okData(unwrap(co_await svc.complianceReport(env, std::move(rids))));
    });
  add(V::get, "/api/v2/scheduler_status", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    co_return okData(unwrap(co_await svc.schedulerStatus(env)));
  });
  add(V::get, "/api/v2/facts/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req), id = stringParam(req, "id"), none;
    co_return okData(unwrap(co_await svc.fact(env, none, id)));
  });
  add(V::get, "/api/v2/resource/<rid>/facts/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req), rid = stringParam(req, "rid"), id = stringParam(req, "id");
    co_return okData(unwrap(co_await svc.fact(env, rid, id)));
  });
}

} // namespace inm::api

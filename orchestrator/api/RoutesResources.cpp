// Routes for resources, parameters/facts, agents, deploys and dry runs (orchestrator.md §13, §18). Resource
// ids arrive percent-encoded as one path segment (`/` as %2F), decoded before they reach here.
#include "ContentDiffs.h"
#include "Request.h"
#include "model/Ids.h"
#include "model/Vocabulary.h"

#include <algorithm>

namespace inm::api {

namespace {

// orchestrator.md §6.11 step 5: the report shape `{summary: {id, model, date, total, todo}, diff:
// [{resource_id, status, attributes: {a: {from_value, to_value, from_value_compare, to_value_compare}}}]}`,
// added next to the stored row's own fields (kept for existing readers).
void addDryrunReport(nlohmann::json& row) {
  row["summary"] = {{"id", row.value("id", nlohmann::json())},
                    {"model", row.value("model", nlohmann::json())},
                    {"date", row.value("date", nlohmann::json())},
                    {"total", row.value("total", nlohmann::json())},
                    {"todo", row.value("todo", nlohmann::json())}};
  auto compare = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(4); };
  nlohmann::json diff = nlohmann::json::array();
  const nlohmann::json& resources = row.contains("resources") ? row["resources"] : nlohmann::json();
  if (resources.is_object())
    for (const auto& [rvid, entry] : resources.items()) {
      if (!entry.is_object() || entry.value("done", true) == false) continue;
      nlohmann::json attributes = nlohmann::json::object();
      if (entry.contains("changes") && entry["changes"].is_object())
        for (const auto& [name, change] : entry["changes"].items()) {
          nlohmann::json from =
              change.is_object() ? change.value("current", nlohmann::json()) : nlohmann::json();
          nlohmann::json to =
              change.is_object() ? change.value("desired", nlohmann::json()) : nlohmann::json();
          attributes[name] = {{"from_value", from},
                              {"to_value", to},
                              {"from_value_compare", compare(from)},
                              {"to_value_compare", compare(to)}};
        }
      diff.push_back({{"resource_id", std::string(model::withoutVersion(rvid))},
                      {"status", entry.value("diff_status", "unmodified")},
                      {"attributes", std::move(attributes)}});
    }
  row["diff"] = std::move(diff);
}

} // namespace

using model::ErrorCode;
using V = http::verb;

namespace {

/// Whether `row` passes the listing filters: a value must occur in the string field of the filter's name
/// (several values of one filter: any of them).
bool matchesFilters(const nlohmann::json& row,
                    const std::map<std::string, std::vector<std::string>>& filters) {
  for (const auto& [field, values] : filters) {
    auto it = row.find(field);
    std::string have = it == row.end() ? "" : it->is_string() ? it->get<std::string>() : it->dump();
    if (!std::any_of(values.begin(), values.end(),
                     [&](const std::string& v) { return have.find(v) != std::string::npos; }))
      return false;
  }
  return true;
}

nlohmann::json paramValue(const Request& req) {
  nlohmann::json p = req.body ? *req.body : nlohmann::json::object();
  if (auto v = findParam(req, "value")) p["value"] = *v;
  if (auto s = optStringParam(req, "source")) p["source"] = *s;
  if (auto r = optStringParam(req, "resource_id")) p["resource_id"] = *r;
  return p;
}

} // namespace

void addResourceRoutes(std::vector<Route>& routes, service::Service& svc) {
  auto add = [&](V method, const char* pattern, Handler h, std::vector<std::string> clients = {"api"}) {
    routes.push_back(Route{method, splitPattern(pattern), std::move(h), std::move(clients), Policy{}});
  };

  add(V::get, "/api/v2/resource", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    std::multimap<std::string, std::string> query = req.queryAll;
    co_return ok(unwrap(co_await svc.listResources(env, std::move(query))));
  });
  add(V::get, "/api/v2/resource/<rid>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    co_return okData(unwrap(co_await svc.resourceDetails(env, stringParam(req, "rid"))));
  });
  add(V::get, "/api/v2/resource/<rid>/history", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    const model::QueryPairs& q = req.queryAll;
    int64_t limit = model::limitParam(q, 1000, 1000);
    model::SortOrder sort = model::sortParam(q, {"date"}, {"date", false});
    model::filterParams(q, {});
    model::cursorParams(q, false);
    co_return okListing(unwrap(co_await svc.resourceHistory(env, stringParam(req, "rid"))), sort, limit);
  });
  // The deploy log of one resource (the reference's resource_logs): filters action (one of the action
  // types), message (substring), minimal_log_level and timestamp ([ge:|gt:|le:|lt:]<time>, repeatable).
  add(V::get, "/api/v2/resource/<rid>/logs", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    static const std::vector<std::string> kLevels = {"TRACE",   "DEBUG", "INFO",
                                                     "WARNING", "ERROR", "CRITICAL"};
    const model::QueryPairs& q = req.queryAll;
    int64_t limit = model::limitParam(q, 1000, 1000);
    model::SortOrder sort = model::sortParam(q, {"timestamp"}, {"timestamp", false});
    auto filters = model::filterParams(q, {"action", "message", "minimal_log_level", "timestamp"});
    model::checkFilterValues(filters, "action", model::spellings(model::kActionKinds));
    model::checkFilterValues(filters, "minimal_log_level", kLevels);
    model::cursorParams(q, false);
    std::vector<model::TimeBound> bounds;
    for (const auto& t : filters["timestamp"]) bounds.push_back(model::timeBound(t, "filter.timestamp"));
    auto rank = [&](const std::string& level) {
      auto it = std::find(kLevels.begin(), kLevels.end(), level);
      return it == kLevels.end() ? 2 : int(it - kLevels.begin());
    };
    int minRank = 0;
    for (const auto& l : filters["minimal_log_level"]) minRank = std::max(minRank, rank(l));
    const std::vector<std::string>& actions = filters["action"];
    const std::vector<std::string>& messages = filters["message"];
    nlohmann::json lines = unwrap(co_await svc.resourceLogs(env, stringParam(req, "rid")));
    nlohmann::json kept = nlohmann::json::array();
    for (auto& l : lines) {
      if (!actions.empty() &&
          std::find(actions.begin(), actions.end(), l.value("action", "")) == actions.end())
        continue;
      std::string msg = l.value("msg", "");
      if (!std::all_of(messages.begin(), messages.end(),
                       [&](const std::string& m) { return msg.find(m) != std::string::npos; }))
        continue;
      if (rank(l.value("level", "INFO")) < minRank) continue;
      if (!bounds.empty()) {
        std::string at =
            model::timestampKey(l["timestamp"].is_string() ? l["timestamp"].get<std::string>() : "");
        bool in = std::all_of(bounds.begin(), bounds.end(), [&](const model::TimeBound& b) {
          std::string k = model::timestampKey(b.value);
          return b.op == "ge"   ? at >= k
                 : b.op == "gt" ? at > k
                 : b.op == "le" ? at <= k
                 : b.op == "lt" ? at < k
                                : at == k;
        });
        if (!in) continue;
      }
      kept.push_back(std::move(l));
    }
    co_return okListing(std::move(kept), sort, limit);
  });
  add(V::get, "/api/v2/resource/<rid>/facts", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    co_return okData(unwrap(co_await svc.parameters(env, stringParam(req, "rid"))));
  });
  add(V::get, "/api/v1/resource/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    std::string id = stringParam(req, "id");
    bool logs = boolParam(req, "logs", false);
    co_return ok(unwrap(co_await svc.resourceV1(env, id, logs)));
  });

  // Parameters and facts.
  add(V::get, "/api/v1/parameter/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req), name = stringParam(req, "id");
        std::string rid = optStringParam(req, "resource_id").value_or("");
        nlohmann::json p = unwrap(co_await svc.getParameter(env, name, rid));
        co_return ok({{"parameter", std::move(p)}});
      },
      {"api", "agent", "compiler"});
  add(V::put, "/api/v1/parameter/<id>",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        nlohmann::json p = paramValue(req);
        p["name"] = stringParam(req, "id");
        nlohmann::json stored = unwrap(co_await svc.setParameter(env, p));
        co_return ok({{"parameter", stored}});
      },
      {"api", "agent", "compiler"});
  add(V::delete_, "/api/v1/parameter/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req), name = stringParam(req, "id");
    std::string rid = optStringParam(req, "resource_id").value_or("");
    unwrap(co_await svc.deleteParameter(env, name, rid));
    co_return Reply{};
  });
  add(V::post, "/api/v1/parameter",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        nlohmann::json all = unwrap(co_await svc.parameters(env, std::nullopt));
        co_return ok({{"parameters", all}, {"expire", 1800}, {"now", nullptr}});
      },
      {"api", "compiler"});
  add(V::put, "/api/v1/parameters",
      [&svc](Request& req) -> asio::awaitable<Reply> {
        std::string env = environmentOf(req);
        auto list = findParam(req, "parameters");
        if (!list || !list->is_array()) throw ApiError{ErrorCode::BadRequest, "'parameters' must be a list"};
        for (const auto& p : *list) {
          if (!p.is_object() || !p.contains("id"))
            throw ApiError{ErrorCode::BadRequest, "each parameter needs an 'id' (its name)"};
          nlohmann::json q = p;
          q["name"] = p["id"];
          unwrap(co_await svc.setParameter(env, q));
        }
        co_return Reply{};
      },
      {"api", "agent", "compiler"});
  for (const char* path : {"/api/v2/parameters", "/api/v2/facts"}) {
    bool facts = std::string(path).find("facts") != std::string::npos;
    add(V::get, path, [&svc, facts](Request& req) -> asio::awaitable<Reply> {
      std::string env = environmentOf(req);
      const model::QueryPairs& q = req.queryAll;
      int64_t limit = model::limitParam(q, 1000, 1000);
      model::SortOrder sort =
          model::sortParam(q, {"name", "resource_id", "source", "updated"}, {"name", true});
      auto filters = model::filterParams(q, {"name", "resource_id", "source"});
      model::checkFilterValues(filters, "source", {"fact", "plugin", "user", "report"});
      model::cursorParams(q, false);
      nlohmann::json all = unwrap(co_await svc.parameters(env, std::nullopt));
      nlohmann::json kept = nlohmann::json::array();
      for (auto& p : all) {
        if ((p["source"] == "fact") != facts) continue;
        if (!matchesFilters(p, filters)) continue;
        kept.push_back(p);
      }
      co_return okListing(std::move(kept), sort, limit);
    });
  }

  // Agents.
  add(V::get, "/api/v2/agents", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    const model::QueryPairs& q = req.queryAll;
    int64_t limit = model::limitParam(q, 1000, 1000);
    model::SortOrder sort = model::sortParam(q, {"name", "status", "paused"}, {"name", true});
    auto filters = model::filterParams(q, {"name", "status"});
    model::checkFilterValues(filters, "status", {"paused", "up", "down"});
    model::cursorParams(q, false);
    nlohmann::json kept = nlohmann::json::array();
    for (auto& a : unwrap(co_await svc.agents(env)))
      if (matchesFilters(a, filters)) kept.push_back(a);
    co_return okListing(std::move(kept), sort, limit);
  });
  // The v1 listing Inmanta 11.5.5's `inmanta-cli agent list` reads: {"agents": [...]}.
  add(V::get, "/api/v1/agent", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    nlohmann::json body = nlohmann::json::object(); // (no braced init around co_await: GCC 12 rejects it)
    body["agents"] = unwrap(co_await svc.agents(env));
    co_return ok(std::move(body));
  });
  add(V::post, "/api/v2/agent/<name>/<action>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    unwrap(co_await svc.agentAction(env, stringParam(req, "name"), stringParam(req, "action")));
    co_return Reply{};
  });
  add(V::post, "/api/v2/agents/<action>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    unwrap(co_await svc.agentAction(env, std::nullopt, stringParam(req, "action")));
    co_return Reply{};
  });

  // Deploy and repair: without arguments POST /api/v1/deploy is a repair (orchestrator.md §17.10).
  add(V::post, "/api/v1/deploy", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    std::string method = optStringParam(req, "agent_trigger_method").value_or("push_full_deploy");
    if (method != "push_full_deploy" && method != "push_incremental_deploy")
      throw ApiError{ErrorCode::BadRequest,
                     "'agent_trigger_method' must be push_full_deploy or push_incremental_deploy"};
    auto agents = findParam(req, "agents");
    nlohmann::json agentList = agents ? *agents : nlohmann::json();
    bool repair = method == "push_full_deploy";
    unwrap(co_await svc.deploy(env, std::move(agentList), repair));
    co_return Reply{};
  });
  add(V::post, "/api/v2/deploy_filtered", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    auto agents = findParam(req, "agents");
    nlohmann::json agentList = agents ? *agents : nlohmann::json();
    bool repair = boolParam(req, "repair", false);
    unwrap(co_await svc.deploy(env, std::move(agentList), repair));
    co_return Reply{};
  });

  // Dry runs.
  for (const char* path : {"/api/v2/dryrun/<id>", "/api/v1/dryrun/<id>"}) {
    bool v1 = std::string(path).find("/v1/") != std::string::npos;
    add(V::post, path, [&svc, v1](Request& req) -> asio::awaitable<Reply> {
      std::string env = environmentOf(req);
      nlohmann::json row = unwrap(co_await svc.createDryrun(env, intParam(req, "id")));
      if (v1) co_return ok({{"dryrun", row}});
      co_return okData(std::move(row));
    });
  }
  add(V::get, "/api/v2/dryrun/<version>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    co_return okData(unwrap(co_await svc.dryruns(env, intParam(req, "version"))));
  });
  add(V::get, "/api/v2/dryrun/<version>/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    nlohmann::json row = unwrap(co_await svc.dryrun(env, stringParam(req, "id")));
    if (row["model"].get<int64_t>() != intParam(req, "version"))
      throw ApiError{ErrorCode::NotFound, "dry run " + stringParam(req, "id") + " is not of version " +
                                              std::to_string(intParam(req, "version"))};
    addDryrunReport(row);
    co_await addContentDiffs(svc, row["diff"], "current", "desired");
    co_return okData(std::move(row));
  });
  add(V::get, "/api/v1/dryrun", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    auto v = findParam(req, "version");
    std::optional<int64_t> version;
    if (v) version = intParam(req, "version");
    nlohmann::json rows = unwrap(co_await svc.dryruns(env, version));
    co_return ok({{"dryruns", rows}});
  });
  add(V::get, "/api/v1/dryrun/<id>", [&svc](Request& req) -> asio::awaitable<Reply> {
    std::string env = environmentOf(req);
    nlohmann::json row = unwrap(co_await svc.dryrun(env, stringParam(req, "id")));
    co_return ok({{"dryrun", row}});
  });
}

} // namespace inm::api

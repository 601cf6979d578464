// Use cases for resources, parameters/facts, agents, deploys and dry runs (see Service.h). Listing filters,
// sorts and pages in memory over the environment's current resources (one row per resource id).
#include "Util.h"
#include "artifact/ResourceId.h"
#include "model/Ids.h"
#include "model/QueryParams.h"
#include "model/Vocabulary.h"
#include "service/Service.h"

#include <algorithm>
#include <cctype>

namespace inm::service {

using model::ErrorCode;

namespace {

Result fromExpected(llvm::Expected<nlohmann::json> v) {
  if (!v) return Result::error(v.takeError());
  return Result::of(std::move(*v));
}

std::string idAttribute(const std::string& rid) {
  llvm::Expected<artifact::ResourceId> id = artifact::parseResourceId(rid);
  if (!id) {
    llvm::consumeError(id.takeError());
    return "";
  }
  return id->attribute;
}

std::string urlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

nlohmann::json listItem(const nlohmann::json& r) {
  std::string rid = r["resource_id"];
  return {{"resource_id", rid},
          {"resource_version_id", model::resourceVersionId(rid, r["model"].get<int64_t>())},
          {"id_details",
           {{"resource_type", r["resource_type"]},
            {"agent", r["agent"]},
            {"attribute", idAttribute(rid)},
            {"resource_id_value", r["resource_id_value"]}}},
          {"requires", r["requires"]},
          {"status", r["status"]}};
}

} // namespace

asio::awaitable<Result> Service::listResources(std::string env, model::QueryPairs query) {
  env = lowerUuid(env);
  int64_t limit = 1000; // the reference's defaults: a page of 1000, sort resource_type.desc
  model::SortOrder sort{"resource_type", false};
  std::map<std::string, std::vector<std::string>> filters;
  model::PageCursor cursor;
  bool deploySummary = false;
  static const std::vector<std::string> kSortFields = {"resource_type", "agent", "resource_id_value",
                                                       "status"};
  try {
    limit = model::limitParam(query, 1000, 1000);
    sort = model::sortParam(query, kSortFields, sort);
    filters = model::filterParams(query, kSortFields);
    model::checkFilterValues(filters, "status", model::referenceStatusSpellings(),
                             /*negatable=*/true);
    cursor = model::cursorParams(query, true);
    if (auto ds = model::singleParam(query, "deploy_summary"))
      deploySummary = model::parseBoolean(*ds, "deploy_summary");
    for (const auto& id : {cursor.lastId, cursor.firstId})
      if (id) {
        llvm::Expected<artifact::ResourceId> parsed = artifact::parseResourceId(*id);
        if (!parsed)
          throw model::ParamError{std::string(cursor.lastId ? "'last_id'" : "'first_id'") +
                                  " is not a resource id: " + llvm::toString(parsed.takeError())};
      }
  } catch (const model::ParamError& e) {
    co_return Result::error(ErrorCode::BadRequest, e.message);
  }
  // The database filters, orders, counts and cuts the page (keyset paging on (sort value, resource id)); only
  // the page's rows come back.
  store::ResourcePageQuery pq;
  pq.sortField = sort.field;
  pq.ascending = sort.ascending;
  pq.limit = limit;
  pq.deploySummary = deploySummary;
  // Status filters: any positive value matches (a list is an OR), every negated one must not.
  for (const auto& [field, values] : filters) {
    if (field != "status") {
      pq.substrings.emplace_back(field, values); // substring match; several values of one filter: any of them
      continue;
    }
    for (const std::string& v : values)
      (v[0] == '!' ? pq.statusOut : pq.statusIn).push_back(v.substr(v[0] == '!'));
  }
  // The cursor's sort value: `start`/`end` when given, else the cursor resource's own value (the columns an
  // id holds are read from it; status from the listing, by the database).
  const std::optional<std::string>& cursorId = cursor.forward() ? cursor.lastId : cursor.firstId;
  if (cursor.forward() || cursor.backward()) {
    pq.direction = cursor.forward() ? 1 : -1;
    pq.cursorId = cursorId;
    pq.cursorValue = cursor.forward() ? cursor.start : cursor.end;
    if (!pq.cursorValue && sort.field != "status") {
      llvm::Expected<artifact::ResourceId> parsed = artifact::parseResourceId(*cursorId);
      if (!parsed) co_return Result::error(parsed.takeError()); // checked above: unreachable
      pq.cursorValue = sort.field == "resource_type" ? parsed->type
                       : sort.field == "agent"       ? parsed->agent
                                                     : parsed->value;
    }
  }
  auto page = co_await blocking([&] { return store_.resourcePage(env, pq); });
  if (!page) co_return Result::error(page.takeError());
  const std::string& sortField = sort.field;
  if (pq.direction != 0 && !(*page)["cursor_known"].get<bool>()) {
    const char* name = pq.direction > 0 ? "'last_id'" : "'first_id'";
    co_return Result::error(ErrorCode::BadRequest, std::string(name) + " " + *cursorId +
                                                       " is not in this listing and sort on " + sortField +
                                                       " needs its value: give '" +
                                                       (pq.direction > 0 ? "start" : "end") + "' with it");
  }
  const nlohmann::json& rows = (*page)["rows"];
  size_t total = (*page)["total"].get<size_t>(), past = (*page)["past"].get<size_t>();
  size_t begin = 0, end = rows.size();
  if (pq.direction > 0) {
    begin = total - past; // the rows after the cursor are the last `past` of the listing
    end = begin + rows.size();
  } else if (pq.direction < 0) {
    end = past; // the rows before the cursor; the page is the last `limit` of them (in reverse order here)
    begin = end - rows.size();
  }
  nlohmann::json data = nlohmann::json::array();
  for (size_t i = 0; i < rows.size(); ++i)
    data.push_back(listItem(rows[pq.direction < 0 ? rows.size() - 1 - i : i]));
  auto keyOf = [&](const nlohmann::json& item) {
    const nlohmann::json& details = item["id_details"];
    const std::string& v = sortField == "status" ? item["status"].get_ref<const std::string&>()
                                                 : details[sortField].get_ref<const std::string&>();
    return std::make_pair(v, item["resource_id"].get<std::string>());
  };
  std::string base = "/api/v2/resource?limit=" + std::to_string(limit) + "&sort=" + sortField + "." +
                     (sort.ascending ? "asc" : "desc");
  for (const auto& [field, values] : filters)
    for (const auto& v : values) base += "&filter." + field + "=" + urlEncode(v);
  if (deploySummary) base += "&deploy_summary=true";
  nlohmann::json links = {{"self", base}};
  if (end > 0 && end < total) { // end > begin here: limit >= 1
    auto [v, id] = keyOf(data.back());
    links["next"] = base + "&start=" + urlEncode(v) + "&last_id=" + urlEncode(id);
  }
  if (begin > 0 && begin < total) {
    auto [v, id] = keyOf(data.front());
    links["prev"] = base + "&end=" + urlEncode(v) + "&first_id=" + urlEncode(id);
  }
  nlohmann::json metadata = {
      {"total", total}, {"before", begin}, {"after", total - end}, {"page_size", limit}};
  if (deploySummary) {
    nlohmann::json byState = nlohmann::json::object();
    for (const std::string& s : model::referenceStatusSpellings()) byState[s] = 0;
    int64_t summed = 0;
    for (const auto& [status, n] : (*page)["summary"].items()) {
      byState[status] = n;
      summed += n.get<int64_t>();
    }
    metadata["deploy_summary"] = {{"by_state", byState}, {"total", summed}};
  }
  co_return Result::of(nlohmann::json{{"data", data}, {"links", links}, {"metadata", metadata}});
}

asio::awaitable<Result> Service::resourceDetails(std::string env, std::string rid) {
  auto d = co_await blocking([&] { return store_.resourceDetails(lowerUuid(env), rid); });
  if (!d) co_return Result::error(d.takeError());
  nlohmann::json& r = *d;
  nlohmann::json attrs = r["attributes"];
  co_return Result::of(nlohmann::json{{"resource_id", rid},
                                      {"resource_type", r["resource_type"]},
                                      {"agent", r["agent"]},
                                      {"id_attribute", idAttribute(rid)},
                                      {"id_attribute_value", r["resource_id_value"]},
                                      {"last_deploy", r["last_deploy"]},
                                      {"first_generated_time", r["first_generated_time"]},
                                      {"first_generated_version", r["first_generated_version"]},
                                      {"attributes", attrs},
                                      {"status", r["status"]},
                                      {"requires_status", r["requires_status"]},
                                      {"version", r["model"]}});
}

asio::awaitable<Result> Service::resourceHistory(std::string env, std::string rid) {
  co_return fromExpected(co_await blocking([&] { return store_.resourceHistory(lowerUuid(env), rid); }));
}

asio::awaitable<Result> Service::resourceLogs(std::string env, std::string rid) {
  auto actions = co_await blocking([&] { return store_.resourceActions(lowerUuid(env), rid); });
  if (!actions) co_return Result::error(actions.takeError());
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& a : *actions)
    for (const auto& m : a["messages"]) {
      nlohmann::json line = {{"action_id", a["action_id"]},
                             {"action", a["action"]},
                             {"timestamp", m.value("timestamp", nlohmann::json())},
                             {"level", m.value("level", "INFO")},
                             {"msg", m.value("msg", "")},
                             {"args", m.value("args", nlohmann::json::array())},
                             {"kwargs", m.value("kwargs", nlohmann::json::object())}};
      lines.push_back(std::move(line));
    }
  std::stable_sort(lines.begin(), lines.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["timestamp"].dump() > b["timestamp"].dump();
  });
  co_return Result::of(std::move(lines));
}

asio::awaitable<Result> Service::resourceV1(std::string env, std::string rvid, bool logs) {
  env = lowerUuid(env);
  llvm::Expected<artifact::ResourceId> id = artifact::parseResourceId(rvid);
  if (!id)
    co_return Result::error(ErrorCode::BadRequest,
                            "'id' is not a resource version id: " + llvm::toString(id.takeError()));
  std::string rid =
      artifact::stripVersion(rvid).str(); // the text as stored (VersionBody: ids are kept as sent)
  auto d = co_await blocking([&] { return store_.resourceDetails(env, rid); });
  if (!d) co_return Result::error(d.takeError());
  int64_t version = id->hasVersion ? id->version : (*d)["model"].get<int64_t>();
  nlohmann::json resource = {{"environment", env},
                             {"model", version},
                             {"resource_id", rid},
                             {"resource_version_id", model::resourceVersionId(rid, version)},
                             {"resource_type", (*d)["resource_type"]},
                             {"agent", (*d)["agent"]},
                             {"resource_id_value", (*d)["resource_id_value"]},
                             {"attributes", (*d)["attributes"]},
                             {"status", (*d)["status"]},
                             {"last_deploy", (*d)["last_deploy"]}};
  nlohmann::json out = {{"resource", resource}};
  if (logs) {
    auto actions = co_await blocking([&] { return store_.resourceActions(env, rid); });
    if (!actions) co_return Result::error(actions.takeError());
    out["logs"] = std::move(*actions);
  }
  co_return Result::of(std::move(out));
}

asio::awaitable<Result> Service::parameters(std::string env, std::optional<std::string> rid) {
  co_return fromExpected(co_await blocking([&] { return store_.parameters(lowerUuid(env), rid); }));
}

bool Service::mayRequestFacts(const std::string& env, const std::string& rid) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(factMutex_);
  auto [it, fresh] = factAsked_.try_emplace(env + "\n" + rid, now);
  if (!fresh && now - it->second < std::chrono::seconds(options_.factResourceBlock)) return false;
  it->second = now;
  return true;
}

asio::awaitable<Result> Service::getParameter(std::string env, std::string name, std::string rid) {
  env = lowerUuid(env);
  auto found =
      co_await blocking([&] { return store_.parameterFreshness(env, name, rid, options_.factExpire); });
  if (!found) co_return Result::error(found.takeError());
  const nlohmann::json& row = (*found)["parameter"];
  if (!row.is_null() && (rid.empty() || (*found)["fresh"].get<bool>())) co_return Result::of(row);
  std::string what = "parameter " + name + (rid.empty() ? "" : " of " + rid);
  if (rid.empty()) co_return Result::error(model::ErrorCode::NotFound, what + " not found");
  if (mayRequestFacts(env, rid))
    if (llvm::Error e = co_await blocking([&] { return store_.requestFacts(env, {rid}); }))
      co_return Result::error(std::move(e));
  co_return Result::error(model::ErrorCode::Unavailable,
                          what + (row.is_null() ? " is not known yet" : " has expired") +
                              "; its facts were requested from the agent");
}

asio::awaitable<Result> Service::renewFacts() {
  int64_t olderThan = std::max<int64_t>(0, options_.factExpire - options_.factRenew);
  auto due = co_await blocking([&] { return store_.factsToRenew(olderThan); });
  if (!due) co_return Result::error(due.takeError());
  std::map<std::string, std::vector<std::string>> byEnv;
  for (const auto& pair : *due) {
    std::string env = pair[0], rid = pair[1];
    if (mayRequestFacts(env, rid)) byEnv[env].push_back(rid);
  }
  int64_t asked = 0;
  for (auto& envRids : byEnv) {
    // Named references, not a structured binding: clang-14 (the style phase's clang-tidy) cannot capture one.
    const std::string& env = envRids.first;
    const std::vector<std::string>& rids = envRids.second;
    if (llvm::Error e = co_await blocking([&] { return store_.requestFacts(env, rids); }))
      co_return Result::error(std::move(e));
    asked += int64_t(rids.size());
  }
  co_return Result::of(asked);
}

asio::awaitable<Result> Service::setParameter(std::string env, nlohmann::json param) {
  static const char* sources[] = {"fact", "plugin", "user", "report"};
  std::string source = param.value("source", "user");
  if (std::find(std::begin(sources), std::end(sources), source) == std::end(sources))
    co_return Result::error(ErrorCode::BadRequest,
                            "'source' must be one of fact, plugin, user, report; got " + source);
  if (!param.contains("value")) co_return Result::error(ErrorCode::BadRequest, "'value' is required");
  if (!param["value"].is_string()) param["value"] = param["value"].dump();
  if (param.contains("resource_id") && param["resource_id"].is_string() &&
      !param["resource_id"].get<std::string>().empty())
    param["resource_id"] =
        std::string(model::withoutVersion(param["resource_id"].get_ref<const std::string&>()));
  co_return fromExpected(co_await blocking([&] { return store_.setParameter(lowerUuid(env), param); }));
}

asio::awaitable<Result> Service::deleteParameter(std::string env, std::string name, std::string rid) {
  llvm::Error e = co_await blocking([&] { return store_.deleteParameter(lowerUuid(env), name, rid); });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::agents(std::string env) {
  env = lowerUuid(env);
  auto rows = co_await blocking([&] { return store_.agents(env); });
  if (!rows) co_return Result::error(rows.takeError());
  bool up = scheduler_ && scheduler_->running(env);
  for (auto& a : *rows) {
    // An external agent is up while its `inmanta agent` session holds it (docs/deploy.md "External agents").
    bool live = a.value("external", false) ? a.value("connected", false) : up;
    a["status"] = a["paused"].get<bool>() ? "paused" : live ? "up" : "down";
  }
  co_return Result::of(std::move(*rows));
}

asio::awaitable<Result> Service::agentAction(std::string env, std::optional<std::string> name,
                                             std::string action) {
  llvm::Error e = co_await blocking([&] { return store_.agentAction(lowerUuid(env), name, action); });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::deploy(std::string env, nlohmann::json agents, bool repair) {
  if (!agents.is_null() && !agents.is_array())
    co_return Result::error(ErrorCode::BadRequest, "'agents' must be a list of agent names");
  llvm::Error e = co_await blocking([&] {
    return store_.requestScheduler(lowerUuid(env), model::SchedulerRequestKind::Deploy,
                                   {{"agents", agents}, {"repair", repair}});
  });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::createDryrun(std::string env, int64_t version) {
  co_return fromExpected(co_await blocking([&] { return store_.createDryrun(lowerUuid(env), version); }));
}

asio::awaitable<Result> Service::dryruns(std::string env, std::optional<int64_t> version) {
  co_return fromExpected(co_await blocking([&] { return store_.dryruns(lowerUuid(env), version); }));
}

asio::awaitable<Result> Service::dryrun(std::string env, std::string id) {
  if (!isUuid(id)) co_return Result::error(ErrorCode::BadRequest, "'id' is not a uuid: " + id);
  co_return fromExpected(co_await blocking([&] { return store_.dryrun(lowerUuid(env), lowerUuid(id)); }));
}

} // namespace inm::service

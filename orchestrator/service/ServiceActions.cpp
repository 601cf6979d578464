// Use cases for the action log query, the handler helpers (events, did_dependency_change), the compliance
// report, the scheduler's status, single facts, revocable tokens and the retention timer (see Service.h).
#include "Util.h"
#include "artifact/ResourceId.h"
#include "model/Ids.h"
#include "model/QueryParams.h"
#include "model/Settings.h"
#include "model/Vocabulary.h"
#include "service/Log.h"
#include "service/Service.h"

#include <algorithm>
#include <cctype>

namespace inm::service {

using model::ErrorCode;

namespace {

constexpr int64_t kApiLimit = 1000;

Result fromExpected(llvm::Expected<nlohmann::json> v) {
  if (!v) return Result::error(v.takeError());
  return Result::of(std::move(*v));
}

/// An ISO 8601 date-time as the API hands out (`2026-01-01T00:00:01.000000+00:00`); loose check of the shape,
/// PostgreSQL parses the rest.
bool looksLikeTimestamp(const std::string& s) {
  if (s.size() < 10) return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  if (s[4] != '-' || s[7] != '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '.' || c == '+' ||
           c == ' ';
  });
}

std::string urlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += char(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// Splits a resource version id (NotFound-free: BadRequest naming the parameter when it is not one).
llvm::Expected<std::pair<std::string, int64_t>> splitRvid(const std::string& rvid) {
  llvm::Expected<model::ResourceVersionId> id = model::ResourceVersionId::parse(rvid);
  if (!id) return model::fail(ErrorCode::BadRequest, "'rvid': " + llvm::toString(id.takeError()));
  return std::make_pair(std::string(id->resourceId()), id->version().value);
}

} // namespace

asio::awaitable<Result> Service::resourceActions(std::string env, std::map<std::string, std::string> query,
                                                 std::vector<std::string> excludeChanges) {
  env = lowerUuid(env);
  store::ActionQuery q;
  auto get = [&](const char* k) {
    auto it = query.find(k);
    return it == query.end() ? std::string() : it->second;
  };
  q.resourceType = get("resource_type");
  q.agent = get("agent");
  q.attribute = get("attribute");
  q.attributeValue = get("attribute_value");
  q.logSeverity = get("log_severity");
  for (char& c : q.logSeverity) c = char(std::toupper(static_cast<unsigned char>(c)));
  q.firstTimestamp = get("first_timestamp");
  q.lastTimestamp = get("last_timestamp");
  q.actionId = get("action_id");
  if (q.attribute.empty() != q.attributeValue.empty())
    co_return Result::error(ErrorCode::BadRequest,
                            "'attribute' and 'attribute_value' must be given together (got attribute='" +
                                q.attribute + "', attribute_value='" + q.attributeValue + "')");
  if (!q.firstTimestamp.empty() && !q.lastTimestamp.empty())
    co_return Result::error(ErrorCode::BadRequest, "give only one of 'first_timestamp' and 'last_timestamp'");
  if (!q.actionId.empty() && q.firstTimestamp.empty() && q.lastTimestamp.empty())
    co_return Result::error(ErrorCode::BadRequest, "'action_id' needs 'first_timestamp' or 'last_timestamp'");
  if (!q.actionId.empty()) {
    if (!isUuid(q.actionId))
      co_return Result::error(ErrorCode::BadRequest, "'action_id' is not a uuid: " + q.actionId);
    q.actionId = lowerUuid(q.actionId);
  }
  for (const char* k : {"first_timestamp", "last_timestamp"})
    if (std::string v = get(k); !v.empty() && !looksLikeTimestamp(v))
      co_return Result::error(ErrorCode::BadRequest,
                              std::string("'") + k + "' is not an ISO 8601 timestamp: " + v);
  static const char* severities[] = {"", "TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};
  if (std::find(std::begin(severities), std::end(severities), q.logSeverity) == std::end(severities))
    co_return Result::error(
        ErrorCode::BadRequest,
        "'log_severity' must be one of TRACE, DEBUG, INFO, WARNING, ERROR, CRITICAL; got " +
            get("log_severity"));
  for (const auto& c : excludeChanges)
    if (!model::parseChange(c)) {
      std::vector<std::string> names = model::spellings(model::kChanges);
      std::string expected;
      for (size_t i = 0; i < names.size(); ++i)
        expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
      co_return Result::error(ErrorCode::BadRequest,
                              "'exclude_changes' holds '" + c + "': expected " + expected);
    }
  q.excludeChanges = excludeChanges;
  q.limit = kApiLimit;
  if (std::string l = get("limit"); !l.empty()) {
    try {
      q.limit = model::parseInteger(l, "limit");
    } catch (const model::ParamError& e) {
      co_return Result::error(ErrorCode::BadRequest, e.message);
    }
    if (q.limit < 0 || q.limit > kApiLimit)
      co_return Result::error(ErrorCode::BadRequest,
                              "'limit' must be between 0 and " + std::to_string(kApiLimit) + ", got " + l);
    if (q.limit == 0) q.limit = kApiLimit;
  }
  auto rows = co_await blocking([&] { return store_.queryActions(env, q); });
  if (!rows) co_return Result::error(rows.takeError());
  nlohmann::json links = nlohmann::json::object();
  if (!rows->empty()) {
    std::string base = "/api/v2/resource_actions?limit=" + std::to_string(q.limit);
    for (const char* k : {"resource_type", "agent", "attribute", "attribute_value", "log_severity"})
      if (std::string v = get(k); !v.empty()) base += std::string("&") + k + "=" + urlEncode(v);
    for (const auto& c : excludeChanges) base += "&exclude_changes=" + c;
    const nlohmann::json& last = rows->back();
    const nlohmann::json& first = rows->front();
    links["next"] = base + "&last_timestamp=" + urlEncode(last["started"].get<std::string>()) +
                    "&action_id=" + last["action_id"].get<std::string>();
    links["prev"] = base + "&first_timestamp=" + urlEncode(first["started"].get<std::string>()) +
                    "&action_id=" + first["action_id"].get<std::string>();
  }
  co_return Result::of(nlohmann::json{{"data", std::move(*rows)}, {"links", links}});
}

asio::awaitable<Result> Service::resourceEvents(std::string env, std::string rvid) {
  env = lowerUuid(env);
  auto id = splitRvid(rvid);
  if (!id) co_return Result::error(id.takeError());
  co_return fromExpected(
      co_await blocking([&] { return store_.dependencyEvents(env, id->first, id->second); }));
}

asio::awaitable<Result> Service::didDependencyChange(std::string env, std::string rvid) {
  Result events = co_await resourceEvents(env, rvid);
  if (!events.ok) co_return events;
  bool changed = false;
  for (const auto& [dep, actions] : events.value.items())
    for (const auto& a : actions)
      if (a["change"].is_string() &&
          !model::is(a["change"].get_ref<const std::string&>(), model::Change::NoChange))
        changed = true;
  co_return Result::of(changed);
}

asio::awaitable<Result> Service::complianceReport(std::string env, std::vector<std::string> rids) {
  env = lowerUuid(env);
  for (auto& r : rids) {
    llvm::Expected<artifact::ResourceId> id = artifact::parseResourceId(r);
    if (!id)
      co_return Result::error(ErrorCode::BadRequest,
                              "'resource_ids' holds " + r + ": " + llvm::toString(id.takeError()));
    r = artifact::stripVersion(r).str(); // the text as stored (ids are kept as sent)
  }
  co_return fromExpected(co_await blocking([&] { return store_.complianceReport(env, rids); }));
}

asio::awaitable<Result> Service::schedulerStatus(std::string env) {
  env = lowerUuid(env);
  auto s = co_await blocking([&] { return store_.schedulerStatus(env); });
  if (!s) co_return Result::error(s.takeError());
  nlohmann::json& out = *s;
  bool running = scheduler_ && scheduler_->running(env);
  out["scheduler_running"] = running;
  // What the database shows the scheduler has not caught up with.
  nlohmann::json discrepancies = nlohmann::json::array();
  const nlohmann::json& processed = out["last_processed_model_version"];
  const nlohmann::json& released = out["latest_released_version"];
  if (released.is_number() && (!processed.is_number() || processed.get<int64_t>() < released.get<int64_t>()))
    discrepancies.push_back(
        {{"kind", "version_not_processed"},
         {"message", "version " + released.dump() + " is released, the scheduler has processed " +
                         (processed.is_number() ? "version " + processed.dump() : std::string("none"))}});
  if (out["pending_requests"].get<int64_t>() > 0 && !running)
    discrepancies.push_back({{"kind", "requests_waiting"},
                             {"message", out["pending_requests"].dump() +
                                             " request(s) wait for a scheduler that is not running"}});
  if (released.is_number() && !running && !out["halted"].get<bool>())
    discrepancies.push_back({{"kind", "scheduler_down"},
                             {"message", "the environment has a released version but no running scheduler"}});
  out["discrepancies"] = std::move(discrepancies);
  co_return Result::of(std::move(out));
}

asio::awaitable<Result> Service::fact(std::string env, std::string rid, std::string idOrName) {
  env = lowerUuid(env);
  std::optional<std::string> filter;
  if (!rid.empty()) filter = artifact::stripVersion(rid).str();
  auto all = co_await blocking([&] { return store_.parameters(env, filter); });
  if (!all) co_return Result::error(all.takeError());
  std::string lowered = isUuid(idOrName) ? lowerUuid(idOrName) : idOrName;
  for (const auto& p : *all)
    if (p["source"] == "fact" && (p["id"] == lowered || p["name"] == idOrName)) co_return Result::of(p);
  co_return Result::error(ErrorCode::NotFound,
                          "fact " + idOrName + (rid.empty() ? "" : " of " + rid) + " not found");
}

asio::awaitable<Result> Service::issueToken(std::string env, std::vector<std::string> clientTypes,
                                            int64_t expireSeconds) {
  env = lowerUuid(env);
  std::string jti = newUuid();
  llvm::Error e = co_await blocking([&] { return store_.recordToken(jti, env, clientTypes, expireSeconds); });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(jti);
}

asio::awaitable<Result> Service::tokenUsable(std::string jti) {
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(tokenMutex_);
    auto it = tokenCache_.find(jti);
    if (it != tokenCache_.end() && now - it->second.second < kTokenCacheTtl)
      co_return Result::of(it->second.first);
  }
  auto revoked = co_await blocking([&] { return store_.tokenRevoked(jti); });
  if (!revoked) co_return Result::error(revoked.takeError());
  bool usable = revoked->has_value() && !**revoked;
  std::lock_guard<std::mutex> lock(tokenMutex_);
  if (tokenCache_.size() > 10000) tokenCache_.clear(); // bound the cache; entries are cheap to refetch
  tokenCache_[jti] = {usable, now};
  co_return Result::of(usable);
}

asio::awaitable<Result> Service::revokeToken(std::string env, std::string jti) {
  env = lowerUuid(env);
  llvm::Error e = co_await blocking([&] { return store_.revokeToken(env, jti); });
  if (e) co_return Result::error(std::move(e));
  {
    std::lock_guard<std::mutex> lock(tokenMutex_);
    tokenCache_[jti] = {false, std::chrono::steady_clock::now()};
  }
  logLine("info", "token_revoked", {{"environment", env}, {"jti", jti}});
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::listTokens(std::string env) {
  co_return fromExpected(co_await blocking([&] { return store_.tokens(lowerUuid(env)); }));
}

asio::awaitable<Result> Service::retainVersions(std::string env) {
  env = lowerUuid(env);
  auto e = co_await blocking([&] { return store_.getEnvironment(env); });
  if (!e) co_return Result::error(e.takeError());
  int64_t keep = model::decodeEnvironmentSettings((*e)["settings"]).settings.availableVersionsToKeep;
  auto purged = co_await blocking([&] { return store_.purgeVersions(env, keep); });
  if (!purged) {
    logLine("warning", "version_purge_failed",
            {{"environment", env}, {"error", llvm::toString(purged.takeError())}});
    co_return Result::error(ErrorCode::Unavailable, "version retention failed");
  }
  if (*purged > 0)
    logLine("info", "versions_purged", {{"environment", env}, {"count", std::to_string(*purged)}});
  co_return Result::of(*purged);
}

asio::awaitable<Result> Service::purgeAllVersions() {
  auto envs = co_await blocking([&] { return store_.listEnvironments(); });
  if (!envs) co_return Result::error(envs.takeError());
  int64_t total = 0;
  for (const auto& e : *envs) {
    if (e["halted"].get<bool>()) continue;
    std::string env = e["id"];
    int64_t keep = model::decodeEnvironmentSettings(e["settings"]).settings.availableVersionsToKeep;
    auto purged = co_await blocking([&] { return store_.purgeVersions(env, keep); });
    if (!purged) {
      logLine("warning", "version_purge_failed",
              {{"environment", env}, {"error", llvm::toString(purged.takeError())}});
      continue;
    }
    if (*purged > 0)
      logLine("info", "versions_purged", {{"environment", env}, {"count", std::to_string(*purged)}});
    total += *purged;
  }
  co_return Result::of(total);
}

} // namespace inm::service

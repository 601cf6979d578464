// libpqxx implementation of the scheduler's store (see include/store/SchedulerStore.h; moved here from
// scheduler/pg/SchedulerStore.cpp, its connections opened through Connection.h like every store connection).
// Multi-row writes pass parallel text arrays and `unnest` them, so a batch of 10k results is a handful of
// statements. Every pqxx exception is caught here and returned as an llvm::Error naming the operation.
#include "Connection.h"
#include "DeployWriter.h"
#include "model/Ids.h"
#include "model/JsonNumbers.h"
#include "model/Settings.h"
#include "store/SchedulerStore.h"

#include <pqxx/pqxx>

#include <atomic>
#include <cmath>
#include <ctime>
#include <random>
#include <unistd.h>
#include <unordered_set>

namespace inm::scheduler::pg {

namespace {

llvm::Error dbError(const std::string& what, const std::exception& e) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", what.c_str(), e.what());
}

std::optional<TimePoint> fromEpoch(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  double secs = f.as<double>();
  return TimePoint{} + std::chrono::microseconds(static_cast<int64_t>(std::llround(secs * 1e6)));
}

std::string factValue(const nlohmann::json& v) {
  const nlohmann::json& x = (v.is_object() && v.contains("value")) ? v["value"] : v;
  return x.is_string() ? x.get<std::string>() : x.dump();
}

bool factExpires(const nlohmann::json& v) {
  if (v.is_object() && v.contains("expires") && v["expires"].is_boolean()) return v["expires"].get<bool>();
  return true;
}

// resource id parts: type[agent,attr=value]
void splitId(const std::string& id, std::string& type, std::string& value) {
  auto lb = id.find('[');
  type = lb == std::string::npos ? id : id.substr(0, lb);
  auto eq = id.find('=', lb == std::string::npos ? 0 : lb);
  value = eq == std::string::npos ? "" : id.substr(eq + 1, id.size() - eq - 2);
}

/// The environment generation this process started in (environment.generation, migration 008; -1 = not read
/// yet) and whether a write found the environment deleted or cleared since. Process-wide: one scheduler
/// process serves one environment, over several connections.
std::atomic<int64_t> gGeneration{-1};
std::atomic<bool> gEnvironmentGone{false};

} // namespace

std::string isoTime(TimePoint t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  time_t secs = static_cast<time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

void ArrayText::add(std::string_view item) {
  text_ += text_.empty() ? "{\"" : ",\"";
  for (char c : item) {
    if (c == '"' || c == '\\') text_ += '\\';
    text_ += c;
  }
  text_ += '"';
}

std::string ArrayText::take() {
  std::string out = text_.empty() ? std::string("{}") : std::move(text_) + "}";
  text_.clear();
  return out;
}

std::string pgArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string DbParams::connString() const {
  using store::connValue;
  std::string s = "host=" + connValue(host) + " port=" + std::to_string(port) + " dbname=" + connValue(name) +
                  " user=" + connValue(user);
  if (!password.empty()) s += " password=" + connValue(password);
  s += " connect_timeout=10 application_name='inmanta-scheduler'";
  return s;
}

struct Listener;

struct SchedulerStore::Impl {
  std::string env;
  DbParams params; // to ask a fresh connection what a commit whose answer was lost did
  std::unique_ptr<pqxx::connection> conn;
  std::unique_ptr<pqxx::notification_receiver> receiver;
  bool notified = false;
};

namespace {
struct Receiver : pqxx::notification_receiver {
  Receiver(pqxx::connection_base& c, bool& flag, std::string env)
      : pqxx::notification_receiver(c, "inmanta_scheduler"), flag_(flag), env_(std::move(env)) {}
  void operator()(const std::string& payload, int) override {
    if (payload.empty() || payload == env_) flag_ = true;
  }
  bool& flag_;
  std::string env_;
};
} // namespace

SchedulerStore::SchedulerStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchedulerStore::~SchedulerStore() = default;

llvm::Expected<std::unique_ptr<SchedulerStore>> SchedulerStore::connect(const DbParams& p,
                                                                        const std::string& env) {
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->params = p;
  try {
    impl->conn = store::openConnection(p.connString());
  } catch (const std::exception& e) {
    return dbError(
        "connecting to PostgreSQL at " + p.host + ":" + std::to_string(p.port) + " database " + p.name, e);
  }
  return std::unique_ptr<SchedulerStore>(new SchedulerStore(std::move(impl)));
}

llvm::Expected<bool> SchedulerStore::tryLockEnvironment() {
  try {
    pqxx::nontransaction tx{*impl_->conn};
    auto r = tx.exec_params("SELECT pg_try_advisory_lock(hashtextextended('inmanta-scheduler:' || $1, 0))",
                            impl_->env);
    return r[0][0].as<bool>();
  } catch (const std::exception& e) {
    return dbError("taking the scheduler lock of environment " + impl_->env, e);
  }
}

llvm::Expected<int> SchedulerStore::ensureSchedulerRow() {
  try {
    pqxx::work tx{*impl_->conn};
    auto env = tx.exec_params("SELECT generation FROM environment WHERE id = $1::uuid", impl_->env);
    if (env.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "environment %s does not exist",
                                     impl_->env.c_str());
    int64_t unread = -1;
    gGeneration.compare_exchange_strong(unread, env[0][0].as<int64_t>());
    tx.exec_params(
        "INSERT INTO scheduler (environment) VALUES ($1::uuid) ON CONFLICT (environment) DO NOTHING",
        impl_->env);
    auto r = tx.exec_params(
        "SELECT coalesce(last_processed_model_version, 0) FROM scheduler WHERE environment = $1::uuid",
        impl_->env);
    tx.commit();
    return r[0][0].as<int>();
  } catch (const std::exception& e) {
    return dbError("reading the scheduler row of environment " + impl_->env, e);
  }
}

llvm::Expected<EnvironmentInfo> SchedulerStore::loadEnvironment() {
  try {
    pqxx::read_transaction tx{*impl_->conn};
    auto r = tx.exec_params("SELECT settings::text, halted FROM environment WHERE id = $1::uuid", impl_->env);
    if (r.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "environment %s does not exist",
                                     impl_->env.c_str());
    EnvironmentInfo info;
    info.halted = r[0][1].as<bool>();
    auto decoded =
        model::decodeEnvironmentSettings(nlohmann::json::parse(r[0][0].as<std::string>(), nullptr, false));
    info.settingErrors = std::move(decoded.errors);
    const model::EnvironmentSettings& s = decoded.settings;
    const model::EnvironmentSettings& defaults = model::defaultEnvironmentSettings();
    auto timer = [&](const char* key, const std::string& text, const std::string& fallback,
                     TimerSetting& out) {
      auto t = TimerSetting::parse(key, text);
      if (t) {
        out = *t;
      } else {
        info.settingErrors.push_back(llvm::toString(t.takeError()));
        out = *TimerSetting::parse(key, fallback);
      }
    };
    timer("autostart_agent_deploy_interval", s.autostartAgentDeployInterval,
          defaults.autostartAgentDeployInterval, info.settings.deployInterval);
    timer("autostart_agent_repair_interval", s.autostartAgentRepairInterval,
          defaults.autostartAgentRepairInterval, info.settings.repairInterval);
    info.resetDeployProgressOnStart = s.resetDeployProgressOnStart;
    info.settings.agentParallelism = int(s.agentParallelism);
    if (s.autostartAgentMap.is_object())
      for (const auto& [agent, uri] : s.autostartAgentMap.items())
        info.agentUris[agent] = uri.is_string() ? uri.get<std::string>() : uri.dump();
    return info;
  } catch (const std::exception& e) {
    return dbError("reading environment " + impl_->env, e);
  }
}

llvm::Error SchedulerStore::setAgentUri(const std::string& agent, const std::optional<std::string>& uri) {
  try {
    pqxx::work tx{*impl_->conn};
    auto r = tx.exec_params("SELECT 'autostart_agent_map' = ANY(coalesce(protected_settings, '{}')) FROM "
                            "environment WHERE id = $1::uuid FOR UPDATE",
                            impl_->env);
    if (r.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "environment %s does not exist",
                                     impl_->env.c_str());
    if (r[0][0].as<bool>())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "setting 'autostart_agent_map' is protected (set by project.yml): "
                                     "std::AgentConfig cannot change it");
    // A missing or non-object map starts from the setting's default {"internal": "local:"}.
    std::string map = "CASE WHEN jsonb_typeof(settings->'autostart_agent_map') = 'object' THEN "
                      "settings->'autostart_agent_map' ELSE '{\"internal\": \"local:\"}'::jsonb END";
    if (uri)
      tx.exec_params("UPDATE environment SET settings = jsonb_set(coalesce(settings, '{}'), "
                     "'{autostart_agent_map}', (" +
                         map +
                         ") || jsonb_build_object($2::text, $3::text)) "
                         "WHERE id = $1::uuid",
                     impl_->env, agent, *uri);
    else
      tx.exec_params("UPDATE environment SET settings = jsonb_set(coalesce(settings, '{}'), "
                     "'{autostart_agent_map}', (" +
                         map + ") - $2::text) WHERE id = $1::uuid",
                     impl_->env, agent);
    tx.exec_params("INSERT INTO scheduler_request (environment, kind, payload) VALUES ($1::uuid, "
                   "'settings_changed', $2::jsonb)",
                   impl_->env, nlohmann::json{{"key", "autostart_agent_map"}, {"agent", agent}}.dump());
    tx.exec_params("SELECT pg_notify('inmanta_scheduler', $1)", impl_->env);
    tx.commit();
    return llvm::Error::success();
  } catch (const std::exception& e) {
    return dbError("setting the uri of agent " + agent + " in autostart_agent_map", e);
  }
}

llvm::Expected<std::map<std::string, bool>> SchedulerStore::loadAgents() {
  try {
    pqxx::read_transaction tx{*impl_->conn};
    std::map<std::string, bool> out;
    for (const auto& row :
         tx.exec_params("SELECT name, paused FROM agent WHERE environment = $1::uuid", impl_->env))
      out[row[0].as<std::string>()] = row[1].as<bool>();
    return out;
  } catch (const std::exception& e) {
    return dbError("reading the agents of environment " + impl_->env, e);
  }
}

namespace {

plan::Intent intentFromRow(const pqxx::row& row) {
  plan::Intent i;
  i.id = row[0].as<std::string>();
  i.agent = row[1].as<std::string>();
  i.hash = row[2].as<std::string>();
  i.undefined = row[3].as<bool>();
  // The attributes stay text until a task is dispatched; only requires and the event flags are parsed here
  // (PostgreSQL extracts them).
  i.attributesText = std::make_shared<const std::string>(row[4].as<std::string>());
  auto flag = [&](int col) -> std::optional<bool> {
    if (row[col].is_null()) return std::nullopt;
    std::string v = row[col].as<std::string>();
    if (v == "true" || v == "false") return v == "true";
    return std::nullopt;
  };
  i.sendEvent = flag(6);
  i.receiveEvents = flag(7);
  if (!i.sendEvent) i.sendEvent = false;
  if (!i.receiveEvents) i.receiveEvents = true;
  if (!row[5].is_null()) {
    auto reqs = nlohmann::json::parse(row[5].as<std::string>(), nullptr, false);
    if (reqs.is_array())
      for (const auto& r : reqs) {
        if (!r.is_string()) continue;
        i.requireIds.emplace_back(
            model::withoutVersion(r.get_ref<const std::string&>())); // tolerate versioned ids
      }
  }
  return i;
}

} // namespace

llvm::Expected<std::vector<plan::Intent>> SchedulerStore::loadVersion(int version) {
  try {
    pqxx::read_transaction tx{*impl_->conn};
    std::vector<plan::Intent> out;
    auto count = tx.exec_params("SELECT count(*) FROM resource WHERE environment = $1::uuid AND model = $2",
                                impl_->env, version);
    out.reserve(count[0][0].as<size_t>());
    // Read through a cursor, a page at a time: one result of 100k rows holds every row's text at once (tens
    // of MiB next to the intents built from it).
    tx.exec("DECLARE inm_version_rows NO SCROLL CURSOR FOR SELECT resource_id, agent, attribute_hash, "
            "is_undefined, attributes::text, attributes->'requires', attributes->'send_event', "
            "attributes->'receive_events' FROM resource WHERE environment = " +
            tx.quote(impl_->env) + "::uuid AND model = " + std::to_string(version));
    for (;;) {
      auto r = tx.exec("FETCH 5000 FROM inm_version_rows");
      for (const auto& row : r) out.push_back(intentFromRow(row));
      if (r.size() < 5000) break;
    }
    tx.exec("CLOSE inm_version_rows");
    return out;
  } catch (const std::exception& e) {
    return dbError("reading version " + std::to_string(version) + " of environment " + impl_->env, e);
  }
}

llvm::Expected<std::vector<plan::VersionSnapshot>> SchedulerStore::releasedVersionsAfter(int after) {
  std::vector<int> versions;
  try {
    pqxx::read_transaction tx{*impl_->conn};
    for (const auto& row : tx.exec_params("SELECT version FROM configurationmodel WHERE environment = "
                                          "$1::uuid AND released AND version > $2 "
                                          "ORDER BY version",
                                          impl_->env, after))
      versions.push_back(row[0].as<int>());
    std::vector<plan::VersionSnapshot> out;
    for (size_t k = 0; k + 1 < versions.size(); ++k) {
      plan::VersionSnapshot vs{versions[k], {}};
      for (const auto& row :
           tx.exec_params("SELECT resource_id FROM resource WHERE environment = $1::uuid AND model = $2",
                          impl_->env, versions[k])) {
        plan::Intent i;
        i.id = row[0].as<std::string>();
        vs.resources.push_back(std::move(i));
      }
      out.push_back(std::move(vs));
    }
    tx.commit();
    if (!versions.empty()) {
      auto full = loadVersion(versions.back());
      if (!full) return full.takeError();
      out.push_back(plan::VersionSnapshot{versions.back(), std::move(*full)});
    }
    return out;
  } catch (const std::exception& e) {
    return dbError("reading released versions of environment " + impl_->env, e);
  }
}

llvm::Expected<std::unordered_map<std::string, PersistedState>>
SchedulerStore::loadPersistedAndClearDeploying() {
  try {
    pqxx::work tx{*impl_->conn};
    // A deploy action still open belongs to a scheduler that died or stopped before its result came in (this
    // one holds the environment's lock, so that scheduler and its executors are gone): it ends `unavailable`,
    // saying why, and its resource is deployed again like any other not up to date. Such actions are those
    // of the resources still marked deploying (the start and the mark are written in one transaction).
    tx.exec_params(
        "WITH d AS (UPDATE resource_persistent_state SET is_deploying = false WHERE environment = $1::uuid "
        "AND is_deploying RETURNING resource_id) "
        "UPDATE resourceaction a SET finished = now(), status = 'unavailable', messages = (a.messages::jsonb "
        "|| "
        "jsonb_build_array(jsonb_build_object('level', 'WARNING', 'msg', 'the scheduler that ran this deploy "
        "stopped before this deploy finished (a server restart or a killed scheduler); the resource is "
        "deployed again', 'args', '[]'::jsonb, 'kwargs', '{}'::jsonb, 'timestamp', to_char(now() AT TIME "
        "ZONE "
        "'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"'))))::json "
        "FROM resourceaction_resource x JOIN d ON d.resource_id = x.resource_id "
        "WHERE x.environment = $1::uuid AND a.action_id = x.resource_action_id AND a.environment = $1::uuid "
        "AND a.action = 'deploy' AND a.finished IS NULL",
        impl_->env);
    std::unordered_map<std::string, PersistedState> out;
    auto r = tx.exec_params("SELECT resource_id, last_handler_run, last_handler_run_compliant, blocked, "
                            "last_deployed_attribute_hash, "
                            "extract(epoch from last_handler_run_at), extract(epoch from last_success), "
                            "extract(epoch from last_produced_events) FROM resource_persistent_state "
                            "WHERE environment = $1::uuid AND orphaned_after IS NULL",
                            impl_->env);
    for (const auto& row : r) {
      PersistedState p;
      p.lastHandlerRun = row[1].as<std::string>();
      if (!row[2].is_null()) p.lastHandlerRunCompliant = row[2].as<bool>();
      p.blocked = row[3].as<std::string>();
      if (!row[4].is_null()) p.lastDeployedHash = row[4].as<std::string>();
      p.lastHandlerRunAt = fromEpoch(row[5]);
      p.lastSuccess = fromEpoch(row[6]);
      p.lastProducedEvents = fromEpoch(row[7]);
      out.emplace(row[0].as<std::string>(), std::move(p));
    }
    // §6.6 reload: the newest deploy with a change per resource (did_dependency_change reads the same).
    for (const auto& row :
         tx.exec_params("SELECT x.resource_id, extract(epoch from max(a.started)) FROM resourceaction a "
                        "JOIN resourceaction_resource x ON x.resource_action_id = a.action_id AND "
                        "x.environment = a.environment "
                        "WHERE a.environment = $1::uuid AND a.action = 'deploy' AND a.change IS NOT NULL "
                        "AND a.change <> 'nochange' GROUP BY x.resource_id",
                        impl_->env)) {
      auto it = out.find(row[0].as<std::string>());
      if (it != out.end()) it->second.lastChangeStarted = fromEpoch(row[1]);
    }
    tx.commit();
    return out;
  } catch (const std::exception& e) {
    return dbError("reading resource states of environment " + impl_->env, e);
  }
}

llvm::Expected<std::vector<Request>> SchedulerStore::takeRequests() {
  std::vector<Request> out;
  bool committing = false;
  try {
    if (!impl_->conn->is_open() && !impl_->receiver) // a reader whose connection died earlier: reopen it
      impl_->conn = store::openConnection(impl_->params.connString());
    pqxx::work tx{*impl_->conn};
    for (const auto& row : tx.exec_params(
             "DELETE FROM scheduler_request WHERE environment = $1::uuid RETURNING id, kind, payload::text",
             impl_->env)) {
      Request q;
      q.id = row[0].as<int64_t>();
      q.kind = row[1].as<std::string>();
      q.payload = nlohmann::json::parse(row[2].as<std::string>(), nullptr, false);
      out.push_back(std::move(q));
    }
    committing = true;
    tx.commit();
  } catch (const std::exception& e) {
    if (!committing || out.empty())
      return dbError("taking scheduler requests of environment " + impl_->env, e);
    // The COMMIT's answer was lost (in doubt, or the connection broke): only this process deletes these rows,
    // so a fresh connection sees them all still there (nothing landed: they are taken next time) or all gone
    // (the delete landed: they are ours to act on now, or they would be lost for good).
    try {
      auto fresh = store::openConnection(impl_->params.connString());
      std::vector<std::string> ids;
      ids.reserve(out.size());
      for (const auto& q : out) ids.push_back(std::to_string(q.id));
      pqxx::nontransaction check{*fresh};
      auto left = check.exec_params("SELECT count(*) FROM scheduler_request WHERE id = ANY($1::bigint[])",
                                    pgArray(ids));
      bool landed = left[0][0].as<int64_t>() == 0;
      check.commit();
      if (!impl_->receiver) impl_->conn = std::move(fresh);
      if (!landed)
        return dbError("taking scheduler requests of environment " + impl_->env + " (not taken)", e);
    } catch (const std::exception& again) {
      return dbError("checking the lost commit of taking scheduler requests of environment " + impl_->env,
                     again);
    }
  }
  std::sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.id < b.id; });
  return out;
}

llvm::Expected<std::vector<plan::Intent>>
SchedulerStore::prepareDryrun(const std::string& dryrunId, int version,
                              const std::map<std::string, bool>& paused) {
  auto intents = loadVersion(version);
  if (!intents) return intents.takeError();
  std::vector<const plan::Intent*> ptrs;
  for (const auto& i : *intents) ptrs.push_back(&i);
  auto blocked = plan::computeBlocked(ptrs);
  try {
    pqxx::work tx{*impl_->conn};
    auto r =
        tx.exec_params("SELECT resources::text FROM dryrun WHERE id = $1::uuid AND environment = $2::uuid",
                       dryrunId, impl_->env);
    nlohmann::json prefilled = nlohmann::json::object();
    std::vector<plan::Intent> todo;
    if (r.empty()) {
      // The server did not create the row: create it with the pre-filled entries of §6.11 step 1.
      for (const auto& i : *intents) {
        std::string rvid = model::resourceVersionId(i.id, version);
        auto pa = paused.find(i.agent);
        if (i.undefined)
          prefilled[rvid] = {{"changes", nlohmann::json::object()},
                             {"diff_status", model::spelling(model::DeployStatus::Undefined)},
                             {"done", true}};
        else if (blocked.count(i.id))
          prefilled[rvid] = {{"changes", nlohmann::json::object()},
                             {"diff_status", model::spelling(model::DeployStatus::SkippedForUndefined)},
                             {"done", true}};
        else if (pa != paused.end() && pa->second)
          prefilled[rvid] = {
              {"changes", nlohmann::json::object()}, {"diff_status", "agent_down"}, {"done", true}};
        else
          todo.push_back(i);
      }
      tx.exec_params("INSERT INTO dryrun (id, environment, model, total, todo, resources) "
                     "VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::jsonb)",
                     dryrunId, impl_->env, version, static_cast<int>(intents->size()),
                     static_cast<int>(todo.size()), prefilled.dump());
    } else {
      prefilled = nlohmann::json::parse(r[0][0].as<std::string>(), nullptr, false);
      for (const auto& i : *intents) {
        std::string rvid = model::resourceVersionId(i.id, version);
        // The server pre-fills every resource: `"done": false` entries are ours to run, the others are final.
        if (prefilled.is_object() && prefilled.contains(rvid)) {
          const auto& entry = prefilled[rvid];
          if (!entry.is_object() || !entry.contains("done") || entry["done"] != false) continue;
        }
        if (i.undefined || blocked.count(i.id)) continue; // never dry-run undefined/BLOCKED (§17.2)
        todo.push_back(i);
      }
    }
    tx.commit();
    return todo;
  } catch (const std::exception& e) {
    return dbError("preparing dryrun " + dryrunId, e);
  }
}

llvm::Expected<std::optional<std::string>> SchedulerStore::readFile(const std::string& sha1hex) {
  try {
    pqxx::read_transaction tx{*impl_->conn};
    auto r = tx.exec_params("SELECT content FROM file WHERE content_hash = $1", sha1hex);
    if (r.empty()) return std::optional<std::string>();
    return std::optional<std::string>(pqxx::binarystring(r[0][0]).str());
  } catch (const std::exception& e) {
    return dbError("reading file " + sha1hex, e);
  }
}

llvm::Error SchedulerStore::storeFile(const std::string& sha1hex, const std::string& content) {
  try {
    pqxx::work tx{*impl_->conn};
    tx.exec_params("INSERT INTO file (content_hash, content) VALUES ($1, $2) ON CONFLICT DO NOTHING", sha1hex,
                   pqxx::binarystring(content.data(), content.size()));
    tx.commit();
    return llvm::Error::success();
  } catch (const std::exception& e) {
    return dbError("storing file " + sha1hex, e);
  }
}

llvm::Expected<std::vector<SchedulerStore::CodeFile>> SchedulerStore::loadCode(int version,
                                                                               const std::string& agent) {
  try {
    pqxx::read_transaction tx{*impl_->conn};
    auto r = tx.exec_params(
        "WITH m AS (SELECT inmanta_module_name AS n, inmanta_module_version AS v FROM version_code "
        "WHERE environment = $1 AND cm_version = $2 UNION SELECT inmanta_module_name, inmanta_module_version "
        "FROM agent_modules WHERE environment = $1 AND cm_version = $2 AND agent_name = $3) "
        "SELECT DISTINCT f.inmanta_module_name, f.inmanta_module_version, coalesce(f.file_path, ''), "
        "f.file_content_hash "
        "FROM module_files f JOIN m ON f.inmanta_module_name = m.n AND f.inmanta_module_version = m.v "
        "WHERE f.environment = $1 AND NOT f.is_byte_code ORDER BY 1, 3, 4",
        impl_->env, version, agent);
    std::vector<CodeFile> out;
    for (const auto& row : r)
      out.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                     row[3].as<std::string>()});
    return out;
  } catch (const std::exception& e) {
    return dbError("reading the handler code of version " + std::to_string(version), e);
  }
}

bool SchedulerStore::environmentGone() { return gEnvironmentGone; }

const std::string& SchedulerStore::epoch() {
  static const std::string id = [] {
    std::random_device rd;
    std::mt19937_64 gen((uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid()));
    uint64_t a = gen(), b = gen();
    a = (a & ~0xf000ULL) | 0x4000ULL;                        // version 4
    b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; // variant 10
    char buf[40];
    std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(a >> 32),
                  (unsigned long long)((a >> 16) & 0xffff), (unsigned long long)(a & 0xffff),
                  (unsigned long long)(b >> 48), (unsigned long long)(b & 0xffffffffffffULL));
    return std::string(buf);
  }();
  return id;
}

llvm::Error SchedulerStore::write(const Effects& e) { return write(e, -1); }

llvm::Error SchedulerStore::write(const Effects& e, int64_t seq) {
  const std::string& env = impl_->env;
  try {
    pqxx::work tx{*impl_->conn};
    // The environment lock (PgStore.h lockEnvironmentShared): held until the commit, so a delete or clear
    // waits for this batch, and a batch after one writes nothing: its rows describe versions that are gone.
    auto gen = tx.exec_params("SELECT generation FROM environment WHERE id = $1::uuid FOR KEY SHARE", env);
    int64_t started = gGeneration;
    if (gen.empty() || (started >= 0 && gen[0][0].as<int64_t>() != started)) {
      gEnvironmentGone = true;
      return llvm::Error::success(); // the transaction rolls back untouched
    }
    // The batch key (migration 009): already there = an earlier attempt committed and only its answer was
    // lost. Keys more than 10,000 batches old are pruned now and then.
    if (seq >= 0) {
      auto fresh = tx.exec_params("INSERT INTO scheduler_batch (environment, epoch, seq) VALUES ($1::uuid, "
                                  "$2::uuid, $3) ON CONFLICT DO NOTHING RETURNING 1",
                                  env, epoch(), seq);
      if (fresh.empty()) return llvm::Error::success(); // written before; the transaction rolls back
      if (seq % 1000 == 0)
        tx.exec_params(
            "DELETE FROM scheduler_batch WHERE environment = $1::uuid AND (epoch <> $2::uuid OR seq "
            "< $3)",
            env, epoch(), seq - 10000);
    }
    if (e.version) {
      const VersionWrite& v = *e.version;
      // In chunks, each array built straight from the rows: one statement for 100k rows held eight arrays of
      // 100k strings and their texts at once.
      for (size_t from = 0; from < v.rows.size(); from += kVersionChunk) {
        size_t to = std::min(v.rows.size(), from + kVersionChunk);
        ArrayText ids, types, agents, values, hashes, undef, fresh, blocked;
        for (size_t k = from; k < to; ++k) {
          const auto& r = v.rows[k];
          std::string type, value;
          splitId(r.resourceId, type, value);
          ids.add(r.resourceId);
          types.add(type);
          agents.add(r.agent);
          values.add(value);
          hashes.add(r.hash);
          undef.add(r.undefined ? "t" : "f");
          fresh.add(r.fresh ? "t" : "f");
          blocked.add(toString(r.blocked));
        }
        std::string idText = ids.take(), freshText = fresh.take();
        tx.exec_params(
            "INSERT INTO resource_persistent_state AS s (environment, resource_id, resource_type, agent, "
            "resource_id_value, current_intent_attribute_hash, is_undefined, blocked) "
            "SELECT $1::uuid, u.id, u.type, u.agent, u.value, u.hash, u.undef, u.blocked "
            "FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::text[], "
            "$9::bool[]) AS u(id, type, agent, value, hash, undef, blocked, fresh) "
            "ON CONFLICT (environment, resource_id) DO UPDATE SET "
            "current_intent_attribute_hash = EXCLUDED.current_intent_attribute_hash, "
            "is_undefined = EXCLUDED.is_undefined, blocked = EXCLUDED.blocked, orphaned_after = NULL, "
            "agent = EXCLUDED.agent "
            // rows the release already wrote as they are stay untouched (no dead tuple per unchanged row)
            "WHERE s.current_intent_attribute_hash IS DISTINCT FROM EXCLUDED.current_intent_attribute_hash "
            "OR s.is_undefined <> EXCLUDED.is_undefined OR s.blocked <> EXCLUDED.blocked "
            "OR s.orphaned_after IS NOT NULL OR s.agent <> EXCLUDED.agent",
            env, idText, types.take(), agents.take(), values.take(), hashes.take(), undef.take(),
            blocked.take(), freshText);
        // NEW resources (first seen, or back after being orphaned/dropped) start from scratch.
        tx.exec_params(
            "UPDATE resource_persistent_state s SET last_deployed_attribute_hash = NULL, "
            "last_deployed_version = NULL, "
            "last_handler_run = 'NEW', last_handler_run_compliant = NULL, last_handler_run_at = NULL, "
            "last_success = NULL, last_produced_events = NULL, last_non_deploying_status = 'available' "
            "FROM unnest($2::text[], $3::bool[]) AS u(id, fresh) "
            "WHERE s.environment = $1::uuid AND s.resource_id = u.id AND u.fresh AND s.last_handler_run <> "
            "'NEW'",
            env, idText, freshText);
      }
      if (!v.orphans.empty()) {
        std::vector<std::string> ids, after;
        for (const auto& o : v.orphans) {
          ids.push_back(o.resourceId);
          after.push_back(std::to_string(o.after));
        }
        tx.exec_params("UPDATE resource_persistent_state s SET orphaned_after = u.after FROM "
                       "unnest($2::text[], $3::int[]) "
                       "AS u(id, after) WHERE s.environment = $1::uuid AND s.resource_id = u.id",
                       env, pgArray(ids), pgArray(after));
      }
      tx.exec_params(
          "INSERT INTO scheduler (environment, last_processed_model_version) VALUES ($1::uuid, $2) "
          "ON CONFLICT (environment) DO UPDATE SET last_processed_model_version = "
          "EXCLUDED.last_processed_model_version",
          env, v.version);
    }

    writeDeploys(tx, env, e);

    if (!e.dryruns.empty()) {
      std::map<std::string, std::pair<nlohmann::json, int>> perRun;
      std::vector<std::string> aids, rvids, ids, versions, started, finished, messages, status;
      for (const auto& d : e.dryruns) {
        std::string rvid = model::resourceVersionId(d.resourceId, d.version);
        auto& slot = perRun[d.dryrunId];
        if (slot.first.is_null()) slot.first = nlohmann::json::object();
        slot.first[rvid] = {{"changes", d.changes}, {"diff_status", d.diffStatus}, {"done", true}};
        slot.second++;
        aids.push_back(d.actionId);
        rvids.push_back(rvid);
        ids.push_back(d.resourceId);
        versions.push_back(std::to_string(d.version));
        started.push_back(isoTime(d.started));
        finished.push_back(isoTime(d.finished));
        messages.push_back(d.messages.is_array() ? d.messages.dump() : "[]");
        status.emplace_back(model::spelling(model::DeployStatus::Dry));
      }
      for (const auto& [id, entry] : perRun) {
        // The changes' current/desired values: floats stay floats in jsonb (model/JsonNumbers.h).
        std::string text = entry.first.dump(), plain;
        if (model::keepFloatsInJsonb(text, plain)) text = std::move(plain);
        tx.exec_params("UPDATE dryrun SET resources = resources || $3::jsonb, todo = greatest(todo - $4, 0) "
                       "WHERE id = $1::uuid AND environment = $2::uuid",
                       id, env, text, entry.second);
      }
      tx.exec_params(
          "INSERT INTO resourceaction (action_id, environment, version, resource_version_ids, action, "
          "started, "
          "finished, messages, status) SELECT u.id::uuid, $1::uuid, u.version, ARRAY[u.rvid], 'dryrun', "
          "u.started::timestamptz, u.finished::timestamptz, u.messages::json, 'dry' "
          "FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) "
          "AS u(id, rvid, version, started, finished, messages)",
          env, pgArray(aids), pgArray(rvids), pgArray(versions), pgArray(started), pgArray(finished),
          pgArray(messages));
      tx.exec_params("INSERT INTO resourceaction_resource (environment, resource_action_id, resource_id, "
                     "resource_version) "
                     "SELECT $1::uuid, u.aid::uuid, u.id, u.version FROM unnest($2::text[], $3::text[], "
                     "$4::int[]) AS u(aid, id, version)",
                     env, pgArray(aids), pgArray(ids), pgArray(versions));
    }

    for (const auto& f : e.facts) {
      if (f.facts.is_object())
        for (const auto& [name, value] : f.facts.items())
          tx.exec_params(
              "INSERT INTO parameter (id, environment, name, value, source, resource_id, updated, expires) "
              "VALUES (gen_random_uuid(), $1::uuid, $2, $3, 'fact', $4, now(), $5) "
              "ON CONFLICT (environment, name, resource_id) DO UPDATE SET value = EXCLUDED.value, source = "
              "'fact', "
              "updated = now(), expires = EXCLUDED.expires",
              env, name, factValue(value), f.resourceId, factExpires(value));
      if (!f.actionId.empty()) {
        std::string rvid = model::resourceVersionId(f.resourceId, f.version);
        tx.exec_params(
            "INSERT INTO resourceaction (action_id, environment, version, resource_version_ids, action, "
            "started, "
            "finished, messages, status) VALUES ($1::uuid, $2::uuid, $3, ARRAY[$4::text], 'getfact', "
            "$5::timestamptz, $6::timestamptz, $7::json, $8)",
            f.actionId, env, f.version, rvid, isoTime(f.started), isoTime(f.finished),
            f.messages.is_array() ? f.messages.dump() : "[]", f.status);
        tx.exec_params("INSERT INTO resourceaction_resource (environment, resource_action_id, resource_id, "
                       "resource_version) "
                       "VALUES ($1::uuid, $2::uuid, $3, $4)",
                       env, f.actionId, f.resourceId, f.version);
      }
    }
    tx.commit();
    return llvm::Error::success();
  } catch (const std::exception& ex) {
    return dbError("writing scheduler state of environment " + env, ex);
  }
}

llvm::Error SchedulerStore::listen() {
  try {
    impl_->receiver = std::make_unique<Receiver>(*impl_->conn, impl_->notified, impl_->env);
    return llvm::Error::success();
  } catch (const std::exception& e) {
    return dbError("LISTEN inmanta_scheduler", e);
  }
}

llvm::Expected<bool> SchedulerStore::waitNotification(int ms) {
  try {
    impl_->notified = false;
    impl_->conn->get_notifs();
    if (!impl_->notified) impl_->conn->await_notification(ms / 1000, (ms % 1000) * 1000);
    return impl_->notified;
  } catch (const std::exception& e) {
    return dbError("waiting for notifications", e);
  }
}

} // namespace inm::scheduler::pg

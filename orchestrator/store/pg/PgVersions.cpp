// Versions and desired state on PostgreSQL (see PgStore.h and orchestrator.md §4). put_version writes the
// configurationmodel row, its resources with COPY (the streamed form batch by batch as the body is parsed,
// then derives the graph columns from the stored rows in SQL), unknowns, agents, code links and the `store`
// action, all in one transaction under a shared per-environment advisory lock; release takes the exclusive
// one.
#include "PgStore.h"
#include "model/Ids.h"
#include "model/JsonNumbers.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <pqxx/tablewriter>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace inm::store {

using model::ErrorCode;

namespace {

/// Advisory lock key of an environment: hashtext of its id in a namespace of its own.
constexpr const char* kEnvLockSql = "hashtextextended('inmanta-env:' || $1, 0)";

/// The done/failed counts of a version's row: its resources' statuses aggregated (a join over every resource
/// of the version).
constexpr const char* kCountsSql =
    "CROSS JOIN LATERAL (SELECT "
    "count(*) FILTER (WHERE cm.released AND s.status NOT IN ('available', 'deploying')) AS done, "
    "count(*) FILTER (WHERE cm.released AND s.status IN ('failed', 'unavailable', 'skipped', 'undefined', "
    "'skipped_for_undefined', 'non_compliant')) AS failed FROM (SELECT ";

/// v1 version row: the reference's configurationmodel fields plus deployed/done/result for the CLI. `counts`
/// is the `d(done, failed)` relation: by default aggregated from the resources' statuses.
std::string versionRowSql(const char* where, const std::string& counts = "") {
  return std::string(
             "SELECT json_build_object('version', cm.version, 'environment', cm.environment, 'date', "
             "cm.date, "
             "'released', cm.released, 'deployed', cm.released AND d.done = cm.total, 'total', cm.total, "
             "'done', d.done, "
             "'result', CASE WHEN NOT cm.released THEN 'pending' WHEN d.done < cm.total THEN 'deploying' "
             "WHEN d.failed > 0 THEN 'failed' ELSE 'success' END, "
             "'status', CASE WHEN NOT cm.released THEN 'pending' WHEN d.done < cm.total THEN 'deploying' "
             "WHEN d.failed > 0 THEN 'failed' ELSE 'success' END, "
             "'version_info', cm.version_info, 'undeployable', to_json(cm.undeployable), "
             "'skipped_for_undeployable', to_json(cm.skipped_for_undeployable), 'partial_base', "
             "cm.partial_base, "
             "'is_suitable_for_partial_compiles', cm.is_suitable_for_partial_compiles, 'pip_config', "
             "cm.pip_config)::text "
             "FROM configurationmodel cm ") +
         (!counts.empty()
              ? counts
              : std::string(kCountsSql) + kStatusSql +
                    " AS status FROM resource r LEFT JOIN resource_persistent_state rps ON rps.environment = "
                    "r.environment AND rps.resource_id = r.resource_id WHERE r.environment = cm.environment "
                    "AND r.model = cm.version) s) d ") +
         where;
}

/// A partial version (under the exclusive environment lock): its base is still the newest version suitable
/// for partial compiles, and every module the base uses arrives with the base's code unless
/// allowHandlerCodeUpdate.
void checkPartial(pqxx::work& tx, const VersionInput& in) {
  int64_t current =
      tx.exec_params("SELECT coalesce(max(version), 0) FROM configurationmodel WHERE environment = $1 "
                     "AND is_suitable_for_partial_compiles",
                     in.environment)[0][0]
          .as<int64_t>();
  int64_t base = in.partialBase.value_or(0);
  if (current != base)
    throw StoreFailure{ErrorCode::Conflict, std::string(kPartialBaseChanged) + " from version " +
                                                std::to_string(base) + " to " + std::to_string(current)};
  if (base == 0 || in.allowHandlerCodeUpdate || !in.moduleVersionInfo.is_object()) return;
  pqxx::result used = tx.exec_params(
      "SELECT inmanta_module_name, inmanta_module_version FROM agent_modules WHERE environment = $1 AND "
      "cm_version = $2 "
      "UNION SELECT inmanta_module_name, inmanta_module_version FROM version_code WHERE environment = $1 AND "
      "cm_version = $2 ORDER BY 1",
      in.environment, base);
  for (const auto& row : used) {
    std::string name = row[0].c_str(), baseCode = row[1].c_str();
    for (auto it = in.moduleVersionInfo.begin(); it != in.moduleVersionInfo.end(); ++it) {
      if (!it.value().is_object() || it.value().value("name", it.key()) != name) continue;
      std::string code = it.value().value("version", "");
      if (code != baseCode)
        throw StoreFailure{ErrorCode::BadRequest,
                           "module " + name + ": the partial export carries code version " + code +
                               " but its base version " + std::to_string(base) + " uses " + baseCode +
                               "; a partial export may not change handler code (allow_handler_code_update)"};
    }
  }
}

/// Path inside the module of a file registered only by its Python module name (`module_version_info`), so
/// executors can lay the code out again: `inmanta_plugins.<mod>` is `plugins/__init__.py`; a name other files
/// of the module extend is a package (`plugins/a/b/__init__.py`), any other `plugins/a/b.py`. "" when the
/// name is not below `inmanta_plugins.<mod>` or holds an unsafe segment (the scheduler then refuses the
/// code).
std::string pathOfPythonModule(const std::string& name, const nlohmann::json& files) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(name).split(parts, '.');
  if (parts.size() < 2 || parts[0] != "inmanta_plugins") return "";
  std::string path = "plugins";
  for (size_t i = 2; i < parts.size(); ++i) {
    if (parts[i].empty() || parts[i].contains('/') || parts[i].startswith("..")) return "";
    path += "/" + parts[i].str();
  }
  bool package = parts.size() == 2;
  for (const auto& f : files)
    if (f.is_object() && llvm::StringRef(f.value("name", "")).startswith(name + ".")) package = true;
  return package ? path + "/__init__.py" : path + ".py";
}

/// Appends `v` as one field of a COPY text-format line (backslash escapes; `\\N` is NULL).
void appendCopyField(std::string& line, std::string_view v) {
  size_t start = 0; // runs without a special character are appended whole
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (c != '\\' && c != '\n' && c != '\r' && c != '\t') continue;
    line.append(v.data() + start, i - start);
    line += '\\';
    line += c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    start = i + 1;
  }
  line.append(v.data() + start, v.size() - start);
}

/// The columns after environment and model of one `resource` COPY line (see copyResources' column list).
void appendResourceFields(std::string& line, const ResourceRow& r) {
  appendCopyField(line, r.resourceId);
  line += '\t';
  appendCopyField(line, r.resourceType);
  line += '\t';
  appendCopyField(line, r.agent);
  line += '\t';
  appendCopyField(line, r.idValue);
  line += '\t';
  // jsonb would print an integral float written with an exponent (1e+20) as an int: its plain digits + ".0"
  // instead (model/JsonNumbers.h; the hash stays the one of the text as sent).
  std::string plain;
  appendCopyField(line, model::keepFloatsInJsonb(r.attributesJson, plain) ? plain : r.attributesJson);
  line += '\t';
  appendCopyField(line, r.attributeHash);
  line += r.undefined ? "\tt\t" : "\tf\t";
  if (r.resourceSet)
    appendCopyField(line, *r.resourceSet);
  else
    line += "\\N";
}

/// A COPY into `resource` with the columns appendResourceFields writes after environment and model, fed
/// pre-escaped lines (tablewriter::write_raw_line; the class is deprecated in libpqxx 6.4, hence the pragma).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
class ResourceCopy {
 public:
  explicit ResourceCopy(pqxx::work& tx) : copy_(tx, "resource", columns().begin(), columns().end()) {}
  void write_raw_line(const std::string& line) { copy_.write_raw_line(line); }
  void complete() { copy_.complete(); }

 private:
  static const std::vector<std::string>& columns() {
    static const std::vector<std::string> kColumns = {
        "environment",       "model",      "resource_id",    "resource_type", "agent",
        "resource_id_value", "attributes", "attribute_hash", "is_undefined",  "resource_set"};
    return kColumns;
  }
  pqxx::tablewriter copy_;
};
#pragma GCC diagnostic pop

} // namespace

void copyResources(pqxx::work& tx, const std::string& env, int64_t version,
                   const std::vector<ResourceRow>& rows) {
  if (rows.empty()) return;
  ResourceCopy copy(tx);
  std::string prefix = env + "\t" + std::to_string(version) + "\t";
  std::string line;
  for (const ResourceRow& r : rows) {
    line.assign(prefix);
    appendResourceFields(line, r);
    copy.write_raw_line(line);
  }
  copy.complete();
}

llvm::Expected<int64_t> PgStore::reserveVersion(const std::string& env) {
  return withTx<int64_t>(db_, "reserving a version", [&](pqxx::work& tx) {
    pqxx::result r = tx.exec_params(
        "UPDATE environment SET last_version = last_version + 1 WHERE id = $1 RETURNING last_version", env);
    if (r.empty()) throw StoreFailure{ErrorCode::NotFound, "environment " + env + " not found"};
    return r[0][0].as<int64_t>();
  });
}

/// The checks and the configurationmodel row that open a put_version. Partial exports take the environment
/// lock exclusively, full ones shared (orchestrator.md §3.7).
void beginVersion(pqxx::work& tx, const VersionInput& in) {
  tx.exec_params(
      std::string(in.partial ? "SELECT pg_advisory_xact_lock(" : "SELECT pg_advisory_xact_lock_shared(") +
          kEnvLockSql + ")",
      in.environment);
  // FOR KEY SHARE: the environment cannot be deleted under this version's rows, which have no per-row foreign
  // keys to it (migrations 004, 006).
  pqxx::result env =
      tx.exec_params("SELECT last_version FROM environment WHERE id = $1 FOR KEY SHARE", in.environment);
  if (env.empty()) throw StoreFailure{ErrorCode::NotFound, "environment " + in.environment + " not found"};
  if (in.partial) checkPartial(tx, in);
  int64_t reserved = env[0][0].as<int64_t>();
  if (in.version <= 0 || in.version > reserved)
    throw StoreFailure{ErrorCode::BadRequest, "version " + std::to_string(in.version) +
                                                  " was not reserved (reserve_version has handed out up to " +
                                                  std::to_string(reserved) + ")"};
  if (!tx.exec_params("SELECT 1 FROM configurationmodel WHERE environment = $1 AND version = $2",
                      in.environment, in.version)
           .empty())
    throw StoreFailure{ErrorCode::Conflict, "version " + std::to_string(in.version) + " is already defined"};
  tx.exec_params(
      "INSERT INTO configurationmodel (environment, version, version_info, total, partial_base, "
      "is_suitable_for_partial_compiles, undeployable, skipped_for_undeployable, pip_config) VALUES ($1, $2, "
      "$3::jsonb, $4, NULLIF($5, '')::integer, $6, ARRAY(SELECT jsonb_array_elements_text($7::jsonb)), "
      "ARRAY(SELECT jsonb_array_elements_text($8::jsonb)), $9::jsonb)",
      in.environment, in.version, in.versionInfo.is_null() ? std::string("null") : in.versionInfo.dump(),
      int64_t(in.resources.size()), in.partialBase ? std::to_string(*in.partialBase) : std::string(),
      in.suitableForPartial, nlohmann::json(in.undeployable).dump(),
      nlohmann::json(in.skippedForUndeployable).dump(),
      in.pipConfig.is_null() ? std::string("null") : in.pipConfig.dump());
}

/// Unknowns, agents, handler code links and the `store` action that close a put_version.
void finishVersion(pqxx::work& tx, const VersionInput& in) {
  if (!in.unknowns.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& u : in.unknowns)
      rows.push_back({{"name", u.value("parameter", "")},
                      {"source", u.value("source", "fact")},
                      {"resource_id", u.value("resource", "")},
                      {"metadata", u.value("metadata", nlohmann::json())}});
    tx.exec_params(
        "INSERT INTO unknownparameter (id, environment, name, source, resource_id, version, metadata) "
        "SELECT gen_random_uuid(), $1, x.name, x.source, x.resource_id, $2, x.metadata "
        "FROM jsonb_to_recordset($3::jsonb) AS x(name varchar, source varchar, resource_id varchar, metadata "
        "jsonb)",
        in.environment, in.version, rows.dump());
  }
  std::vector<std::string> agents = in.agents;
  agents.push_back("$__scheduler");
  // Only the new ones: an insert that conflicts still costs a speculative insertion per row.
  tx.exec_params(
      "INSERT INTO agent (environment, name) SELECT $1, a FROM jsonb_array_elements_text($2::jsonb) a "
      "WHERE NOT EXISTS (SELECT 1 FROM agent x WHERE x.environment = $1 AND x.name = a) ON CONFLICT DO "
      "NOTHING",
      in.environment, nlohmann::json(agents).dump());
  // Code: register each module version and link it to the agents it serves in this version.
  if (in.moduleVersionInfo.is_object()) {
    for (auto it = in.moduleVersionInfo.begin(); it != in.moduleVersionInfo.end(); ++it) {
      const auto& m = it.value();
      std::string name = m.value("name", it.key()), mversion = m.value("version", "");
      pqxx::result ins = tx.exec_params(
          "INSERT INTO inmanta_module (environment, name, version, requirements) VALUES ($1, $2, $3, "
          "ARRAY(SELECT jsonb_array_elements_text($4::jsonb))) ON CONFLICT DO NOTHING RETURNING 1",
          in.environment, name, mversion, m.value("requirements", nlohmann::json::array()).dump());
      if (!ins.empty()) {
        for (const auto& f : m.value("files_in_module", nlohmann::json::array())) {
          std::string hash = f.value("hash_value", "");
          if (tx.exec_params("SELECT 1 FROM file WHERE content_hash = $1", hash).empty())
            throw StoreFailure{ErrorCode::BadRequest, "module_version_info." + it.key() + ": file " + hash +
                                                          " (" + f.value("name", "") + ") was not uploaded"};
          tx.exec_params(
              "INSERT INTO module_files (environment, inmanta_module_name, inmanta_module_version, "
              "file_content_hash, python_module_name, is_byte_code, file_path) "
              "VALUES ($1, $2, $3, $4, $5, $6, $7)",
              in.environment, name, mversion, hash, f.value("name", ""), f.value("is_byte_code", false),
              pathOfPythonModule(f.value("name", ""), m.value("files_in_module", nlohmann::json::array())));
        }
      }
      tx.exec_params(
          "INSERT INTO agent_modules (environment, cm_version, agent_name, inmanta_module_name, "
          "inmanta_module_version) SELECT $1, $2, a, $3, $4 FROM jsonb_array_elements_text($5::jsonb) a "
          "ON CONFLICT DO NOTHING",
          in.environment, in.version, name, mversion, m.value("for_agents", nlohmann::json::array()).dump());
    }
  }
  // One `store` action over all resources of the version, with the reference's message ("Successfully stored
  // version N", kwarg version). It has no resourceaction_resource rows (migration
  // 004): readers reach its resources through the version's resource rows.
  tx.exec_params(
      "INSERT INTO resourceaction (action_id, environment, version, resource_version_ids, action, "
      "started, finished, status, messages) SELECT gen_random_uuid(), $1, $2::integer, "
      "coalesce(array_agg(" +
          model::sqlResourceVersionId("r.resource_id", "$2::integer::text") +
          "), '{}'), 'store', now(), "
          "now(), 'available', json_build_array(json_build_object('level', 'INFO', 'msg', 'Successfully "
          "stored "
          "version ' || $2::integer::text, 'args', '[]'::json, 'kwargs', json_build_object('version', "
          "$2::integer), "
          "'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"'))) "
          "FROM resource r WHERE r.environment = $1 AND r.model = $2::integer",
      in.environment, in.version);
}

std::vector<std::string> skippedForUndeployable(pqxx::work& tx, const std::string& env, int64_t v) {
  pqxx::result skipped = tx.exec_params(
      "WITH RECURSIVE e AS (SELECT r.resource_id AS rid, q AS req FROM resource r CROSS JOIN LATERAL "
      "jsonb_array_elements_text(r.attributes->'requires') q WHERE r.environment = $1 AND r.model = $2), "
      "s(rid) AS (SELECT e.rid FROM e JOIN resource u ON u.environment = $1 AND u.model = $2 AND "
      "u.resource_id = e.req "
      "AND u.is_undefined UNION SELECT e.rid FROM e JOIN s ON e.req = s.rid) "
      "SELECT s.rid FROM s JOIN resource r ON r.environment = $1 AND r.model = $2 AND r.resource_id = "
      "s.rid "
      "WHERE NOT r.is_undefined ORDER BY s.rid COLLATE \"C\"",
      env, v);
  std::vector<std::string> out;
  for (const auto& row : skipped) out.push_back(row[0].c_str());
  return out;
}

bool suitableForPartial(pqxx::work& tx, const std::string& env, int64_t v) {
  return tx
      .exec_params("SELECT NOT EXISTS (SELECT 1 FROM resource r CROSS JOIN LATERAL "
                   "jsonb_array_elements_text(r.attributes->'requires') q "
                   "JOIN resource t ON t.environment = $1 AND t.model = $2 AND t.resource_id = q WHERE "
                   "r.environment = $1 "
                   "AND r.model = $2 AND r.resource_set IS NOT NULL AND t.resource_set IS NOT NULL AND "
                   "r.resource_set <> t.resource_set)",
                   env, v)[0][0]
      .as<bool>();
}

namespace {

/// COPYs the rows of a streamed version, opening it first (begin()) once its number is known. The COPY runs
/// on a writer thread of its own, so PostgreSQL stores one batch while the parser (the caller's thread)
/// reads, checks and hashes the next: write() formats the batch's COPY lines and queues them (at most
/// kQueued batches, so memory stays bounded), the writer sends them down one COPY for the whole version.
/// Invariant: between begin() and finish() only the writer touches the transaction.
class CopySink final : public ResourceSink {
 public:
  CopySink(pqxx::work& tx, VersionInput& head) : tx_(tx), head_(head) {}
  ~CopySink() override { stop(); }

  void begin(int64_t version) override {
    if (begun_) return;
    head_.version = version;
    beginVersion(tx_, head_);
    begun_ = true;
    writer_ = std::thread([this] { run(); });
  }

  void write(const std::vector<ResourceRow>& rows) override {
    if (!begun_) throw StoreFailure{ErrorCode::Internal, "resources streamed before the version number"};
    if (rows.empty()) return;
    std::string prefix = head_.environment + "\t" + std::to_string(head_.version) + "\t";
    std::vector<std::string> lines;
    lines.reserve(rows.size());
    for (const ResourceRow& r : rows) {
      std::string line = prefix;
      appendResourceFields(line, r);
      lines.push_back(std::move(line));
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < kQueued || failure_; });
    if (failure_) std::rethrow_exception(failure_);
    queue_.push_back(std::move(lines));
    total_ += int64_t(rows.size());
    changed_.notify_all();
  }

  /// Waits for every queued row to be stored and the COPY to end; rethrows the writer's failure.
  void finish() {
    if (!begun_) return;
    stop();
    if (failure_) std::rethrow_exception(failure_);
  }

  bool begun() const { return begun_; }
  int64_t total() const { return total_; }

 private:
  static constexpr size_t kQueued = 3;

  void stop() {
    if (!writer_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
    writer_.join();
  }

  void run() {
    try {
      ResourceCopy copy(tx_);
      for (;;) {
        std::vector<std::string> lines;
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [&] { return !queue_.empty() || closed_; });
          if (queue_.empty()) break; // closed and drained
          lines = std::move(queue_.front());
          queue_.pop_front();
        }
        changed_.notify_all();
        for (const std::string& line : lines) copy.write_raw_line(line);
      }
      copy.complete();
    } catch (const pqxx::unique_violation& e) {
      std::string detail = e.what();
      size_t k = detail.find("Key (");
      fail(std::make_exception_ptr(StoreFailure{
          ErrorCode::BadRequest, "duplicate resource in 'resources'" +
                                     (k == std::string::npos ? std::string() : ": " + detail.substr(k))}));
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void fail(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    failure_ = std::move(e);
    queue_.clear();
    changed_.notify_all();
  }

  pqxx::work& tx_;
  VersionInput& head_;
  bool begun_ = false;
  int64_t total_ = 0;
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<std::string>> queue_;
  bool closed_ = false;
  std::exception_ptr failure_;
};

} // namespace

llvm::Error PgStore::putVersion(const VersionInput& in) {
  return withTxVoid(db_, "storing a version", [&](pqxx::work& tx) {
    beginVersion(tx, in);
    copyResources(tx, in.environment, in.version, in.resources);
    finishVersion(tx, in);
  });
}

llvm::Error
PgStore::putVersionStreamed(const std::string& envId,
                            const std::function<llvm::Expected<StreamedVersion>(ResourceSink&)>& produce) {
  return withTxVoid(db_, "storing a version", [&](pqxx::work& tx) {
    VersionInput head;
    head.environment = envId;
    CopySink sink(tx, head);
    llvm::Expected<StreamedVersion> parsed = produce(sink);
    if (!parsed) {
      auto [code, message] = model::describe(parsed.takeError());
      throw StoreFailure{code, message};
    }
    StreamedVersion& sv = *parsed;
    sv.head.environment = envId;
    if (!sink.begun()) sink.begin(sv.head.version);
    sink.finish(); // every row stored; the transaction is this thread's again
    VersionInput& in = sv.head;
    in.version = head.version;
    const std::string& env = in.environment;
    const int64_t v = in.version;
    // is_undefined and resource_set come from the body's tail.
    if (!sv.undefinedIds.empty())
      tx.exec_params(
          "UPDATE resource SET is_undefined = true WHERE environment = $1 AND model = $2 AND resource_id IN "
          "(SELECT jsonb_array_elements_text($3::jsonb))",
          env, v, nlohmann::json(sv.undefinedIds).dump());
    bool anySets = !sv.resourceSets.empty();
    if (anySets) {
      nlohmann::json sets = nlohmann::json::object();
      for (const auto& [rid, set] : sv.resourceSets) sets[rid] = set;
      pqxx::result missing = tx.exec_params(
          "SELECT s.key FROM jsonb_each_text($3::jsonb) s WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE "
          "r.environment = $1 AND r.model = $2 AND r.resource_id = s.key) LIMIT 1",
          env, v, sets.dump());
      if (!missing.empty())
        throw StoreFailure{ErrorCode::BadRequest, std::string("resource_sets names ") +
                                                      missing[0][0].c_str() +
                                                      ", which is not a resource of this version"};
      tx.exec_params("UPDATE resource r SET resource_set = s.value FROM jsonb_each_text($3::jsonb) s "
                     "WHERE r.environment = $1 AND r.model = $2 AND r.resource_id = s.key",
                     env, v, sets.dump());
    }
    // Fresh rows have no planner statistics; without them the joins below may be planned as nested loops over
    // sequential scans (quadratic at 100k rows). Only when one of those joins runs (an open requires graph,
    // undefined resources, named sets): a plain version needs none of them (its rows are then read by key
    // only, and autovacuum analyzes the table later), which saves ~70 ms at 100k resources.
    // Only the key columns: statistics of the jsonb attributes cost most of a full ANALYZE and no plan here
    // uses them.
    bool joins = !sv.requiresClosed || !sv.undefinedIds.empty() || anySets;
    if (joins && sink.total() > 2000) tx.exec("ANALYZE resource (environment, model, resource_id)");
    // The requires graph must be closed (a set difference: hashed, whatever the plan). A producer that saw
    // every resource already knows; the query then only runs to name the offender.
    pqxx::result open;
    if (!sv.requiresClosed)
      open = tx.exec_params(
          "SELECT q FROM resource r CROSS JOIN LATERAL jsonb_array_elements_text(r.attributes->'requires') q "
          "WHERE r.environment = $1 AND r.model = $2 EXCEPT SELECT resource_id FROM resource WHERE "
          "environment = $1 AND model = $2 LIMIT 1",
          env, v);
    if (!open.empty()) {
      pqxx::result who = tx.exec_params("SELECT resource_id FROM resource WHERE environment = $1 AND model = "
                                        "$2 AND attributes->'requires' ? $3 "
                                        "ORDER BY resource_id LIMIT 1",
                                        env, v, std::string(open[0][0].c_str()));
      throw StoreFailure{ErrorCode::BadRequest,
                         (who.empty() ? std::string("a resource") : std::string(who[0][0].c_str())) +
                             " requires " + open[0][0].c_str() + ", which is not in this version"};
    }
    // undeployable, skipped_for_undeployable (dependents of undefined resources, transitively) and
    // is_suitable_for_partial_compiles (no requires between different named sets).
    // Only the ids the body marked undefined can be (a scan of every row of the version otherwise).
    if (!sv.undefinedIds.empty())
      for (const auto& row :
           tx.exec_params("SELECT resource_id FROM resource WHERE environment = $1 AND model = $2 "
                          "AND is_undefined ORDER BY resource_id COLLATE \"C\"",
                          env, v))
        in.undeployable.push_back(row[0].c_str());
    if (!in.undeployable.empty()) in.skippedForUndeployable = skippedForUndeployable(tx, env, v);
    in.suitableForPartial = true;
    if (anySets) in.suitableForPartial = suitableForPartial(tx, env, v);
    if (!sv.agentsKnown)
      for (const auto& row :
           tx.exec_params("SELECT DISTINCT agent FROM resource WHERE environment = $1 AND model = $2 "
                          "ORDER BY agent",
                          env, v))
        in.agents.push_back(row[0].c_str());
    tx.exec_params(
        "UPDATE configurationmodel SET total = $3, version_info = $4::jsonb, pip_config = $5::jsonb, "
        "is_suitable_for_partial_compiles = $6, undeployable = ARRAY(SELECT "
        "jsonb_array_elements_text($7::jsonb)), "
        "skipped_for_undeployable = ARRAY(SELECT jsonb_array_elements_text($8::jsonb)) "
        "WHERE environment = $1 AND version = $2",
        env, v, sink.total(), in.versionInfo.is_null() ? std::string("null") : in.versionInfo.dump(),
        in.pipConfig.is_null() ? std::string("null") : in.pipConfig.dump(), in.suitableForPartial,
        nlohmann::json(in.undeployable).dump(), nlohmann::json(in.skippedForUndeployable).dump());
    finishVersion(tx, in);
  });
}

llvm::Expected<int64_t> PgStore::partialBase(const std::string& env) {
  return withTx<int64_t>(db_, "finding the partial base", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return tx
        .exec_params("SELECT coalesce(max(version), 0) FROM configurationmodel WHERE environment = $1 AND "
                     "is_suitable_for_partial_compiles",
                     env)[0][0]
        .as<int64_t>();
  });
}

llvm::Expected<std::pair<int64_t, int64_t>> PgStore::latestVersions(const std::string& env) {
  return withTx<std::pair<int64_t, int64_t>>(db_, "reading versions", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    pqxx::result r =
        tx.exec_params("SELECT coalesce(max(version), 0), coalesce(max(version) FILTER (WHERE released), 0) "
                       "FROM configurationmodel WHERE environment = $1",
                       env);
    return std::make_pair(r[0][0].as<int64_t>(), r[0][1].as<int64_t>());
  });
}

llvm::Expected<nlohmann::json> PgStore::releaseVersion(const std::string& env, int64_t version) {
  return withTx<nlohmann::json>(db_, "releasing a version", [&](pqxx::work& tx) {
    // The environment stays while its new resource_persistent_state rows (no foreign key) are written.
    lockEnvironmentShared(tx, env);
    tx.exec_params(std::string("SELECT pg_advisory_xact_lock(") + kEnvLockSql + ")", env);
    pqxx::result cm = tx.exec_params(
        "SELECT released FROM configurationmodel WHERE environment = $1 AND version = $2", env, version);
    if (cm.empty())
      throw StoreFailure{ErrorCode::NotFound, "version " + std::to_string(version) + " not found"};
    if (cm[0][0].as<bool>())
      throw StoreFailure{ErrorCode::Conflict, "version " + std::to_string(version) + " is already released"};
    int64_t latest =
        tx.exec_params(
              "SELECT coalesce(max(version), 0) FROM configurationmodel WHERE environment = $1 AND released",
              env)[0][0]
            .as<int64_t>();
    if (latest > version)
      throw StoreFailure{ErrorCode::Conflict, "version " + std::to_string(version) +
                                                  " is older than the latest released version " +
                                                  std::to_string(latest)};
    // The rows of resources new to the environment, counted as they are inserted: how many, and how many
    // undefined (a fresh row's status is 'undefined' for those, 'available' for the others).
    std::string insert =
        "WITH ins AS (INSERT INTO resource_persistent_state (environment, resource_id, resource_type, agent, "
        "resource_id_value, current_intent_attribute_hash, is_undefined, last_handler_run, blocked) "
        "SELECT environment, resource_id, resource_type, agent, resource_id_value, attribute_hash, "
        "is_undefined, 'NEW', CASE WHEN is_undefined THEN 'BLOCKED' ELSE 'NOT_BLOCKED' END FROM resource "
        "WHERE environment = $1 AND model = $2 ORDER BY resource_id";
    const std::string count =
        " RETURNING is_undefined) SELECT count(*), count(*) FILTER (WHERE is_undefined) "
        "FROM ins";
    pqxx::result added;
    // An environment's first release (no rows yet) inserts every row plainly: ON CONFLICT's speculative
    // insertion costs a third more per row (100k rows: ~0.65 s of PostgreSQL CPU against ~0.45 s). Releases
    // are serialised by the environment lock, but the scheduler also creates rows (SchedulerStore.cpp,
    // outside that lock): if it won a race for an id, the insert is redone with ON CONFLICT DO NOTHING, as
    // every later release does. (A NOT EXISTS filter instead was measured, and planned as a quadratic
    // anti-join over the table being filled when statistics are missing.) The rows go in the primary key's
    // order: each lands on the key's rightmost leaf, which PostgreSQL fills without a descent or a random
    // page (100k rows, statement alone: a sixth less than in the version's order, sort included).
    bool first = tx.exec_params("SELECT NOT EXISTS (SELECT 1 FROM resource_persistent_state WHERE "
                                "environment = $1)",
                                env)[0][0]
                     .as<bool>();
    bool done = false;
    if (first) {
      // A savepoint by hand: a pqxx 6.4 subtransaction left the transaction aborted after the failed insert
      // (test_server_push_perf: test_first_release_loses_race_to_scheduler).
      tx.exec("SAVEPOINT release_rps");
      try {
        added = tx.exec_params(insert + count, env, version);
        done = true;
      } catch (const pqxx::unique_violation&) {
        tx.exec("ROLLBACK TO SAVEPOINT release_rps");
      }
      if (done) tx.exec("RELEASE SAVEPOINT release_rps");
    }
    if (!done) added = tx.exec_params(insert + " ON CONFLICT DO NOTHING" + count, env, version);
    int64_t inserted = added[0][0].as<int64_t>(), undefined = added[0][1].as<int64_t>();
    tx.exec_params("UPDATE configurationmodel SET released = true WHERE environment = $1 AND version = $2",
                   env, version);
    insertSchedulerRequest(tx, env, model::SchedulerRequestKind::ReadVersion, {{"version", version}});
    // When every resource of the version is new to the environment (total = inserted: resource ids are unique
    // per version), the statuses are known without reading them back: the undefined ones are done and failed,
    // the others available. Otherwise older rows carry deploy state: aggregate.
    std::string counts;
    int64_t total =
        tx.exec_params("SELECT total FROM configurationmodel WHERE environment = $1 AND version = $2", env,
                       version)[0][0]
            .as<int64_t>();
    if (total == inserted)
      counts = "CROSS JOIN (SELECT " + std::to_string(undefined) + "::bigint AS done, " +
               std::to_string(undefined) + "::bigint AS failed) d ";
    pqxx::result row =
        tx.exec_params(versionRowSql("WHERE cm.environment = $1 AND cm.version = $2", counts), env, version);
    return nlohmann::json::parse(row[0][0].c_str());
  });
}

llvm::Expected<nlohmann::json> PgStore::listVersions(const std::string& env, int64_t start, int64_t limit) {
  return withTx<nlohmann::json>(db_, "listing versions", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : tx.exec_params(
             versionRowSql("WHERE cm.environment = $1 ORDER BY cm.version DESC OFFSET $2 LIMIT $3"), env,
             start, limit))
      rows.push_back(nlohmann::json::parse(row[0].c_str()));
    int64_t count =
        tx.exec_params("SELECT count(*) FROM configurationmodel WHERE environment = $1", env)[0][0]
            .as<int64_t>();
    return nlohmann::json{{"versions", rows}, {"start", start}, {"limit", limit}, {"count", count}};
  });
}

llvm::Expected<nlohmann::json> PgStore::getVersion(const std::string& env, int64_t version) {
  return withTx<nlohmann::json>(db_, "reading a version", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    pqxx::result r =
        tx.exec_params(versionRowSql("WHERE cm.environment = $1 AND cm.version = $2"), env, version);
    if (r.empty())
      throw StoreFailure{ErrorCode::NotFound, "version " + std::to_string(version) + " not found"};
    return nlohmann::json::parse(r[0][0].c_str());
  });
}

llvm::Expected<nlohmann::json> PgStore::versionActions(const std::string& env, int64_t version) {
  return withTx<nlohmann::json>(db_, "reading resource actions", [&](pqxx::work& tx) {
    pqxx::result r = tx.exec_params(
        "SELECT coalesce(json_object_agg(x.resource_id, x.actions), '{}')::text FROM (SELECT "
        "rar.resource_id, "
        "json_agg(json_build_object('action_id', ra.action_id, 'action', ra.action, 'started', ra.started, "
        "'finished', ra.finished, 'messages', ra.messages, 'status', ra.status, 'changes', ra.changes, "
        "'change', ra.change) ORDER BY ra.started DESC) AS actions FROM resourceaction_resource rar "
        "JOIN resourceaction ra ON ra.action_id = rar.resource_action_id WHERE rar.environment = $1 "
        "AND rar.resource_version = $2 GROUP BY rar.resource_id) x",
        env, version);
    return nlohmann::json::parse(r[0][0].c_str());
  });
}

llvm::Expected<nlohmann::json> PgStore::versionUnknowns(const std::string& env, int64_t version) {
  return withTx<nlohmann::json>(db_, "reading unknowns", [&](pqxx::work& tx) {
    pqxx::result r = tx.exec_params("SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, "
                                    "'source', source, 'resource_id', resource_id, "
                                    "'version', version, 'metadata', metadata, 'resolved', resolved, "
                                    "'environment', environment) ORDER BY resource_id, name), '[]')::text "
                                    "FROM unknownparameter WHERE environment = $1 AND version = $2",
                                    env, version);
    return nlohmann::json::parse(r[0][0].c_str());
  });
}

llvm::Error PgStore::deleteVersion(const std::string& env, int64_t version) {
  return withTxVoid(db_, "deleting a version", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    tx.exec_params(std::string("SELECT pg_advisory_xact_lock(") + kEnvLockSql + ")", env);
    pqxx::result cm = tx.exec_params(
        "SELECT released FROM configurationmodel WHERE environment = $1 AND version = $2", env, version);
    if (cm.empty())
      throw StoreFailure{ErrorCode::NotFound, "version " + std::to_string(version) + " not found"};
    int64_t latest =
        tx.exec_params(
              "SELECT coalesce(max(version), 0) FROM configurationmodel WHERE environment = $1 AND released",
              env)[0][0]
            .as<int64_t>();
    if (latest == version)
      throw StoreFailure{ErrorCode::Conflict, "version " + std::to_string(version) +
                                                  " is the latest released version and cannot be deleted"};
    tx.exec_params("DELETE FROM resource WHERE environment = $1 AND model = $2", env, version);
    tx.exec_params("DELETE FROM configurationmodel WHERE environment = $1 AND version = $2", env, version);
  });
}

llvm::Expected<nlohmann::json> PgStore::desiredStates(const std::string& env) {
  return withTx<nlohmann::json>(db_, "listing desired states", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    pqxx::result r = tx.exec_params(
        "SELECT coalesce(json_agg(json_build_object('version', cm.version, 'date', cm.date, 'total', "
        "cm.total, "
        "'labels', CASE WHEN cm.version_info->'export_metadata'->>'type' IS NULL THEN '[]'::json ELSE "
        "json_build_array(json_build_object('name', cm.version_info->'export_metadata'->>'type', "
        "'message', coalesce(cm.version_info->'export_metadata'->>'message', ''))) END, "
        "'released', cm.released, "
        "'status', CASE WHEN s.v IS NOT NULL AND cm.version = s.v THEN 'active' "
        "WHEN s.v IS NULL OR cm.version > s.v THEN 'candidate' "
        "WHEN cm.released THEN 'retired' ELSE 'skipped_candidate' END) ORDER BY cm.version DESC), "
        "'[]')::text "
        "FROM configurationmodel cm LEFT JOIN (SELECT last_processed_model_version AS v FROM scheduler "
        "WHERE environment = $1) s ON true WHERE cm.environment = $1",
        env);
    return nlohmann::json::parse(r[0][0].c_str());
  });
}

llvm::Expected<int64_t> PgStore::purgeVersions(const std::string& env, int64_t keep) {
  return withTx<int64_t>(db_, "purging versions", [&](pqxx::work& tx) {
    tx.exec_params(std::string("SELECT pg_advisory_xact_lock(") + kEnvLockSql + ")", env);
    pqxx::result doomed =
        tx.exec_params("SELECT version FROM configurationmodel WHERE environment = $1 AND version NOT IN "
                       "(SELECT version FROM "
                       "configurationmodel WHERE environment = $1 ORDER BY version DESC LIMIT $2) AND "
                       "version <> coalesce((SELECT "
                       "max(version) FROM configurationmodel WHERE environment = $1 AND released), 0) AND "
                       "version <> coalesce((SELECT "
                       "last_processed_model_version FROM scheduler WHERE environment = $1), 0)",
                       env, keep);
    if (doomed.empty()) return int64_t(0);
    std::string list = "[";
    for (size_t i = 0; i < doomed.size(); ++i) list += (i ? "," : "") + std::string(doomed[i][0].c_str());
    list += "]";
    tx.exec_params("DELETE FROM resource WHERE environment = $1 AND model IN (SELECT v::int FROM "
                   "jsonb_array_elements_text($2::jsonb) v)",
                   env, list);
    tx.exec_params("DELETE FROM configurationmodel WHERE environment = $1 AND version IN (SELECT v::int FROM "
                   "jsonb_array_elements_text($2::jsonb) v)",
                   env, list);
    tx.exec_params("DELETE FROM resource_persistent_state p WHERE p.environment = $1 AND NOT EXISTS (SELECT "
                   "1 FROM resource r "
                   "WHERE r.environment = $1 AND r.resource_id = p.resource_id)",
                   env);
    tx.exec_params("DELETE FROM agent a WHERE a.environment = $1 AND a.name <> '$__scheduler' AND NOT EXISTS "
                   "(SELECT 1 FROM "
                   "resource r WHERE r.environment = $1 AND r.agent = a.name)",
                   env);
    return int64_t(doomed.size());
  });
}

} // namespace inm::store

// libpqxx adapter of the compile service (see include/store/CompileQueue.h; moved from
// compile/CompileStore.cpp). Connections are opened lazily (Connection.h openConnection) up to the bound and
// dropped when they break, so a PostgreSQL restart costs one failed operation, not a wedged service.
#include "Connection.h"
#include "compile/Merge.h"
#include "store/CompileQueue.h"

#include <pqxx/pqxx>

#include <condition_variable>
#include <mutex>

namespace inm::store {

using compile::Batch;
using compile::planBatch;
using compile::QueuedCompile;

namespace {
llvm::Error dbError(const char* what, const std::exception& e) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "database: %s: %s", what, e.what());
}
} // namespace

struct CompileQueue::Pool {
  std::string conninfo;
  unsigned max;
  std::mutex mutex;
  std::condition_variable freed;
  std::vector<std::unique_ptr<pqxx::connection>> idle;
  unsigned open = 0;
};

CompileQueue::CompileQueue(std::string conninfo, unsigned maxConnections) : pool_(std::make_unique<Pool>()) {
  pool_->conninfo = std::move(conninfo);
  pool_->max = maxConnections ? maxConnections : 1;
}

CompileQueue::~CompileQueue() = default;

namespace {
/// Runs `f` on a connection of `pool` (waiting for one when all are busy); exceptions become llvm::Error.
template <typename F>
auto withConnection(CompileQueue::Pool& pool, const char* what, F&& f)
    -> decltype(f(std::declval<pqxx::connection&>())) {
  std::unique_ptr<pqxx::connection> conn;
  {
    std::unique_lock<std::mutex> lock(pool.mutex);
    pool.freed.wait(lock, [&] { return !pool.idle.empty() || pool.open < pool.max; });
    if (!pool.idle.empty()) {
      conn = std::move(pool.idle.back());
      pool.idle.pop_back();
    } else {
      ++pool.open;
    }
  }
  auto giveBack = [&](bool keep) {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (keep && conn)
      pool.idle.push_back(std::move(conn));
    else
      --pool.open;
    pool.freed.notify_one();
  };
  try {
    if (!conn) conn = openConnection(pool.conninfo);
    auto result = f(*conn);
    giveBack(true);
    return result;
  } catch (const pqxx::broken_connection& e) {
    conn.reset();
    giveBack(false);
    return dbError(what, e);
  } catch (const std::exception& e) {
    bool keep = conn && conn->is_open();
    giveBack(keep);
    return dbError(what, e);
  }
}
} // namespace

llvm::Expected<std::string> CompileQueue::insertRequest(const CompileRequest& r) {
  return withConnection(
      *pool_, "queueing a compile", [&](pqxx::connection& c) -> llvm::Expected<std::string> {
        pqxx::work tx(c);
        pqxx::result env = tx.exec_params("SELECT 1 FROM environment WHERE id = $1::uuid", r.environment);
        if (env.empty())
          return llvm::createStringError(llvm::inconvertibleErrorCode(), "environment %s does not exist",
                                         r.environment.c_str());
        pqxx::result res = tx.exec_params(
            "INSERT INTO compile (id, environment, requested, do_export, force_update, metadata, "
            "requested_environment_variables, partial) VALUES (gen_random_uuid(), $1::uuid, "
            "clock_timestamp(), "
            "$2, $3, "
            "$4::jsonb, $5::jsonb, $6) RETURNING id::text",
            r.environment, r.doExport, r.forceUpdate, r.metadata.dump(), r.envVars.dump(), r.partial);
        tx.commit();
        return res[0][0].as<std::string>();
      });
}

llvm::Expected<EnvInfo> CompileQueue::envInfo(const std::string& env) {
  return withConnection(
      *pool_, "reading the environment", [&](pqxx::connection& c) -> llvm::Expected<EnvInfo> {
        pqxx::read_transaction tx(c);
        EnvInfo info;
        pqxx::result e = tx.exec_params(
            "SELECT halted, repo_url, repo_branch, settings::text, "
            "EXISTS (SELECT 1 FROM compile WHERE environment = $1::uuid AND started IS NULL), "
            "(SELECT EXTRACT(EPOCH FROM clock_timestamp() - max(completed))::float8 FROM compile "
            " WHERE environment = $1::uuid AND completed IS NOT NULL) "
            "FROM environment WHERE id = $1::uuid",
            env);
        if (e.empty()) return info;
        info.exists = true;
        info.halted = e[0][0].as<bool>();
        info.repoUrl = e[0][1].as<std::string>();
        info.repoBranch = e[0][2].as<std::string>();
        info.settings = nlohmann::json::parse(e[0][3].as<std::string>(), nullptr, false);
        if (!info.settings.is_object()) info.settings = nlohmann::json::object();
        info.hasQueued = e[0][4].as<bool>();
        if (!e[0][5].is_null()) info.secondsSinceLast = e[0][5].as<double>();
        return info;
      });
}

llvm::Expected<ClaimedRun> CompileQueue::claimNext(const std::string& env) {
  return withConnection(*pool_, "starting a compile", [&](pqxx::connection& c) -> llvm::Expected<ClaimedRun> {
    pqxx::work tx(c);
    ClaimedRun run;
    // Serialise claims of one environment across connections (and servers sharing the database).
    tx.exec_params("SELECT 1 FROM environment WHERE id = $1::uuid FOR UPDATE", env);
    pqxx::result busy = tx.exec_params(
        "SELECT 1 FROM compile WHERE environment = $1::uuid AND started IS NOT NULL AND completed IS NULL",
        env);
    if (!busy.empty()) return run;
    pqxx::result rows = tx.exec_params("SELECT id::text, requested_environment_variables::text, do_export, "
                                       "partial, force_update, metadata::text, "
                                       "requested::text FROM compile WHERE environment = $1::uuid AND "
                                       "started IS NULL ORDER BY requested, id",
                                       env);
    if (rows.empty()) return run;
    std::vector<QueuedCompile> queue;
    for (const auto& row : rows) {
      QueuedCompile q;
      q.id = row[0].as<std::string>();
      q.environment = env;
      q.envVars = row[1].as<std::string>();
      q.doExport = row[2].as<bool>();
      q.partial = row[3].as<bool>();
      q.forceUpdate = row[4].as<bool>();
      queue.push_back(std::move(q));
    }
    Batch b = planBatch(queue);
    run.found = true;
    run.id = queue[b.head].id;
    run.forceUpdate = b.forceUpdate;
    run.doExport = queue[b.head].doExport;
    run.partial = queue[b.head].partial;
    run.envVars = nlohmann::json::parse(queue[b.head].envVars, nullptr, false);
    run.metadata = nlohmann::json::parse(rows[b.head][5].as<std::string>(), nullptr, false);
    run.requested = rows[b.head][6].as<std::string>();
    tx.exec_params("UPDATE compile SET started = clock_timestamp(), force_update = $2, "
                   "used_environment_variables = requested_environment_variables WHERE id = $1::uuid",
                   run.id, run.forceUpdate);
    for (size_t i : b.absorbed) {
      run.absorbed.push_back(queue[i].id);
      tx.exec_params("UPDATE compile SET started = clock_timestamp(), substitute_compile_id = $2::uuid "
                     "WHERE id = $1::uuid",
                     queue[i].id, run.id);
    }
    tx.commit();
    return run;
  });
}

llvm::Expected<std::string> CompileQueue::beginStage(const std::string& compileId, const std::string& name,
                                                     const std::string& command) {
  return withConnection(
      *pool_, "recording a compile stage", [&](pqxx::connection& c) -> llvm::Expected<std::string> {
        pqxx::work tx(c);
        pqxx::result r = tx.exec_params("INSERT INTO report (id, compile, name, command, started) VALUES "
                                        "(gen_random_uuid(), $1::uuid, $2, $3, "
                                        "clock_timestamp()) RETURNING id::text",
                                        compileId, name, command);
        tx.commit();
        return r[0][0].as<std::string>();
      });
}

llvm::Expected<bool> CompileQueue::endStage(const std::string& reportId, const std::string& command,
                                            const std::string& out, const std::string& err, int rc) {
  return withConnection(
      *pool_, "completing a compile stage", [&](pqxx::connection& c) -> llvm::Expected<bool> {
        pqxx::work tx(c);
        tx.exec_params("UPDATE report SET completed = clock_timestamp(), outstream = $2, errstream = $3, "
                       "returncode = $4, "
                       "command = CASE WHEN $5 = '' THEN command ELSE $5 END WHERE id = $1::uuid",
                       reportId, out, err, rc, command);
        tx.commit();
        return true;
      });
}

llvm::Expected<bool> CompileQueue::finish(const ClaimedRun& run, bool success, std::optional<int> version,
                                          const nlohmann::json& compileData) {
  return withConnection(*pool_, "completing a compile", [&](pqxx::connection& c) -> llvm::Expected<bool> {
    pqxx::work tx(c);
    std::vector<std::string> ids = run.absorbed;
    ids.push_back(run.id);
    std::string data = compileData.is_null() ? std::string() : compileData.dump();
    for (const std::string& id : ids) {
      if (version)
        tx.exec_params("UPDATE compile SET completed = clock_timestamp(), success = $2, version = $3, "
                       "compile_data = NULLIF($4, '')::jsonb, handled = true WHERE id = $1::uuid",
                       id, success, *version, data);
      else
        tx.exec_params("UPDATE compile SET completed = clock_timestamp(), success = $2, "
                       "compile_data = NULLIF($3, '')::jsonb, handled = true WHERE id = $1::uuid",
                       id, success, data);
    }
    tx.commit();
    return true;
  });
}

llvm::Expected<int> CompileQueue::failUnfinished() {
  return withConnection(
      *pool_, "recovering unfinished compiles", [&](pqxx::connection& c) -> llvm::Expected<int> {
        pqxx::work tx(c);
        pqxx::result heads =
            tx.exec("SELECT id::text FROM compile WHERE started IS NOT NULL AND completed IS "
                    "NULL AND substitute_compile_id IS NULL");
        for (const auto& row : heads)
          tx.exec_params(
              "INSERT INTO report (id, compile, name, command, started, completed, errstream, returncode) "
              "VALUES "
              "(gen_random_uuid(), $1::uuid, 'Server restarted', '', clock_timestamp(), clock_timestamp(), "
              "'the server stopped while this compile was running; it was marked as failed at the next "
              "start', "
              "1)",
              row[0].as<std::string>());
        pqxx::result done = tx.exec(
            "UPDATE compile SET completed = clock_timestamp(), success = false, handled = true, compile_data "
            "= "
            "'{\"errors\": [{\"type\": \"ServerRestarted\", \"message\": \"the server stopped during this "
            "compile\"}]}' "
            "WHERE started IS NOT NULL AND completed IS NULL");
        tx.commit();
        return int(done.affected_rows());
      });
}

llvm::Expected<std::vector<std::string>> CompileQueue::environmentsWithQueue() {
  return withConnection(
      *pool_, "listing compile queues", [&](pqxx::connection& c) -> llvm::Expected<std::vector<std::string>> {
        pqxx::read_transaction tx(c);
        std::vector<std::string> out;
        for (const auto& row :
             tx.exec("SELECT DISTINCT environment::text FROM compile WHERE started IS NULL"))
          out.push_back(row[0].as<std::string>());
        return out;
      });
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>> CompileQueue::cronSettings() {
  using Out = std::vector<std::pair<std::string, std::string>>;
  return withConnection(*pool_, "reading auto_full_compile", [&](pqxx::connection& c) -> llvm::Expected<Out> {
    pqxx::read_transaction tx(c);
    Out out;
    for (const auto& row : tx.exec("SELECT id::text, settings->>'auto_full_compile' FROM environment "
                                   "WHERE coalesce(settings->>'auto_full_compile', '') <> '' "
                                   "AND NOT is_marked_for_deletion"))
      out.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
    return out;
  });
}

llvm::Expected<int> CompileQueue::purgeOlderThan(std::chrono::seconds retention) {
  return withConnection(
      *pool_, "purging old compile reports", [&](pqxx::connection& c) -> llvm::Expected<int> {
        pqxx::work tx(c);
        pqxx::result r = tx.exec_params("DELETE FROM compile WHERE completed IS NOT NULL AND completed < "
                                        "clock_timestamp() - make_interval(secs => $1)",
                                        double(retention.count()));
        tx.commit();
        return int(r.affected_rows());
      });
}

namespace {
// The columns of one compile as a JSON object (the reference's CompileReport fields).
constexpr const char* kCompileJson =
    "json_build_object('id', c.id, 'environment', c.environment, "
    "'requested', to_char(c.requested AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), "
    "'started', to_char(c.started AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), "
    "'completed', to_char(c.completed AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), "
    "'success', c.success, 'version', c.version, 'do_export', c.do_export, 'force_update', c.force_update, "
    "'metadata', c.metadata, 'environment_variables', coalesce(c.used_environment_variables, "
    "c.requested_environment_variables), 'requested_environment_variables', "
    "c.requested_environment_variables, "
    "'partial', c.partial, 'removed_resource_sets', to_json(c.removed_resource_sets), "
    "'exporter_plugin', c.exporter_plugin, 'soft_delete', c.soft_delete, "
    "'substitute_compile_id', c.substitute_compile_id, 'handled', c.handled)";
} // namespace

llvm::Expected<nlohmann::json> CompileQueue::listCompiles(const std::string& env, int limit) {
  return withConnection(
      *pool_, "listing compile reports", [&](pqxx::connection& c) -> llvm::Expected<nlohmann::json> {
        pqxx::read_transaction tx(c);
        pqxx::result r = tx.exec_params(
            std::string("SELECT coalesce(json_agg(q.j), '[]')::text FROM (SELECT ") + kCompileJson +
                " AS j FROM compile c WHERE c.environment = $1::uuid "
                "ORDER BY c.requested DESC, c.id LIMIT $2) q",
            env, limit);
        return nlohmann::json::parse(r[0][0].as<std::string>());
      });
}

llvm::Expected<nlohmann::json> CompileQueue::compileDetail(const std::string& compileId) {
  return withConnection(
      *pool_, "reading a compile report", [&](pqxx::connection& c) -> llvm::Expected<nlohmann::json> {
        pqxx::read_transaction tx(c);
        pqxx::result r = tx.exec_params(
            std::string("SELECT ") + kCompileJson +
                "::text, coalesce(c.compile_data::text, 'null'), "
                "(SELECT coalesce(json_agg(json_build_object('id', r.id, 'compile', r.compile, 'name', "
                "r.name, "
                "'command', r.command, 'started', to_char(r.started AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS.US'), "
                "'completed', to_char(r.completed AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), "
                "'outstream', r.outstream, 'errstream', r.errstream, 'returncode', r.returncode) ORDER BY "
                "r.started), '[]')::text "
                " FROM report r WHERE r.compile = CASE WHEN EXISTS (SELECT 1 FROM report o WHERE o.compile = "
                "c.id) "
                " THEN c.id ELSE coalesce(c.substitute_compile_id, c.id) END) "
                "FROM compile c WHERE c.id = $1::uuid",
            compileId);
        if (r.empty()) return nlohmann::json(nullptr);
        nlohmann::json j = nlohmann::json::parse(r[0][0].as<std::string>());
        j["compile_data"] = nlohmann::json::parse(r[0][1].as<std::string>());
        j["reports"] = nlohmann::json::parse(r[0][2].as<std::string>());
        return j;
      });
}

llvm::Expected<nlohmann::json> CompileQueue::queue(const std::string& env) {
  return withConnection(
      *pool_, "listing the compile queue", [&](pqxx::connection& c) -> llvm::Expected<nlohmann::json> {
        pqxx::read_transaction tx(c);
        pqxx::result r =
            tx.exec_params(std::string("SELECT coalesce(json_agg(q.j ORDER BY q.requested), '[]')::text FROM "
                                       "(SELECT ") +
                               kCompileJson +
                               " AS j, c.requested FROM compile c "
                               "WHERE c.environment = $1::uuid AND c.completed IS NULL) q",
                           env);
        return nlohmann::json::parse(r[0][0].as<std::string>());
      });
}

llvm::Expected<bool> CompileQueue::recordCommit(const ClaimedRun& run, const std::string& commit) {
  return withConnection(*pool_, "recording the commit", [&](pqxx::connection& c) -> llvm::Expected<bool> {
    pqxx::work tx(c);
    tx.exec_params("UPDATE compile SET metadata = metadata || jsonb_build_object('commit', $2::text) "
                   "WHERE id = $1::uuid OR substitute_compile_id = $1::uuid",
                   run.id, commit);
    tx.commit();
    return true;
  });
}

llvm::Expected<Duplicate> CompileQueue::findDuplicate(const std::string& env, const ClaimedRun& run,
                                                      const std::string& commit) {
  return withConnection(
      *pool_, "looking for an equal compile", [&](pqxx::connection& c) -> llvm::Expected<Duplicate> {
        pqxx::read_transaction tx(c);
        pqxx::result r = tx.exec_params(
            "SELECT p.id::text, p.success, p.version FROM compile p, compile me WHERE me.id = $2::uuid "
            "AND p.environment = $1::uuid AND p.id <> me.id AND p.substitute_compile_id IS NULL AND "
            "p.success "
            "AND p.completed IS NOT NULL AND p.completed > me.requested AND p.metadata->>'commit' = $3 "
            "AND p.do_export = me.do_export AND p.partial = me.partial "
            "AND p.requested_environment_variables = me.requested_environment_variables "
            "ORDER BY p.completed DESC LIMIT 1",
            env, run.id, commit);
        Duplicate d;
        if (r.empty()) return d;
        d.found = true;
        d.compileId = r[0][0].as<std::string>();
        d.success = r[0][1].as<bool>();
        if (!r[0][2].is_null()) d.version = r[0][2].as<int>();
        return d;
      });
}

llvm::Expected<bool> CompileQueue::finishAsDuplicate(const ClaimedRun& run, const Duplicate& dup) {
  return withConnection(
      *pool_, "completing a duplicate compile", [&](pqxx::connection& c) -> llvm::Expected<bool> {
        pqxx::work tx(c);
        std::vector<std::string> ids = run.absorbed;
        ids.push_back(run.id);
        for (const std::string& id : ids)
          tx.exec_params(
              "UPDATE compile SET completed = clock_timestamp(), success = p.success, version = p.version, "
              "compile_data = p.compile_data, handled = true, substitute_compile_id = p.id, "
              "metadata = compile.metadata || jsonb_build_object('commit', p.metadata->>'commit') "
              "FROM compile p WHERE compile.id = $1::uuid AND p.id = $2::uuid",
              id, dup.compileId);
        tx.commit();
        return true;
      });
}

} // namespace inm::store

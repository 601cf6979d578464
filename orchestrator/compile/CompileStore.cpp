// libpqxx adapter of the compile service (see CompileStore.h). Connections are opened lazily up to the bound
// and dropped when they break, so a PostgreSQL restart costs one failed operation, not a wedged service.
#include "CompileStore.h"

#include "compile/Merge.h"

#include <pqxx/pqxx>

namespace inm::compile {

namespace {
llvm::Error dbError(const char* what, const std::exception& e) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "database: %s: %s", what, e.what());
}
} // namespace

CompileStore::CompileStore(std::string conninfo, unsigned maxConnections)
    : conninfo_(std::move(conninfo)), max_(maxConnections ? maxConnections : 1) {}

CompileStore::~CompileStore() = default;

template <typename F>
auto CompileStore::withConnection(const char* what, F&& f) -> decltype(f(std::declval<pqxx::connection&>())) {
  std::unique_ptr<pqxx::connection> conn;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] { return !idle_.empty() || open_ < max_; });
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  auto giveBack = [&](bool keep) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (keep && conn)
      idle_.push_back(std::move(conn));
    else
      --open_;
    freed_.notify_one();
  };
  try {
    if (!conn) conn = std::make_unique<pqxx::connection>(conninfo_);
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

llvm::Expected<std::string> CompileStore::insertRequest(const CompileRequest& r) {
  return withConnection("queueing a compile", [&](pqxx::connection& c) -> llvm::Expected<std::string> {
    pqxx::work tx(c);
    pqxx::result env = tx.exec_params("SELECT 1 FROM environment WHERE id = $1::uuid", r.environment);
    if (env.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "environment %s does not exist",
                                     r.environment.c_str());
    pqxx::result res = tx.exec_params(
        "INSERT INTO compile (id, environment, requested, do_export, force_update, metadata, "
        "requested_environment_variables, partial) VALUES (gen_random_uuid(), $1::uuid, clock_timestamp(), "
        "$2, $3, "
        "$4::jsonb, $5::jsonb, $6) RETURNING id::text",
        r.environment, r.doExport, r.forceUpdate, r.metadata.dump(), r.envVars.dump(), r.partial);
    tx.commit();
    return res[0][0].as<std::string>();
  });
}

llvm::Expected<EnvInfo> CompileStore::envInfo(const std::string& env) {
  return withConnection("reading the environment", [&](pqxx::connection& c) -> llvm::Expected<EnvInfo> {
    pqxx::read_transaction tx(c);
    EnvInfo info;
    pqxx::result e =
        tx.exec_params("SELECT halted, repo_url, repo_branch, settings::text, "
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

llvm::Expected<ClaimedRun> CompileStore::claimNext(const std::string& env) {
  return withConnection("starting a compile", [&](pqxx::connection& c) -> llvm::Expected<ClaimedRun> {
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

llvm::Expected<std::string> CompileStore::beginStage(const std::string& compileId, const std::string& name,
                                                     const std::string& command) {
  return withConnection("recording a compile stage", [&](pqxx::connection& c) -> llvm::Expected<std::string> {
    pqxx::work tx(c);
    pqxx::result r = tx.exec_params("INSERT INTO report (id, compile, name, command, started) VALUES "
                                    "(gen_random_uuid(), $1::uuid, $2, $3, "
                                    "clock_timestamp()) RETURNING id::text",
                                    compileId, name, command);
    tx.commit();
    return r[0][0].as<std::string>();
  });
}

llvm::Expected<bool> CompileStore::endStage(const std::string& reportId, const std::string& command,
                                            const std::string& out, const std::string& err, int rc) {
  return withConnection("completing a compile stage", [&](pqxx::connection& c) -> llvm::Expected<bool> {
    pqxx::work tx(c);
    tx.exec_params(
        "UPDATE report SET completed = clock_timestamp(), outstream = $2, errstream = $3, returncode = $4, "
        "command = CASE WHEN $5 = '' THEN command ELSE $5 END WHERE id = $1::uuid",
        reportId, out, err, rc, command);
    tx.commit();
    return true;
  });
}

llvm::Expected<bool> CompileStore::finish(const ClaimedRun& run, bool success, std::optional<int> version,
                                          const nlohmann::json& compileData) {
  return withConnection("completing a compile", [&](pqxx::connection& c) -> llvm::Expected<bool> {
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

llvm::Expected<int> CompileStore::failUnfinished() {
  return withConnection("recovering unfinished compiles", [&](pqxx::connection& c) -> llvm::Expected<int> {
    pqxx::work tx(c);
    pqxx::result heads = tx.exec("SELECT id::text FROM compile WHERE started IS NOT NULL AND completed IS "
                                 "NULL AND substitute_compile_id IS NULL");
    for (const auto& row : heads)
      tx.exec_params(
          "INSERT INTO report (id, compile, name, command, started, completed, errstream, returncode) VALUES "
          "(gen_random_uuid(), $1::uuid, 'Server restarted', '', clock_timestamp(), clock_timestamp(), "
          "'the server stopped while this compile was running; it was marked as failed at the next start', "
          "1)",
          row[0].as<std::string>());
    pqxx::result done = tx.exec(
        "UPDATE compile SET completed = clock_timestamp(), success = false, handled = true, compile_data = "
        "'{\"errors\": [{\"type\": \"ServerRestarted\", \"message\": \"the server stopped during this "
        "compile\"}]}' "
        "WHERE started IS NOT NULL AND completed IS NULL");
    tx.commit();
    return int(done.affected_rows());
  });
}

llvm::Expected<std::vector<std::string>> CompileStore::environmentsWithQueue() {
  return withConnection(
      "listing compile queues", [&](pqxx::connection& c) -> llvm::Expected<std::vector<std::string>> {
        pqxx::read_transaction tx(c);
        std::vector<std::string> out;
        for (const auto& row :
             tx.exec("SELECT DISTINCT environment::text FROM compile WHERE started IS NULL"))
          out.push_back(row[0].as<std::string>());
        return out;
      });
}

llvm::Expected<std::vector<std::pair<std::string, std::string>>> CompileStore::cronSettings() {
  using Out = std::vector<std::pair<std::string, std::string>>;
  return withConnection("reading auto_full_compile", [&](pqxx::connection& c) -> llvm::Expected<Out> {
    pqxx::read_transaction tx(c);
    Out out;
    for (const auto& row : tx.exec("SELECT id::text, settings->>'auto_full_compile' FROM environment "
                                   "WHERE coalesce(settings->>'auto_full_compile', '') <> '' "
                                   "AND NOT is_marked_for_deletion"))
      out.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
    return out;
  });
}

llvm::Expected<int> CompileStore::purgeOlderThan(std::chrono::seconds retention) {
  return withConnection("purging old compile reports", [&](pqxx::connection& c) -> llvm::Expected<int> {
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

llvm::Expected<nlohmann::json> CompileStore::listCompiles(const std::string& env, int limit) {
  return withConnection(
      "listing compile reports", [&](pqxx::connection& c) -> llvm::Expected<nlohmann::json> {
        pqxx::read_transaction tx(c);
        pqxx::result r = tx.exec_params(
            std::string("SELECT coalesce(json_agg(q.j), '[]')::text FROM (SELECT ") + kCompileJson +
                " AS j FROM compile c WHERE c.environment = $1::uuid "
                "ORDER BY c.requested DESC, c.id LIMIT $2) q",
            env, limit);
        return nlohmann::json::parse(r[0][0].as<std::string>());
      });
}

llvm::Expected<nlohmann::json> CompileStore::compileDetail(const std::string& compileId) {
  return withConnection(
      "reading a compile report", [&](pqxx::connection& c) -> llvm::Expected<nlohmann::json> {
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

llvm::Expected<nlohmann::json> CompileStore::queue(const std::string& env) {
  return withConnection(
      "listing the compile queue", [&](pqxx::connection& c) -> llvm::Expected<nlohmann::json> {
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

llvm::Expected<bool> CompileStore::recordCommit(const ClaimedRun& run, const std::string& commit) {
  return withConnection("recording the commit", [&](pqxx::connection& c) -> llvm::Expected<bool> {
    pqxx::work tx(c);
    tx.exec_params("UPDATE compile SET metadata = metadata || jsonb_build_object('commit', $2::text) "
                   "WHERE id = $1::uuid OR substitute_compile_id = $1::uuid",
                   run.id, commit);
    tx.commit();
    return true;
  });
}

llvm::Expected<Duplicate> CompileStore::findDuplicate(const std::string& env, const ClaimedRun& run,
                                                      const std::string& commit) {
  return withConnection(
      "looking for an equal compile", [&](pqxx::connection& c) -> llvm::Expected<Duplicate> {
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

llvm::Expected<bool> CompileStore::finishAsDuplicate(const ClaimedRun& run, const Duplicate& dup) {
  return withConnection("completing a duplicate compile", [&](pqxx::connection& c) -> llvm::Expected<bool> {
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

} // namespace inm::compile

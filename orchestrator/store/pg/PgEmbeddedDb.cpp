// libpqxx implementation of the embedded mode's database view (include/store/EmbeddedDb.h). The statements
// are the ones embedded/EmbeddedDeploy.cpp ran itself before issue #26 moved them here. Every libpqxx
// exception is caught in this file and rethrown as StoreError naming the operation, so the embedded mode
// handles one exception type and sees no database type.
#include "Connection.h"
#include "model/Vocabulary.h"
#include "store/EmbeddedDb.h"

#include <pqxx/pqxx>

namespace inm::store {

namespace {
template <typename F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& e) {
    throw StoreError(std::string(what) + ": " + e.what());
  }
}
} // namespace

struct EmbeddedDb::Impl {
  std::unique_ptr<pqxx::connection> conn;
};

bool EmbeddedDb::reachable(const std::string& conninfo) {
  try {
    openConnection(conninfo);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void EmbeddedDb::ensureDatabase(const std::string& conninfo, const std::string& name) {
  guarded("creating the database", [&] {
    std::unique_ptr<pqxx::connection> c = openConnection(conninfo);
    pqxx::nontransaction tx(*c);
    if (tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", name).empty())
      tx.exec("CREATE DATABASE " + tx.quote_name(name));
  });
}

EmbeddedDb::EmbeddedDb(const std::string& conninfo) : impl_(std::make_unique<Impl>()) {
  guarded("connecting to the database", [&] { impl_->conn = openConnection(conninfo); });
}

EmbeddedDb::~EmbeddedDb() = default;

int EmbeddedDb::latestVersion(const std::string& env) {
  return guarded("reading the newest version", [&] {
    pqxx::read_transaction tx(*impl_->conn);
    return tx
        .exec_params("SELECT coalesce(max(version), 0) FROM configurationmodel WHERE environment = $1::uuid",
                     env)[0][0]
        .as<int>();
  });
}

std::string EmbeddedDb::now() {
  return guarded("reading the database clock", [&] {
    pqxx::read_transaction tx(*impl_->conn);
    return tx.exec("SELECT now()::text")[0][0].as<std::string>();
  });
}

void EmbeddedDb::requestRepair(const std::string& env) {
  guarded("requesting a full deploy", [&] {
    pqxx::work tx(*impl_->conn);
    tx.exec_params(
        "INSERT INTO scheduler_request (environment, kind, payload) VALUES ($1::uuid, $3, $2::jsonb)", env,
        std::string("{\"repair\":true}"), std::string(model::spelling(model::SchedulerRequestKind::Deploy)));
    tx.exec_params("SELECT pg_notify('inmanta_scheduler', $1)", env);
    tx.commit();
  });
}

DeployProgress EmbeddedDb::progress(const std::string& env, int version, const std::string& since) {
  return guarded("reading the deploy progress", [&] {
    pqxx::read_transaction tx(*impl_->conn);
    DeployProgress out;
    auto processed = tx.exec_params(
        "SELECT coalesce(last_processed_model_version, 0) FROM scheduler WHERE environment = $1::uuid", env);
    out.lastProcessedVersion = processed.empty() ? 0 : processed[0][0].as<int>();
    auto rows = tx.exec_params(
        "SELECT s.resource_id, s.agent, CASE WHEN s.is_deploying THEN 'deploying' WHEN s.is_undefined THEN "
        "'undefined' "
        "WHEN s.blocked = 'BLOCKED' THEN 'skipped_for_undefined' WHEN s.current_intent_attribute_hash <> "
        "coalesce(s.last_deployed_attribute_hash, '') OR s.last_handler_run_at IS NULL OR "
        "(s.last_handler_run_at < $3::timestamptz AND s.blocked = 'NOT_BLOCKED') THEN 'available' "
        "ELSE s.last_non_deploying_status END, "
        "(SELECT count(*) FROM resourceaction a JOIN resourceaction_resource x ON x.resource_action_id = "
        "a.action_id "
        " WHERE x.environment = s.environment AND x.resource_id = s.resource_id AND a.action = 'deploy' "
        " AND a.started >= $3::timestamptz AND a.change IS NOT NULL AND a.change <> 'nochange') "
        "FROM resource_persistent_state s JOIN resource r ON r.environment = s.environment AND "
        "r.resource_id = s.resource_id AND r.model = $2 WHERE s.environment = $1::uuid ORDER BY "
        "s.resource_id",
        env, version, since);
    out.rows.reserve(rows.size());
    for (const auto& row : rows)
      out.rows.push_back(DeployProgressRow{row[0].as<std::string>(), row[1].as<std::string>(),
                                           row[2].as<std::string>(), row[3].as<int>() > 0});
    return out;
  });
}

} // namespace inm::store

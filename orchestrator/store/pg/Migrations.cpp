// The migration runner (see Store.h, migrate()). Runs in one transaction under a transaction-level advisory
// lock, so two servers starting at once apply each migration once: the second waits, then finds the schema
// up to date. The schema_version table records each applied number.
#include "Migrations.h"

#include "Connection.h"

namespace inm::store {

namespace {
constexpr int64_t kMigrationLockKey = 0x696e6d616e746131; // "inmanta1"
} // namespace

int knownSchemaVersion() { return kMigrations.empty() ? 0 : kMigrations.back().number; }

llvm::Expected<int> migrate(const DbSettings& db) {
  return withTx<int>(db, "applying migrations", [&](pqxx::work& tx) -> int {
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
    tx.exec("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, name varchar NOT NULL, "
            "applied timestamptz NOT NULL DEFAULT now())");
    pqxx::result r = tx.exec("SELECT coalesce(max(version), 0) FROM schema_version");
    int current = r[0][0].as<int>();
    if (current > knownSchemaVersion())
      throw StoreFailure{model::ErrorCode::Conflict,
                         "the database schema is at version " + std::to_string(current) +
                             ", newer than this server knows (" + std::to_string(knownSchemaVersion()) +
                             "); run a newer server or restore a matching database"};
    for (const Migration& m : kMigrations) {
      if (m.number <= current) continue;
      tx.exec(m.sql);
      tx.exec_params("INSERT INTO schema_version (version, name) VALUES ($1, $2)", m.number,
                     std::string(m.name));
      current = m.number;
    }
    return current;
  });
}

} // namespace inm::store

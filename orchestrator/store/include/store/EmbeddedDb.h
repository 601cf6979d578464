// `inmanta deploy`'s view of its private PostgreSQL (orchestrator/embedded, docs/deploy.md): whether the
// cluster accepts connections, the `inmanta` database created once, and the few reads and the one write the
// embedded mode makes beside the server's API (the newest version, a repair request, the progress rows).
// Implemented in pg/PgEmbeddedDb.cpp (the SQL moved from embedded/EmbeddedDeploy.cpp). Invariant: no
// database type crosses this header; every failure is a StoreError naming what was being done.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace inm::store {

/// A database operation of the store failed (the database is unreachable, or a statement failed); what()
/// names the operation and the cause.
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One resource of the version being deployed, as the progress line and the final table show it.
struct DeployProgressRow {
  std::string resourceId; ///< unversioned
  std::string agent;
  std::string status;   ///< the public deploy status (deploying, available, deployed, failed, …)
  bool changed = false; ///< a deploy with a change started since the watch began
};

/// What the scheduler has done with the version being deployed.
struct DeployProgress {
  int lastProcessedVersion = 0; ///< the scheduler's last_processed_model_version (0 = none)
  std::vector<DeployProgressRow> rows;
};

class EmbeddedDb {
 public:
  /// True when `conninfo` (a libpq connection string) accepts a connection now.
  static bool reachable(const std::string& conninfo);
  /// Connects to the maintenance database `conninfo` and creates database `name` unless it exists.
  static void ensureDatabase(const std::string& conninfo, const std::string& name);
  /// A connection to the embedded mode's database; throws StoreError.
  explicit EmbeddedDb(const std::string& conninfo);
  ~EmbeddedDb();

  /// The newest version of `env` (0 = none).
  int latestVersion(const std::string& env);
  /// The database's clock now, as timestamptz text (the start of the watch).
  std::string now();
  /// Queues a full deploy (repair) for the scheduler of `env` and notifies it.
  void requestRepair(const std::string& env);
  /// The state of every resource of `version` of `env`; a deploy counts as a change when it started at or
  /// after `since` (text from now()).
  DeployProgress progress(const std::string& env, int version, const std::string& since);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace inm::store

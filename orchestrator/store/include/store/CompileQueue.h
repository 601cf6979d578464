// The compile service's queue (orchestrator/compile, docs/autonomous.md): the `compile` queue rows and the
// `report` stage rows of migration 001, implemented in pg/PgCompileQueue.cpp (moved from
// compile/CompileStore.*) behind a small bounded connection pool. Every method blocks and is called on the
// compile service's blocking pool; database exceptions stop in store/pg and come back as llvm::Error naming
// the operation. Invariant: each method is one transaction.
#pragma once

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace inm::store {

/// One compile request (POST /api/v1/notify, inmanta-cli environment recompile, the cron, ...).
struct CompileRequest {
  std::string environment;  ///< environment id (uuid text)
  bool forceUpdate = false; ///< pull the repository first (`update`)
  bool doExport = true;     ///< export to the server; false compiles only (-j FILE)
  bool partial = false;
  nlohmann::json metadata = nlohmann::json::object(); ///< ends up in the version's export metadata
  nlohmann::json envVars = nlohmann::json::object();  ///< requested environment variables of the compiler
};

/// What a run needs to know about its environment before it starts.
struct EnvInfo {
  bool exists = false;
  bool halted = false;
  std::string repoUrl, repoBranch;
  nlohmann::json settings = nlohmann::json::object();
  bool hasQueued = false;        ///< a request waits (started IS NULL)
  double secondsSinceLast = 1e9; ///< since the last run completed (for recompile_backoff)
};

/// A claimed run: its head request and the ones it absorbed.
struct ClaimedRun {
  bool found = false;
  std::string id;
  std::vector<std::string> absorbed;
  bool forceUpdate = false, doExport = true, partial = false;
  nlohmann::json metadata, envVars;
  std::string requested; ///< when the head was requested (text)
};

/// An earlier run whose result a duplicate request reuses.
struct Duplicate {
  bool found = false;
  std::string compileId;
  bool success = false;
  std::optional<int> version;
};

class CompileQueue {
 public:
  /// Connections to `conninfo` (a libpq connection string) are opened lazily, at most `maxConnections`.
  CompileQueue(std::string conninfo, unsigned maxConnections);
  ~CompileQueue();

  /// Queues `r`; returns the new compile id (an error names an environment that does not exist).
  llvm::Expected<std::string> insertRequest(const CompileRequest& r);
  /// What a run needs to know about `env` (exists = false when there is no such environment).
  llvm::Expected<EnvInfo> envInfo(const std::string& env);
  /// In one transaction: if no run of `env` is in progress, starts the oldest queued request and the ones it
  /// absorbs (Merge.h); `found` is false when nothing was claimed.
  llvm::Expected<ClaimedRun> claimNext(const std::string& env);
  /// Starts a `report` row of stage `name` of a compile; returns its id.
  llvm::Expected<std::string> beginStage(const std::string& compileId, const std::string& name,
                                         const std::string& command);
  /// Completes a stage row; a non-empty `command` replaces the one recorded at its start.
  llvm::Expected<bool> endStage(const std::string& reportId, const std::string& command,
                                const std::string& out, const std::string& err, int rc);
  /// Completes the run and the requests it absorbed with one outcome.
  llvm::Expected<bool> finish(const ClaimedRun& run, bool success, std::optional<int> version,
                              const nlohmann::json& compileData);
  /// Writes the commit a run compiles into its metadata (and that of the requests it absorbed).
  llvm::Expected<bool> recordCommit(const ClaimedRun& run, const std::string& commit);
  /// A completed, successful, equal (do_export, partial, environment variables) run of `commit` that was
  /// still running when `run`'s request arrived.
  llvm::Expected<Duplicate> findDuplicate(const std::string& env, const ClaimedRun& run,
                                          const std::string& commit);
  /// Completes `run` (and its absorbed requests) with the result of `dup`.
  llvm::Expected<bool> finishAsDuplicate(const ClaimedRun& run, const Duplicate& dup);
  /// Marks runs started but never completed as failed, each with a report row explaining why.
  llvm::Expected<int> failUnfinished();
  /// Environments with queued requests.
  llvm::Expected<std::vector<std::string>> environmentsWithQueue();
  /// (environment, auto_full_compile) for every environment where the setting is non-empty.
  llvm::Expected<std::vector<std::pair<std::string, std::string>>> cronSettings();
  /// Deletes compiles completed longer than `retention` ago (their reports cascade); returns how many.
  llvm::Expected<int> purgeOlderThan(std::chrono::seconds retention);

  // Reads for the API (JSON with the reference's field names; times as ISO 8601 text).
  /// Compiles of an environment, newest first, at most `limit`.
  llvm::Expected<nlohmann::json> listCompiles(const std::string& env, int limit);
  /// One compile with its `reports`; null when it does not exist.
  llvm::Expected<nlohmann::json> compileDetail(const std::string& compileId);
  /// Compiles of an environment not completed yet (running first), oldest first.
  llvm::Expected<nlohmann::json> queue(const std::string& env);

  /// The connections (opaque here; defined in pg/PgCompileQueue.cpp).
  struct Pool;

 private:
  std::unique_ptr<Pool> pool_;
};

} // namespace inm::store

// Private to store/: the libpqxx implementation of store::Store, split over PgStore.cpp (projects,
// environments, settings, files, scheduler requests) and PgVersions.cpp (versions and desired state; a
// version's resources, its GET answer text and a diff's changed resources are read in PgVersionReads.cpp).
// Every method is one withTx() transaction; SQL uses bound parameters only; large inserts are single
// statements over jsonb_to_recordset batches, never one statement per resource.
#pragma once

#include "Connection.h"
#include "store/Store.h"

namespace inm::store {

/// The public status of a resource from its rps row `rps` (orchestrator.md §5.2); 'available' when absent.
extern const char* const kStatusSql;

/// INSERT a scheduler_request row and NOTIFY inmanta_scheduler inside `tx`.
void insertSchedulerRequest(pqxx::work& tx, const std::string& env, model::SchedulerRequestKind kind,
                            const nlohmann::json& payload);
/// Throws NotFound unless environment `env` exists; returns its `halted` flag.
bool requireEnvironment(pqxx::work& tx, const std::string& env);
/// The environment lock (migration 008): a writer of rows without a foreign key to their environment holds
/// the environment row FOR KEY SHARE until it commits (shared: writers do not wait for one another); deleting
/// or clearing takes it FOR UPDATE before touching any row, so it waits for the writers in flight and the
/// writers after it find the environment gone (or cleared). Throws NotFound when `env` does not exist.
void lockEnvironmentShared(pqxx::work& tx, const std::string& env);
void lockEnvironmentExclusive(pqxx::work& tx, const std::string& env);
/// COPYs `rows` into the resource table as version `version` of `env`, inside `tx`.
void copyResources(pqxx::work& tx, const std::string& env, int64_t version,
                   const std::vector<ResourceRow>& rows);

/// The opening of a put_version (locks, checks, the configurationmodel row) and its close (unknowns, agents,
/// code links, the `store` action); PgVersions.cpp, shared with the delta form (PgDeltaVersions.cpp).
void beginVersion(pqxx::work& tx, const VersionInput& in);
void finishVersion(pqxx::work& tx, const VersionInput& in);
/// Derived from the stored rows of version `v`: the dependents (transitively) of its undefined resources that
/// are not undefined themselves, sorted; and whether no requires edge joins two different named sets.
std::vector<std::string> skippedForUndeployable(pqxx::work& tx, const std::string& env, int64_t v);
bool suitableForPartial(pqxx::work& tx, const std::string& env, int64_t v);

class PgStore final : public Store {
 public:
  explicit PgStore(DbSettings db) : db_(std::move(db)) {}

  llvm::Error ping() override;
  llvm::Expected<nlohmann::json> createProject(const std::string& id, const std::string& name) override;
  llvm::Expected<nlohmann::json> listProjects() override;
  llvm::Expected<nlohmann::json> getProject(const std::string& id) override;
  llvm::Expected<nlohmann::json> updateProject(const std::string& id, const std::string& name) override;
  llvm::Error deleteProject(const std::string& id) override;
  llvm::Expected<nlohmann::json> createEnvironment(const nlohmann::json& spec) override;
  llvm::Expected<nlohmann::json> listEnvironments() override;
  llvm::Expected<nlohmann::json> getEnvironment(const std::string& id) override;
  llvm::Expected<nlohmann::json> updateEnvironment(const std::string& id,
                                                   const nlohmann::json& changes) override;
  llvm::Error deleteEnvironment(const std::string& id) override;
  llvm::Error clearEnvironment(const std::string& id) override;
  llvm::Error setHalted(const std::string& id, bool halted) override;
  llvm::Expected<nlohmann::json> getSettings(const std::string& env) override;
  llvm::Error writeSetting(const std::string& env, const std::string& key,
                           const std::optional<nlohmann::json>& value) override;
  llvm::Error protectSettings(const std::string& env, const nlohmann::json& settings) override;

  llvm::Expected<int64_t> reserveVersion(const std::string& env) override;
  llvm::Error putVersion(const VersionInput& input) override;
  llvm::Error
  putVersionStreamed(const std::string& env,
                     const std::function<llvm::Expected<StreamedVersion>(ResourceSink&)>& produce) override;
  llvm::Error putDeltaVersion(const DeltaVersionInput& input) override;
  llvm::Expected<nlohmann::json> deltaBase(const std::string& env) override;
  llvm::Expected<int64_t> partialBase(const std::string& env) override;
  llvm::Expected<std::pair<int64_t, int64_t>> latestVersions(const std::string& env) override;
  llvm::Expected<nlohmann::json> versionResources(const std::string& env, int64_t version) override;
  llvm::Error versionAnswerPieces(const std::string& env, int64_t version,
                                  const std::function<bool(std::string& piece)>& sink) override;
  llvm::Expected<nlohmann::json> changedResources(const std::string& env, int64_t from, int64_t to) override;
  llvm::Expected<nlohmann::json> releaseVersion(const std::string& env, int64_t version) override;
  llvm::Expected<nlohmann::json> listVersions(const std::string& env, int64_t start, int64_t limit) override;
  llvm::Expected<nlohmann::json> getVersion(const std::string& env, int64_t version) override;
  llvm::Expected<nlohmann::json> versionActions(const std::string& env, int64_t version) override;
  llvm::Expected<nlohmann::json> versionUnknowns(const std::string& env, int64_t version) override;
  llvm::Error deleteVersion(const std::string& env, int64_t version) override;
  llvm::Expected<nlohmann::json> desiredStates(const std::string& env) override;
  llvm::Expected<int64_t> purgeVersions(const std::string& env, int64_t keep) override;

  llvm::Expected<std::vector<std::string>> missingFiles(const std::vector<std::string>& hashes) override;
  llvm::Error putFile(const std::string& hash, const std::string& content) override;
  llvm::Error putFiles(const std::vector<std::pair<std::string, std::string>>& files) override;
  llvm::Expected<std::optional<std::string>> getFile(const std::string& hash) override;
  llvm::Error putCode(const std::string& env, int64_t cmVersion, const nlohmann::json& modules) override;
  llvm::Expected<nlohmann::json> resourcePage(const std::string& env, const ResourcePageQuery& q) override;
  llvm::Expected<nlohmann::json> resourceDetails(const std::string& env, const std::string& rid) override;
  llvm::Expected<nlohmann::json> resourceHistory(const std::string& env, const std::string& rid) override;
  llvm::Expected<nlohmann::json> resourceActions(const std::string& env, const std::string& rid) override;
  llvm::Expected<nlohmann::json> parameters(const std::string& env,
                                            const std::optional<std::string>& rid) override;
  llvm::Expected<nlohmann::json> setParameter(const std::string& env, const nlohmann::json& param) override;
  llvm::Expected<nlohmann::json> parameterFreshness(const std::string& env, const std::string& name,
                                                    const std::string& rid, int64_t expireSeconds) override;
  llvm::Error requestFacts(const std::string& env, const std::vector<std::string>& resourceIds) override;
  llvm::Expected<nlohmann::json> factsToRenew(int64_t olderThanSeconds) override;
  llvm::Error deleteParameter(const std::string& env, const std::string& name,
                              const std::string& rid) override;
  llvm::Expected<nlohmann::json> agents(const std::string& env) override;
  llvm::Error agentAction(const std::string& env, const std::optional<std::string>& name,
                          const std::string& action) override;
  llvm::Expected<nlohmann::json> createDryrun(const std::string& env, int64_t version) override;
  llvm::Expected<nlohmann::json> dryruns(const std::string& env, std::optional<int64_t> version) override;
  llvm::Expected<nlohmann::json> dryrun(const std::string& env, const std::string& id) override;
  llvm::Expected<nlohmann::json> queryActions(const std::string& env, const ActionQuery& query) override;
  llvm::Expected<nlohmann::json> dependencyEvents(const std::string& env, const std::string& rid,
                                                  int64_t version) override;
  llvm::Expected<nlohmann::json> complianceReport(const std::string& env,
                                                  const std::vector<std::string>& rids) override;
  llvm::Expected<nlohmann::json> schedulerStatus(const std::string& env) override;
  llvm::Error recordToken(const std::string& jti, const std::string& env,
                          const std::vector<std::string>& clientTypes, int64_t expireSeconds) override;
  llvm::Expected<std::optional<bool>> tokenRevoked(const std::string& jti) override;
  llvm::Error revokeToken(const std::string& env, const std::string& jti) override;
  llvm::Expected<nlohmann::json> tokens(const std::string& env) override;
  llvm::Error requestScheduler(const std::string& env, model::SchedulerRequestKind kind,
                               const nlohmann::json& payload) override;

 private:
  DbSettings db_;
};

} // namespace inm::store

// The orchestrator's storage interface (STYLE.md "The orchestrator"): one method per transactional use of the
// database, each returning llvm::Expected with model::Failure codes (NotFound, Conflict, BadRequest, and
// Unavailable when PostgreSQL cannot be reached). Methods block: service/ calls them on its bounded thread
// pool, never on the io_context. Rows are handed back as JSON objects in the API's field names. Invariant:
// every method is one transaction; a failure leaves the database as it was.
#pragma once

#include "model/Failure.h"
#include "model/Vocabulary.h"

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inm::store {

/// How to reach PostgreSQL ([database] options).
struct DbSettings {
  std::string host = "localhost";
  int port = 5432;
  std::string name = "inmanta";
  std::string username = "postgres";
  std::string password;
  int poolMaxSize = 10;
  int connectTimeoutSeconds = 5;
  /// The libpq connection string (values quoted).
  std::string connectionString() const;
};

/// Applies every embedded migration newer than the database's schema_version, in one transaction; does
/// nothing on an up-to-date schema; refuses (Failure Conflict) a schema newer than this binary knows.
/// Returns the schema version after the run.
llvm::Expected<int> migrate(const DbSettings& db);
/// The highest migration number embedded in this binary.
int knownSchemaVersion();

/// A resource of a version to store, already validated and hashed by the service.
struct ResourceRow {
  std::string resourceId; ///< unversioned
  std::string resourceType;
  std::string agent;
  std::string idValue;
  std::string attributesJson; ///< JSON text of the attributes (requires as unversioned ids)
  std::string attributeHash;
  bool undefined = false;
  std::optional<std::string> resourceSet;
};

/// One put_version.
struct VersionInput {
  std::string environment;
  int64_t version = 0;
  bool partial = false; ///< the version was picked by the server (PUT /api/v2/version/partial)
  std::optional<int64_t> partialBase;
  std::vector<ResourceRow> resources;
  std::vector<std::string> undeployable; ///< ids of undefined resources
  std::vector<std::string> skippedForUndeployable;
  nlohmann::json unknowns = nlohmann::json::array(); ///< [{resource, parameter, source, metadata}]
  nlohmann::json versionInfo;
  nlohmann::json pipConfig;
  nlohmann::json moduleVersionInfo; ///< {module: {name, version, requirements, for_agents, files_in_module}}
  std::vector<std::string> agents;  ///< agents of the resources
  bool suitableForPartial = true;
  /// Partial exports only: a module the base version uses may arrive with other code (else 400 naming it).
  bool allowHandlerCodeUpdate = false;
};

/// Where a streamed put_version writes its resources: begin() once the version number is known, then write()
/// batch after batch (rows without is_undefined/resource_set: those come from the body's tail, see
/// StreamedVersion). Both throw on failure; the store rolls the whole version back.
class ResourceSink {
 public:
  virtual ~ResourceSink() = default;
  virtual void begin(int64_t version) = 0;
  virtual void write(const std::vector<ResourceRow>& rows) = 0;
};

/// What a streamed put_version knows after its body: the VersionInput fields but resources/agents/graph ones
/// (those the store derives from the stored rows), plus the undefined ids and the resource sets by id.
struct StreamedVersion {
  VersionInput head;
  std::vector<std::string> undefinedIds;
  std::vector<std::pair<std::string, std::string>> resourceSets; ///< (resource id, set name)
  /// Set by a producer that saw every resource: the distinct agents (head.agents then holds them, sorted) and
  /// whether every `requires` names a resource of the version. Unset, the store derives both from the rows;
  /// false, it finds the offending resource itself for the error.
  bool agentsKnown = false;
  bool requiresClosed = false;
};

/// GET /api/v2/resource_actions (orchestrator.md §13, §15). Empty strings = no filter.
struct ActionQuery {
  std::string resourceType, agent, attribute, attributeValue;
  std::string logSeverity;                 ///< only actions with a log line of this level (upper-case)
  std::vector<std::string> excludeChanges; ///< drop actions whose change is one of these
  int64_t limit = 1000;
  /// Paging on (started, action_id): actions started before `lastTimestamp` (older page) or after
  /// `firstTimestamp` (newer page); `actionId` breaks ties among equal timestamps.
  std::string firstTimestamp, lastTimestamp, actionId;
};

/// Start of the Conflict message putVersion gives a partial version whose base is no longer the newest
/// version suitable for partial compiles (another version landed meanwhile): the caller rebuilds and retries.
inline constexpr const char* kPartialBaseChanged = "the base version of this partial export changed";

/// A delta put_version (our extension, docs/server.md "Delta versions"): the new version is the base
/// version's resources minus `removed` and minus the ids of `version.resources`, plus `version.resources`.
struct DeltaVersionInput {
  /// The version fields and the new or changed resources (graph fields are derived by the store).
  VersionInput version;
  int64_t base = 0;                 ///< must be the environment's latest stored version …
  std::string baseToken;            ///< … and carry this content token
  std::vector<std::string> removed; ///< unversioned ids of base resources the new version drops
};

/// Start of the Conflict message of a delta whose base is not the environment's latest version with the
/// given content token (deleted, replaced, never stored): the exporter then pushes the whole version.
inline constexpr const char* kDeltaBaseRefused = "the delta's base version";

/// What GET /api/v2/resource asks of the store (the service has checked every value): the listed resources
/// are the environment's resource_persistent_state rows with a resource row in a released version, orphans
/// only when `statusIn` is not empty; ordered by the sort field in byte order, ties by resource id ascending.
struct ResourcePageQuery {
  std::string sortField = "resource_type"; ///< resource_type, agent, resource_id_value or status
  bool ascending = false;
  /// field (resource_type, agent, resource_id_value) -> substrings, any of which must occur in it
  std::vector<std::pair<std::string, std::vector<std::string>>> substrings;
  std::vector<std::string> statusIn, statusOut; ///< any of statusIn (when not empty), none of statusOut
  int direction = 0;                            ///< 0: the first page; 1: after the cursor; -1: before it
  std::optional<std::string> cursorValue;       ///< the sort value at the cursor; none: the cursor row's own
  std::optional<std::string> cursorId;          ///< last_id / first_id
  int64_t limit = 1000;
  bool deploySummary = false;
};

/// The whole store (implemented in pg/ on PostgreSQL).
class Store {
 public:
  virtual ~Store() = default;

  /// Cheap connectivity probe (SELECT 1).
  virtual llvm::Error ping() = 0;

  // Projects and environments (orchestrator.md §10). Objects use the v2 field names.
  virtual llvm::Expected<nlohmann::json> createProject(const std::string& id, const std::string& name) = 0;
  virtual llvm::Expected<nlohmann::json> listProjects() = 0;
  virtual llvm::Expected<nlohmann::json> getProject(const std::string& id) = 0;
  virtual llvm::Expected<nlohmann::json> updateProject(const std::string& id, const std::string& name) = 0;
  virtual llvm::Error deleteProject(const std::string& id) = 0;
  /// spec: {id, project_id, name, repo_url, repo_branch, description, icon}.
  virtual llvm::Expected<nlohmann::json> createEnvironment(const nlohmann::json& spec) = 0;
  virtual llvm::Expected<nlohmann::json> listEnvironments() = 0;
  virtual llvm::Expected<nlohmann::json> getEnvironment(const std::string& id) = 0;
  /// changes: any of name, project_id, repo_url, repo_branch, description, icon.
  virtual llvm::Expected<nlohmann::json> updateEnvironment(const std::string& id,
                                                           const nlohmann::json& changes) = 0;
  virtual llvm::Error deleteEnvironment(const std::string& id) = 0;
  /// Deletes every version, resource, state, parameter, agent … of the environment but keeps it.
  virtual llvm::Error clearEnvironment(const std::string& id) = 0;
  /// halt/resume: sets `halted`, (un)pauses agents per §6.10 and asks the scheduler.
  virtual llvm::Error setHalted(const std::string& id, bool halted) = 0;

  // Settings: {"settings": {key: value}, "protected": [keys]} of stored values only.
  virtual llvm::Expected<nlohmann::json> getSettings(const std::string& env) = 0;
  /// Stores (or with nullopt removes) one value and asks the scheduler (settings_changed).
  virtual llvm::Error writeSetting(const std::string& env, const std::string& key,
                                   const std::optional<nlohmann::json>& value) = 0;
  /// Sets values and marks them protected.
  virtual llvm::Error protectSettings(const std::string& env, const nlohmann::json& settings) = 0;

  // Versions (orchestrator.md §4).
  virtual llvm::Expected<int64_t> reserveVersion(const std::string& env) = 0;
  virtual llvm::Error putVersion(const VersionInput& input) = 0;
  /// put_version with bounded memory: `produce` parses the body, feeding resources to the sink in batches,
  /// and returns the rest; the store then derives undeployable, skipped_for_undeployable, the partial-compile
  /// flag and the agents from the stored rows with SQL, all in one transaction.
  virtual llvm::Error
  putVersionStreamed(const std::string& env,
                     const std::function<llvm::Expected<StreamedVersion>(ResourceSink&)>& produce) = 0;
  /// Stores a delta version in one transaction: the unchanged rows are copied from the base in SQL, the new
  /// and changed ones written; every derived field equals what putVersion computes for the whole version.
  /// Conflict starting with kDeltaBaseRefused when the base is not the latest version with that token.
  virtual llvm::Error putDeltaVersion(const DeltaVersionInput& input) = 0;
  /// The base a delta may name: {"version": latest stored version, "token": its content token} (0 and null
  /// when the environment has no version).
  virtual llvm::Expected<nlohmann::json> deltaBase(const std::string& env) = 0;
  /// The newest version with is_suitable_for_partial_compiles (0 if none).
  virtual llvm::Expected<int64_t> partialBase(const std::string& env) = 0;
  /// The latest stored version number (0 if none) and the latest released one.
  virtual llvm::Expected<std::pair<int64_t, int64_t>> latestVersions(const std::string& env) = 0;
  /// Resources of one version: [{resource_id, resource_type, agent, resource_id_value, attributes,
  /// attribute_hash, is_undefined, resource_set}], sorted by resource_id.
  virtual llvm::Expected<nlohmann::json> versionResources(const std::string& env, int64_t version) = 0;
  /// The `resources` array of GET /api/v1/version/<v> (without logs) as JSON text, built from the stored
  /// attributes (no parse and re-dump here) and handed to `sink` in pieces as the rows are read in batches
  /// (a cursor), so neither the whole result nor the whole text is ever in memory: per resource environment,
  /// model, resource_id, resource_version_id, resource_type, agent, resource_id_value, attributes (with
  /// versioned requires, version and id), attribute_hash, status and id_fields, sorted by resource_id. The
  /// pieces joined are the array; the first comes only after the checks (NotFound when the environment or
  /// version is absent: no piece at all). `sink` may take the piece's buffer; returning false abandons the
  /// read (the call then returns a Cancelled-like Unavailable error that the caller ignores).
  virtual llvm::Error versionAnswerPieces(const std::string& env, int64_t version,
                                          const std::function<bool(std::string& piece)>& sink) = 0;
  /// The resources whose attributes or attribute hash differ between two versions (NotFound when either is
  /// absent): [{resource_id, from (attributes or null when absent), to (likewise), same_hash (null unless
  /// both)}]; equal ones are left out by the database, so only what changed is ever parsed. Rows with equal
  /// attribute hashes are compared on requires and provides only (the hash covers every other attribute).
  virtual llvm::Expected<nlohmann::json> changedResources(const std::string& env, int64_t from,
                                                          int64_t to) = 0;
  /// Releases a version (404/409 per §4), creates missing rps rows, asks the scheduler to read it.
  virtual llvm::Expected<nlohmann::json> releaseVersion(const std::string& env, int64_t version) = 0;
  /// v1 version rows, newest first: {versions: [...], count}.
  virtual llvm::Expected<nlohmann::json> listVersions(const std::string& env, int64_t start,
                                                      int64_t limit) = 0;
  /// One version row (NotFound when absent).
  virtual llvm::Expected<nlohmann::json> getVersion(const std::string& env, int64_t version) = 0;
  /// Resource actions of a version's resources, for include_logs.
  virtual llvm::Expected<nlohmann::json> versionActions(const std::string& env, int64_t version) = 0;
  virtual llvm::Expected<nlohmann::json> versionUnknowns(const std::string& env, int64_t version) = 0;
  /// Refuses the latest released version (Conflict).
  virtual llvm::Error deleteVersion(const std::string& env, int64_t version) = 0;
  /// v2 desired-state rows, newest first, with status per §4: [{version, date, total, labels, status}].
  virtual llvm::Expected<nlohmann::json> desiredStates(const std::string& env) = 0;
  /// Deletes all but the newest `keep` versions and the latest released one; returns how many were deleted.
  virtual llvm::Expected<int64_t> purgeVersions(const std::string& env, int64_t keep) = 0;

  // Files (global, keyed by sha1 hex) and handler code.
  virtual llvm::Expected<std::vector<std::string>> missingFiles(const std::vector<std::string>& hashes) = 0;
  virtual llvm::Error putFile(const std::string& hash, const std::string& content) = 0;
  /// Stores many (hash, bytes) pairs in one statement (already present ones are kept): the group commit of
  /// concurrent uploads.
  virtual llvm::Error putFiles(const std::vector<std::pair<std::string, std::string>>& files) = 0;
  virtual llvm::Expected<std::optional<std::string>> getFile(const std::string& hash) = 0;
  /// modules: [{name, version, requirements: [..], files: [{hash, python_module, is_byte_code, path}]}], the
  /// code of model version `cmVersion` (linked in version_code; the scheduler starts its executors with it).
  virtual llvm::Error putCode(const std::string& env, int64_t cmVersion, const nlohmann::json& modules) = 0;

  // Resources (orchestrator.md §5.2, §13): the state of every resource the environment has released.
  /// One page of GET /api/v2/resource, filtered, ordered, counted and cut by the database (keyset paging, no
  /// row outside the page leaves it): {total, past, cursor, rows: [{resource_id, resource_type, agent,
  /// resource_id_value, status, model, requires}], summary?}. `past` counts the listed rows after the cursor
  /// (forward) or before it (backward); `cursor` is the sort value used at the cursor (null when a cursor was
  /// asked for and its value is unknown); `summary` ({status: count}, orphans left out) only when asked.
  virtual llvm::Expected<nlohmann::json> resourcePage(const std::string& env, const ResourcePageQuery& q) = 0;
  /// {resource_id, resource_type, agent, id_attribute_value, status, attributes, model, last_deploy,
  ///  first_generated_version, first_generated_time, requires_status} (NotFound when never released).
  virtual llvm::Expected<nlohmann::json> resourceDetails(const std::string& env, const std::string& rid) = 0;
  /// Versions in which the resource's attribute hash changed: [{date, attribute_hash, attributes, requires,
  /// version}].
  virtual llvm::Expected<nlohmann::json> resourceHistory(const std::string& env, const std::string& rid) = 0;
  /// Actions of a resource, newest first: [{action_id, action, started, finished, status, messages, change,
  /// changes, version}].
  virtual llvm::Expected<nlohmann::json> resourceActions(const std::string& env, const std::string& rid) = 0;
  /// Parameters and facts: rows {id, name, value, source, resource_id, updated, metadata, expires}.
  virtual llvm::Expected<nlohmann::json> parameters(const std::string& env,
                                                    const std::optional<std::string>& rid) = 0;
  virtual llvm::Expected<nlohmann::json> setParameter(const std::string& env,
                                                      const nlohmann::json& param) = 0;
  virtual llvm::Error deleteParameter(const std::string& env, const std::string& name,
                                      const std::string& rid) = 0;
  /// One parameter of `rid` ("" = none) and whether it is fresh: {"parameter": row or null, "fresh": bool}; a
  /// row with expires=false is always fresh, others while younger than `expireSeconds` (server.fact-expire).
  virtual llvm::Expected<nlohmann::json> parameterFreshness(const std::string& env, const std::string& name,
                                                            const std::string& rid,
                                                            int64_t expireSeconds) = 0;
  /// Asks the environment's scheduler for the facts of each resource (`get_fact` scheduler requests).
  virtual llvm::Error requestFacts(const std::string& env, const std::vector<std::string>& resourceIds) = 0;
  /// What server.fact-renew re-requests, over the environments that are not halted: resources with an
  /// expiring fact older than `olderThanSeconds` or with an unresolved unknown. [[env, resource id], ...].
  virtual llvm::Expected<nlohmann::json> factsToRenew(int64_t olderThanSeconds) = 0;

  // Agents.
  /// [{name, paused, last_failover, unpause_on_resume, environment}] sorted by name.
  virtual llvm::Expected<nlohmann::json> agents(const std::string& env) = 0;
  /// action: pause|unpause|keep_paused_on_resume|unpause_on_resume; name nullopt = all agents. Asks the
  /// scheduler.
  virtual llvm::Error agentAction(const std::string& env, const std::optional<std::string>& name,
                                  const std::string& action) = 0;

  // Dry runs: a row per request, resources pre-filled (undefined / skipped_for_undefined ones answered at
  // once).
  virtual llvm::Expected<nlohmann::json> createDryrun(const std::string& env, int64_t version) = 0;
  virtual llvm::Expected<nlohmann::json> dryruns(const std::string& env, std::optional<int64_t> version) = 0;
  virtual llvm::Expected<nlohmann::json> dryrun(const std::string& env, const std::string& id) = 0;

  // Action queries and handler helpers (orchestrator.md §6.6, §13, §15); PgActions.cpp.
  /// Actions newest first: [{action_id, action, version, resource_version_ids, started, finished, status,
  /// messages, change, changes, send_event, environment}].
  virtual llvm::Expected<nlohmann::json> queryActions(const std::string& env, const ActionQuery& query) = 0;
  /// Finished deploy actions of the direct dependencies (the `requires` of `rid` in `version`) started after
  /// the resource's last_success (all when it never succeeded): {dependency id: [actions newest first]}.
  virtual llvm::Expected<nlohmann::json> dependencyEvents(const std::string& env, const std::string& rid,
                                                          int64_t version) = 0;
  /// Compliance of the released resources (all when `rids` is empty): {rid: {status, compliance, ...}}.
  virtual llvm::Expected<nlohmann::json> complianceReport(const std::string& env,
                                                          const std::vector<std::string>& rids) = 0;
  /// The scheduler's state as the database knows it (see docs/server.md "scheduler_status").
  virtual llvm::Expected<nlohmann::json> schedulerStatus(const std::string& env) = 0;

  // Revocable tokens (the `token` table; orchestrator.md §12).
  virtual llvm::Error recordToken(const std::string& jti, const std::string& env,
                                  const std::vector<std::string>& clientTypes, int64_t expireSeconds) = 0;
  /// nullopt: unknown jti; else whether it is revoked.
  virtual llvm::Expected<std::optional<bool>> tokenRevoked(const std::string& jti) = 0;
  /// Marks the environment's token revoked (NotFound when it has no such jti).
  virtual llvm::Error revokeToken(const std::string& env, const std::string& jti) = 0;
  /// [{jti, client_types, issued, expire, revoked}] newest first.
  virtual llvm::Expected<nlohmann::json> tokens(const std::string& env) = 0;

  // Scheduler hand-off: inserts a scheduler_request row and NOTIFYs inmanta_scheduler, in one transaction.
  virtual llvm::Error requestScheduler(const std::string& env, model::SchedulerRequestKind kind,
                                       const nlohmann::json& payload) = 0;
};

/// A store on PostgreSQL. Each thread that calls it uses its own connection, opened on first use and reopened
/// after a failure, so the number of connections is bounded by the calling thread pool.
std::unique_ptr<Store> openPgStore(const DbSettings& db);

/// Holds a session-level advisory lock that marks "a server owns this database", and claims the database's
/// owner row (migration 012) for owner() each time it takes that lock, before returning true. acquire() is
/// false when another server holds the lock. check() reconnects and re-acquires after a database restart; a
/// re-take is false (for good) when another server claimed the row meanwhile. Not thread-safe: call from one
/// coroutine at a time.
class ServerLock {
 public:
  virtual ~ServerLock() = default;
  virtual llvm::Expected<bool> acquire() = 0;
  virtual llvm::Expected<bool> check() = 0;
  /// This server's identity in the owner row (random per lock object).
  virtual const std::string& owner() const = 0;
};
std::unique_ptr<ServerLock> makeServerLock(const DbSettings& db);

/// Called (from the opening thread) before a newly opened store connection is first used; a returned message
/// refuses the connection: the call fails as Unavailable with that message. The server uses it to hold every
/// statement after a database restart until its lock is re-taken. Set once, before any store call.
using ConnectionGate = std::function<std::optional<std::string>()>;
void setConnectionGate(ConnectionGate gate);

/// Fences every store transaction of this process (withTx) on the owner row: once set (to the claimed
/// ServerLock::owner()), a transaction fails as Unavailable unless the row still names `owner`, and a new
/// claim waits for the transactions in flight. Set after the first acquire(), before serving; "" turns it
/// off.
void setServerFence(std::string owner);

} // namespace inm::store

// The orchestrator's use cases (STYLE.md "The orchestrator"): what the API (and later the CLI) may ask, with
// validation, type coercion and composition of store calls. Every store call runs on the bounded blocking
// pool and is awaited, so the io_context never blocks on PostgreSQL. Results are JSON values in the v2 field
// names (api/ shapes v1 answers from them) or a Failure code with a message naming the cause.
// Invariant: a Result is either ok with a value or carries a code and a non-empty message.
#pragma once

#include "model/Failure.h"
#include "service/BodyStream.h"
#include "store/Store.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace inm::service {

namespace asio = boost::asio;

/// The outcome of a use case.
struct Result {
  bool ok = true;
  nlohmann::json value;
  /// instead of `value`: the answer as JSON text produced in pieces, without a JSON tree (the biggest reads)
  std::shared_ptr<BodyStream> stream;
  model::ErrorCode code = model::ErrorCode::Internal;
  std::string message;

  static Result of(nlohmann::json v) {
    Result r;
    r.value = std::move(v);
    return r;
  }
  static Result ofStream(std::shared_ptr<BodyStream> body) {
    Result r;
    r.stream = std::move(body);
    return r;
  }
  static Result error(model::ErrorCode code, std::string message);
  static Result error(llvm::Error err);
};

/// What the service tells the scheduler supervisor (tools/ServerMain wires the real one; may be null).
class SchedulerControl {
 public:
  virtual ~SchedulerControl() = default;
  /// The environment exists and is not halted: make sure its scheduler runs.
  virtual void ensureRunning(const std::string& env) = 0;
  /// The environment was halted or deleted: stop its scheduler.
  virtual void stop(const std::string& env) = 0;
  /// Whether the environment's scheduler process runs now (agents show `up` only then).
  virtual bool running(const std::string& env) const = 0;
};

/// Options of the use cases that come from the server configuration.
struct ServiceOptions {
  int64_t factExpire = 3600;      ///< server.fact-expire: seconds a fact (expires=true) is served as fresh
  int64_t factRenew = 1200;       ///< server.fact-renew: facts this close to expiry are re-requested
  int64_t factResourceBlock = 60; ///< server.fact-resource-block: at most one fact request per resource per …
  /// Our file-batch extension (`PUT /api/v1/files`, docs/server.md): the most base64 bytes one request may
  /// carry; 0 turns the extension off (the route is absent and serverstatus does not announce it).
  uint64_t fileBatchLimit = 16ull << 20;
};

class FileBatch;

class Service {
 public:
  Service(store::Store& store, asio::thread_pool& pool, SchedulerControl* scheduler,
          ServiceOptions options = {});

  /// Runs `fn` (a blocking call) on the pool and resumes on the caller's executor with its value.
  template <typename F>
  asio::awaitable<std::invoke_result_t<F>> blocking(F fn);

  asio::awaitable<Result> health();

  // Projects and environments.
  asio::awaitable<Result> createProject(std::string name, std::optional<std::string> id);
  asio::awaitable<Result> listProjects();
  asio::awaitable<Result> getProject(std::string id);
  asio::awaitable<Result> modifyProject(std::string id, std::string name);
  asio::awaitable<Result> deleteProject(std::string id);
  /// spec: {project_id, name, repository|repo_url, branch|repo_branch, environment_id|id, description, icon}.
  asio::awaitable<Result> createEnvironment(nlohmann::json spec);
  asio::awaitable<Result> listEnvironments();
  asio::awaitable<Result> getEnvironment(std::string id);
  asio::awaitable<Result> modifyEnvironment(std::string id, nlohmann::json changes);
  asio::awaitable<Result> deleteEnvironment(std::string id);
  asio::awaitable<Result> clearEnvironment(std::string id);
  asio::awaitable<Result> halt(std::string env);
  asio::awaitable<Result> resume(std::string env);

  // Settings: {"settings": {all keys, defaults filled in}, "definition": {key: definition}}.
  asio::awaitable<Result> listSettings(std::string env);
  /// {"value": v, "definition": d} (NotFound for an unknown key).
  asio::awaitable<Result> getSetting(std::string env, std::string key);
  asio::awaitable<Result> setSetting(std::string env, std::string key, nlohmann::json value);
  asio::awaitable<Result> resetSetting(std::string env, std::string key);
  asio::awaitable<Result> protectSettings(std::string env, nlohmann::json settings);

  // Versions.
  asio::awaitable<Result> reserveVersion(std::string env);
  /// PUT /api/v1/version: the reference's payload (also the 11.5.5 form with ",v=N" ids). Value: the version.
  asio::awaitable<Result> putVersion(std::string env, std::shared_ptr<const nlohmann::json> body);
  /// The same from a spooled (uncompressed) body file, parsed streaming: memory holds a batch of resources,
  /// not the version (Store::putVersionStreamed).
  asio::awaitable<Result> putVersionFile(std::string env, std::string bodyFile);
  /// PUT /api/v2/version/partial: merges the exported resource sets into the latest version suitable for
  /// partial compiles (orchestrator.md §3.7) under a server-picked version number. Value: the version.
  asio::awaitable<Result> putPartialVersion(std::string env, std::shared_ptr<const nlohmann::json> body);
  /// PUT /api/v2/version/delta (our extension, docs/server.md "Delta versions"): a version made of its base
  /// version's resources and the body's changes. Value: {"version": v, "token": its content token or null}.
  asio::awaitable<Result> putDeltaVersion(std::string env, std::shared_ptr<const nlohmann::json> body);
  /// GET /api/v2/version/delta_base: {"version": latest stored version (0: none), "token": its token}.
  asio::awaitable<Result> deltaBase(std::string env);
  asio::awaitable<Result> release(std::string env, int64_t version);
  asio::awaitable<Result> listVersions(std::string env, int64_t start, int64_t limit);
  /// {"model": row, "resources": [...], "unknowns": [...]}.
  asio::awaitable<Result> getVersion(std::string env, int64_t version, bool includeLogs);
  asio::awaitable<Result> deleteVersion(std::string env, int64_t version);
  asio::awaitable<Result> desiredStates(std::string env);
  asio::awaitable<Result> desiredStateResources(std::string env, int64_t version);
  asio::awaitable<Result> diff(std::string env, int64_t from, int64_t to);

  // Files and code.
  asio::awaitable<Result> missingFiles(nlohmann::json hashes);
  /// content is base64; its sha1 must equal `hash`.
  asio::awaitable<Result> uploadFile(std::string hash, std::string base64Content);
  /// Our extension: many (sha1, base64 content) pairs in one transaction. A bad base64 or a sha1 mismatch
  /// is a 400 naming the file, and nothing of the batch is stored.
  asio::awaitable<Result> uploadFiles(std::vector<std::pair<std::string, std::string>> files);
  /// The options the server was configured with (routes read the file-batch limit).
  const ServiceOptions& options() const { return options_; }
  /// Value: true/false.
  asio::awaitable<Result> fileExists(std::string hash);
  /// Value: base64 content (NotFound when absent).
  asio::awaitable<Result> getFile(std::string hash);
  /// PUT /api/v1/codebatched/<version>: {type: {sha1: [path, python module, [requirements]]}}.
  asio::awaitable<Result> uploadCode(std::string env, int64_t version, nlohmann::json resources);

  // Resources (§5.2, §13) and their details.
  /// Query: filter.<field> (resource_type, agent, resource_id_value: substring; status: exact, "!x" negates),
  /// sort=<field>.<asc|desc>, limit, last_id/first_id (paging after/before a resource id), deploy_summary.
  /// Value: {"data", "links", "metadata"}.
  asio::awaitable<Result> listResources(std::string env, std::multimap<std::string, std::string> query);
  asio::awaitable<Result> resourceDetails(std::string env, std::string rid);
  asio::awaitable<Result> resourceHistory(std::string env, std::string rid);
  /// Log lines of every action of the resource, newest first: [{action_id, action, timestamp, level, msg,
  /// args, kwargs}].
  asio::awaitable<Result> resourceLogs(std::string env, std::string rid);
  /// GET /api/v1/resource/<rvid>: {"resource": {...}, "logs": [actions]} (logs only when asked).
  asio::awaitable<Result> resourceV1(std::string env, std::string rvid, bool logs);
  asio::awaitable<Result> parameters(std::string env, std::optional<std::string> rid);
  asio::awaitable<Result> setParameter(std::string env, nlohmann::json param);
  asio::awaitable<Result> deleteParameter(std::string env, std::string name, std::string rid);

  // Agents, deploys, dry runs.
  asio::awaitable<Result> agents(std::string env);
  asio::awaitable<Result> agentAction(std::string env, std::optional<std::string> name, std::string action);
  /// Asks the scheduler to deploy (repair when `repair`), for `agents` or all.
  asio::awaitable<Result> deploy(std::string env, nlohmann::json agents, bool repair);
  asio::awaitable<Result> createDryrun(std::string env, int64_t version);
  asio::awaitable<Result> dryruns(std::string env, std::optional<int64_t> version);
  asio::awaitable<Result> dryrun(std::string env, std::string id);

  // Action queries and handler helpers (ServiceActions.cpp; orchestrator.md §6.6, §13, §15).
  /// GET /api/v2/resource_actions: `query` holds the reference's parameters (resource_type, agent, attribute,
  /// attribute_value, log_severity, limit, action_id, first_timestamp, last_timestamp); `excludeChanges` the
  /// changes to leave out. Value: {"data": [actions newest first], "links": {next, prev}}.
  asio::awaitable<Result> resourceActions(std::string env, std::map<std::string, std::string> query,
                                          std::vector<std::string> excludeChanges);
  /// {dependency id: [finished deploy actions since the resource's last success]} for a versioned id.
  asio::awaitable<Result> resourceEvents(std::string env, std::string rvid);
  /// true iff a dependency's deploy since the resource's last success changed something.
  asio::awaitable<Result> didDependencyChange(std::string env, std::string rvid);
  asio::awaitable<Result> complianceReport(std::string env, std::vector<std::string> rids);
  asio::awaitable<Result> schedulerStatus(std::string env);
  /// One fact by its id or name, of resource `rid` or (empty rid) of any resource.
  asio::awaitable<Result> fact(std::string env, std::string rid, std::string idOrName);
  /// GET /api/v1/parameter/<name>?resource_id=R (orchestrator.md §6.12): the row while fresh; a missing or
  /// expired parameter of a resource asks the scheduler for the resource's facts (at most once per
  /// factResourceBlock per resource) and answers Unavailable (503); without a resource: the row or NotFound.
  asio::awaitable<Result> getParameter(std::string env, std::string name, std::string rid);
  /// The server.fact-renew round: re-requests the facts of resources whose facts near expiry or that have an
  /// unresolved unknown. Value: the number of resources asked.
  asio::awaitable<Result> renewFacts();

  // Revocable tokens (orchestrator.md §12). The check is cached for kTokenCacheTtl; revoke drops the entry.
  /// Records a new jti for `env`; value: the jti.
  asio::awaitable<Result> issueToken(std::string env, std::vector<std::string> clientTypes,
                                     int64_t expireSeconds);
  /// Whether a token carrying `jti` may be used (known and not revoked); a database failure is an error.
  asio::awaitable<Result> tokenUsable(std::string jti);
  asio::awaitable<Result> revokeToken(std::string env, std::string jti);
  asio::awaitable<Result> listTokens(std::string env);
  static constexpr std::chrono::seconds kTokenCacheTtl{5};

  /// Version retention for every non-halted environment (the `server.purge-versions-interval` timer).
  /// Value: the number of versions deleted.
  asio::awaitable<Result> purgeAllVersions();
  /// Version retention for one environment (after a release; failures are logged). Value: versions deleted.
  asio::awaitable<Result> retainVersions(std::string env);

 private:
  asio::awaitable<bool> autoDeploy(const std::string& env);
  /// auto_deploy release and version retention after a stored version.
  asio::awaitable<void> afterStore(const std::string& env, int64_t version);

  store::Store& store_;
  asio::thread_pool& pool_;
  SchedulerControl* scheduler_;
  ServiceOptions options_;
  std::shared_ptr<FileBatch> fileBatch_; ///< group commit of uploads
  std::mutex partialMutex_;
  std::map<std::string, std::shared_ptr<std::mutex>> partialLocks_; ///< per environment (putPartialVersion)
  /// Whether a fact request for (env, rid) may go out now (server.fact-resource-block); records it if so.
  bool mayRequestFacts(const std::string& env, const std::string& rid);
  std::mutex factMutex_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> factAsked_;
  std::mutex tokenMutex_;
  std::unordered_map<std::string, std::pair<bool, std::chrono::steady_clock::time_point>> tokenCache_;
};

} // namespace inm::service

#include "service/Blocking.h"

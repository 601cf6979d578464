// The server's compile service (orchestrator.md §11): a per-environment FIFO of compile requests persisted in
// the `compile` table, run one at a time per environment (never while the environment is halted, each start
// waiting out `recompile_backoff`), each run's stages recorded as `report` rows: Init, the libgit2 clone or
// pull of repo_url/repo_branch into <state_dir>/server/<env>/compiler, then `inmanta export` as a child
// process with a timeout. Also the `auto_full_compile` cron and report retention. Independent of HTTP: the
// API layer calls request()/isCompiling()/purgeReports(); reports are read back from the tables. Concurrency
// (STYLE.md): all service state lives on one strand; the database, libgit2 and the child wait run on the
// bounded blocking pool given to the constructor and are awaited. Invariant: every claimed run ends with
// `completed` set (success or a failure report), and a restart marks runs it finds unfinished as failed, so
// the queue never sticks.
#pragma once

#include "compile/Git.h"
#include "store/CompileQueue.h"

// clang-format off
#include <utility> // first: Boost 1.74's asio/awaitable.hpp uses std::exchange without including it
// clang-format on

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace inm::compile {

namespace asio = boost::asio;

/// Static configuration of the service (from the server's config file).
struct CompileServiceOptions {
  std::string dbConnection;   ///< libpq connection string
  unsigned dbConnections = 2; ///< at most this many connections (the blocking pool should be at least as big)
  std::string stateDir;       ///< <state_dir>; each environment compiles in <state_dir>/server/<env>/compiler
  std::string compilerBinary; ///< the `inmanta` binary to run (the server's own executable)
  std::string serverAddress = "localhost"; ///< where the compiler exports to: this server
  int serverPort = 8888;
  std::string internalToken;           ///< passed as --token when set
  std::vector<std::string> exportArgs; ///< more flags for an exporting compile (--ssl, --ssl-ca-cert F)
  /// When set, mints the --token for one environment (the server: an env-scoped compiler+api token).
  std::function<std::string(const std::string& environment)> tokenFor;
  /// How often queues and `auto_full_compile` settings are re-read (picks up resume, settings changes and
  /// requests queued while the database was unavailable).
  std::chrono::milliseconds sweepInterval{5000};
  /// Receives problems that do not stop the service (an invalid auto_full_compile, a database error while
  /// sweeping); may be empty.
  std::function<void(const std::string& message)> warn;
  std::chrono::seconds compileTimeout{600}; ///< the compiler is killed after this long
  GitCredentials git;                       ///< repository credentials
};

/// One compile request (POST /api/v1/notify, inmanta-cli environment recompile, the cron, ...): a row of
/// the store's compile queue.
using CompileRequest = store::CompileRequest;

/// The service; create it once in the server, then co_await start().
class CompileService {
 public:
  CompileService(asio::any_io_executor executor, asio::thread_pool& blocking, CompileServiceOptions options);
  ~CompileService();
  CompileService(const CompileService&) = delete;
  CompileService& operator=(const CompileService&) = delete;

  /// At server start: marks runs left unfinished by a previous process as failed (with a report saying so),
  /// starts the queues that still hold requests and the `auto_full_compile` crons. Returns how many runs it
  /// failed.
  asio::awaitable<llvm::Expected<int>> start();

  /// Queues a request and makes sure the environment's queue runs; returns the new compile id.
  asio::awaitable<llvm::Expected<std::string>> request(const CompileRequest& request);

  /// True while a run of `environment` is in progress or its queue is being drained (HEAD /api/v1/notify).
  asio::awaitable<bool> isCompiling(const std::string& environment);

  /// Looks at an environment's queue again (after resume, or a settings change that allows compiles).
  asio::awaitable<void> wake(const std::string& environment);

  /// Number of environments whose queue is being drained right now.
  asio::awaitable<size_t> activeQueues();

  /// (Re)reads `auto_full_compile` of one environment and (re)starts or stops its cron timer.
  asio::awaitable<llvm::Error> refreshCron(const std::string& environment);

  /// Deletes compiles (and their reports) completed longer than `retention` ago; returns how many.
  asio::awaitable<llvm::Expected<int>> purgeReports(std::chrono::seconds retention);

  /// Reads for the API: compiles of an environment (newest first), one compile with its reports (null when
  /// unknown), and the compiles not completed yet.
  asio::awaitable<llvm::Expected<nlohmann::json>> listCompiles(const std::string& environment, int limit);
  asio::awaitable<llvm::Expected<nlohmann::json>> compileDetail(const std::string& compileId);
  asio::awaitable<llvm::Expected<nlohmann::json>> queue(const std::string& environment);

  /// Sets options.tokenFor after construction (the HTTP layer owns the signing keys).
  void setTokenMinter(std::function<std::string(const std::string& environment)> minter) {
    options_.tokenFor = std::move(minter);
  }

  /// The port the compiler exports to (when the server bound port 0).
  void setServerPort(int port) { options_.serverPort = port; }

  /// Cancels timers and kills a running compiler (its run stays unfinished and is failed by the next
  /// start()).
  void stop();

 private:
  struct EnvState;
  asio::awaitable<void> drain(std::string environment);
  asio::awaitable<void> sweep();
  asio::awaitable<void> runCron(std::string environment, std::string expr, std::shared_ptr<bool> cancelled);
  void kick(const std::string& environment);

  asio::strand<asio::any_io_executor> strand_;
  asio::thread_pool& blocking_;
  CompileServiceOptions options_;
  std::unique_ptr<store::CompileQueue> store_;
  std::map<std::string, EnvState> envs_; // touched only on strand_
  std::atomic<bool> cancel_{false};      // set by stop(): kills a running compiler
  std::set<std::string> warnedCron_;     // touched only on strand_
  bool stopped_ = false;
};

} // namespace inm::compile

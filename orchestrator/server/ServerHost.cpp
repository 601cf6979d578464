// The process host of `inmanta server` (include/server/ServerHost.h). Wires config -> store (migrations,
// server lock) -> service -> api on one io_context in this thread, with the blocking database calls on a
// bounded thread pool ([database] connection_pool_max_size threads, one connection each). SIGTERM/SIGINT stop
// accepting, let in-flight requests finish (each version write is one transaction, so nothing is
// half-written), stop the scheduler children, and exit 0. Exit 1 on a configuration, database or bind error
// (message on stderr).
#include "server/ServerHost.h"

#include "ServerOptions.h"
#include "api/HttpServer.h"
#include "compile/CompileService.h"
#include "config/Config.h"
#include "jwt/Jwt.h"
#include "model/Settings.h"
#include "service/Log.h"
#include "service/Service.h"
#include "store/Store.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <llvm/Support/raw_ostream.h>

#include <mutex>
#include <thread>
#include <unistd.h>

namespace inm::server {

namespace asio = boost::asio;
using service::logLine;

int runServer(const config::Config& cfg, const ServerRun& run) {

  auto intOpt = [&](const char* section, const char* option, int64_t fallback, int64_t& out) -> bool {
    llvm::Expected<int64_t> v = cfg.getInt(section, option, fallback);
    if (!v) {
      llvm::errs() << "inmanta server: " << llvm::toString(v.takeError()) << "\n";
      return false;
    }
    out = *v;
    return true;
  };
  auto boolOpt = [&](const char* section, const char* option, bool fallback, bool& out) -> bool {
    llvm::Expected<bool> v = cfg.getBool(section, option, fallback);
    if (!v) {
      llvm::errs() << "inmanta server: " << llvm::toString(v.takeError()) << "\n";
      return false;
    }
    out = *v;
    return true;
  };

  store::DbSettings db;
  db.host = cfg.getString("database", "host", "localhost");
  db.name = cfg.getString("database", "name", "inmanta");
  db.username = cfg.getString("database", "username", "postgres");
  db.password = cfg.getString("database", "password", "");
  int64_t port = 5432, poolMax = 10, timeout = 60, bindPort = 8888, maxRequest = int64_t(512) << 20;
  bool auth = false, startSchedulers = true;
  int64_t spoolRequest = int64_t(1) << 20;
  int64_t fileBatch = int64_t(16) << 20;
  int64_t stopGrace = 10; // [scheduler] stop_grace: seconds a stopping scheduler finishes running deploys
  if (!intOpt("database", "port", 5432, port) ||
      !intOpt("database", "connection_pool_max_size", 10, poolMax) ||
      !intOpt("database", "connection_timeout", 60, timeout) ||
      !intOpt("server", "bind-port", 8888, bindPort) ||
      !intOpt("server", "max_request_size", maxRequest, maxRequest) ||
      !boolOpt("server", "auth", false, auth) ||
      !boolOpt("server", "start_schedulers", true, startSchedulers) ||
      !intOpt("server", "request_spool_size", spoolRequest, spoolRequest) ||
      !intOpt("server", "file_batch_size", fileBatch, fileBatch) ||
      !intOpt("scheduler", "stop_grace", 10, stopGrace))
    return 1;
  if (stopGrace < 0 || stopGrace > 3600)
    return fail("[scheduler] stop_grace must be between 0 and 3600 seconds");
  if (fileBatch < 0)
    return fail("[server] file_batch_size must be >= 0 (0 turns the file-batch extension off)");
  if (spoolRequest < 0) return fail("[server] request_spool_size must be >= 0");
  if (poolMax < 1) return fail("[database] connection_pool_max_size must be at least 1");
  if (maxRequest < 1024) return fail("[server] max_request_size must be at least 1024 bytes");
  db.port = int(port);
  db.poolMaxSize = int(poolMax);

  api::HttpOptions http;
  http.bindAddress = cfg.getString("server", "bind-address", "127.0.0.1");
  if (http.bindAddress.find(',') != std::string::npos)
    http.bindAddress = http.bindAddress.substr(0, http.bindAddress.find(','));
  http.port = int(bindPort);
  http.maxRequestSize = uint64_t(maxRequest);
  http.spoolRequestSize = uint64_t(spoolRequest);
  http.sslCertFile = cfg.getString("server", "ssl_cert_file", "");
  http.sslKeyFile = cfg.getString("server", "ssl_key_file", "");
  http.consoleDir = cfg.getString("server", "console_dir", defaultConsoleDir());
  http.auth = auth;
  http.stateDir = cfg.getString("config", "state-dir", "/var/lib/inmanta"); // external agent relay sockets
  for (const std::string& sec : cfg.sectionNames()) {
    if (sec.rfind("auth_jwt_", 0) != 0) continue;
    auto values = cfg.section(sec);
    api::JwtKey k;
    k.id = sec.substr(9);
    k.algorithm = values.count("algorithm") ? values["algorithm"] : "HS256";
    // As in the reference, an HS256 key is URL-safe base64 of at least 32 bytes (`openssl rand -base64 32`).
    auto key = jwt::unbase64url(values["key"]);
    if (!key) return fail("[" + sec + "] key: " + llvm::toString(key.takeError()));
    if (k.algorithm == "HS256" && !values["key"].empty() && key->size() < 32)
      return fail("[" + sec + "] key: HS256 needs a key of at least 32 bytes (256 bits), base64-encoded");
    k.key = std::move(*key);
    k.sign = values.count("sign") &&
             (values["sign"] == "true" || values["sign"] == "True" || values["sign"] == "1");
    if (values.count("expire")) k.expire = std::atoll(values["expire"].c_str());
    if (values.count("issuer")) k.issuer = values["issuer"];
    // As in the reference, the audience defaults to the issuer; a token's `aud` must hold it.
    k.audience = values.count("audience") ? values["audience"] : k.issuer;
    std::string types = values.count("client_types") ? values["client_types"] : "api,agent,compiler";
    size_t i = 0;
    while (i <= types.size()) {
      size_t j = types.find(',', i);
      if (j == std::string::npos) j = types.size();
      std::string t = types.substr(i, j - i);
      t.erase(0, t.find_first_not_of(' '));
      t.erase(t.find_last_not_of(' ') + 1);
      if (!t.empty()) k.clientTypes.push_back(t);
      i = j + 1;
    }
    if (k.algorithm == "HS256" && k.key.empty()) return fail("[" + sec + "] needs a key for HS256");
    http.jwtKeys.push_back(std::move(k));
  }
  if (auth && http.jwtKeys.empty())
    return fail("[server] auth is on but no [auth_jwt_<id>] section is configured");

  if (run.listRoutes) { // nothing connects: the store and the compile service open connections lazily
    asio::io_context io{1};
    asio::thread_pool pool{1};
    std::unique_ptr<store::Store> store = store::openPgStore(db);
    service::ServiceOptions so;
    so.fileBatchLimit = uint64_t(fileBatch);
    service::Service svc(*store, pool, nullptr, so);
    api::HttpServer server(io, svc, http);
    compile::CompileServiceOptions co;
    if (llvm::Error e = compileOptions(cfg, db, http, co)) return fail(llvm::toString(std::move(e)));
    compile::CompileService compiles(io.get_executor(), pool, co);
    server.enableCompiles(compiles);
    llvm::outs() << server.routeTable().dump(2) << "\n";
    return 0;
  }

  // Schema first: wait for the database up to connection_timeout seconds, then migrate in one transaction.
  auto started = std::chrono::steady_clock::now();
  for (;;) {
    llvm::Expected<int> schema = store::migrate(db);
    if (schema) {
      logLine("info", "schema_ready", {{"version", std::to_string(*schema)}, {"database", db.name}});
      break;
    }
    auto [code, msg] = model::describe(schema.takeError());
    if (std::string hint = permanentDatabaseError(msg, db); !hint.empty()) return fail(msg + "\n" + hint);
    if (code != model::ErrorCode::Unavailable ||
        std::chrono::steady_clock::now() - started > std::chrono::seconds(timeout))
      return fail(msg);
    logLine("warning", "database_unavailable", {{"error", msg}});
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // One server per database: the second one refuses (docs/server.md, "Two servers").
  std::unique_ptr<store::ServerLock> lock = store::makeServerLock(db);
  llvm::Expected<bool> locked = lock->acquire();
  if (!locked) return fail(llvm::toString(locked.takeError()));
  if (!*locked)
    return fail("another inmanta server is already running on database '" + db.name + "' at " + db.host +
                ":" + std::to_string(db.port) + "; refusing to start a second one");
  // Every store transaction of this server is fenced on the owner row the lock claimed (migration 012): once
  // another server claims it, a transaction of this one either committed before that claim or fails (503).
  store::setServerFence(lock->owner());
  // Every store connection opened from here on (the pool's first ones, and each one after a database restart)
  // waits until this server holds the lock again: if another server took it while the database restarted,
  // the statement is refused (503) and the lock check below stops this server. So no write of this server
  // lands after another one started serving.
  std::mutex lockMutex;
  store::setConnectionGate([&]() -> std::optional<std::string> {
    std::lock_guard<std::mutex> guard(lockMutex);
    llvm::Expected<bool> held = lock->check();
    if (!held) return "the server lock could not be re-taken: " + llvm::toString(held.takeError());
    if (!*held)
      return "another inmanta server took database '" + db.name + "' while it restarted; this server stops";
    return std::nullopt;
  });

  asio::io_context io{1};
  asio::thread_pool pool{size_t(poolMax)};
  std::unique_ptr<store::Store> store = store::openPgStore(db);

  std::unique_ptr<SchedulerProcesses> supervisor;
  std::chrono::seconds supervisorKillAfter{0};
  if (startSchedulers) {
    SchedulerProcessOptions so;
    so.executable = selfExecutable();
    so.configFiles = run.configFiles;
    so.db = db;
    // [scheduler] stop_grace: how long a stopping scheduler may finish its running deploys (read by the
    // scheduler too); the supervisor adds a margin for its last write before SIGKILL.
    so.killAfter = std::chrono::seconds(stopGrace + 10);
    supervisorKillAfter = so.killAfter;
    supervisor = run.schedulers(io, so);
  }
  // Facts (orchestrator.md §6.12): server.fact-expire, fact-renew (less than the expiry; a renew round runs
  // that often), fact-resource-block.
  service::ServiceOptions serviceOptions;
  if (!intOpt("server", "fact-expire", 3600, serviceOptions.factExpire) ||
      !intOpt("server", "fact-renew", serviceOptions.factExpire / 3, serviceOptions.factRenew) ||
      !intOpt("server", "fact-resource-block", 60, serviceOptions.factResourceBlock))
    return 1;
  if (serviceOptions.factExpire < 1 || serviceOptions.factRenew < 1 || serviceOptions.factResourceBlock < 0) {
    llvm::errs() << "inmanta server: [server] fact-expire and fact-renew must be at least 1 second and "
                    "fact-resource-block at least 0\n";
    return 1;
  }
  // A renew period at or above the expiry cannot keep facts fresh: each round then asks for every expiring
  // fact.
  if (serviceOptions.factRenew >= serviceOptions.factExpire)
    logLine("warning", "fact_renew_not_below_expire",
            {{"fact_renew", std::to_string(serviceOptions.factRenew)},
             {"fact_expire", std::to_string(serviceOptions.factExpire)}});
  serviceOptions.fileBatchLimit = uint64_t(fileBatch);
  service::Service svc(*store, pool, supervisor.get(), serviceOptions);
  api::HttpServer server(io, svc, http);

  // The compile service (docs/autonomous.md) on its own small pool: a running compiler occupies a thread.
  compile::CompileServiceOptions co;
  if (llvm::Error e = compileOptions(cfg, db, http, co)) return fail(llvm::toString(std::move(e)));
  int64_t reportRetention = 604800;
  if (!intOpt("server", "compiler-report-retention", 604800, reportRetention)) return 1;
  co.compilerBinary = selfExecutable();
  co.warn = [](const std::string& msg) { logLine("warning", "compile_service", {{"message", msg}}); };
  asio::thread_pool compilePool{4};
  compile::CompileService compiles(io.get_executor(), compilePool, co);
  server.enableCompiles(compiles);
  if (llvm::Error e = server.start()) return fail(llvm::toString(std::move(e)));
  compiles.setServerPort(server.port());
  asio::steady_timer retentionTimer(io);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto failed = co_await compiles.start();
        if (!failed)
          logLine("error", "compile_service_start_failed", {{"error", llvm::toString(failed.takeError())}});
        else if (*failed)
          logLine("warning", "compiles_interrupted", {{"count", std::to_string(*failed)}});
        for (;;) { // server.compiler-report-retention: purge at start, then hourly
          auto purged = co_await compiles.purgeReports(std::chrono::seconds(reportRetention));
          if (!purged) llvm::consumeError(purged.takeError());
          retentionTimer.expires_after(std::chrono::hours(1));
          boost::system::error_code ec;
          co_await retentionTimer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          if (ec) co_return;
        }
      },
      asio::detached);
  // server.purge-versions-interval: version retention for every non-halted environment (orchestrator.md §4).
  int64_t purgeInterval = 3600;
  if (!intOpt("server", "purge-versions-interval", 3600, purgeInterval)) return 1;
  asio::steady_timer purgeTimer(io);
  // server.fact-renew: re-request facts nearing expiry and unresolved unknowns.
  asio::steady_timer factTimer(io);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          factTimer.expires_after(std::chrono::seconds(serviceOptions.factRenew));
          boost::system::error_code ec;
          co_await factTimer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          if (ec) co_return;
          service::Result r = co_await svc.renewFacts();
          if (!r.ok)
            logLine("warning", "fact_renew_failed", {{"error", r.message}});
          else if (r.value.get<int64_t>() > 0)
            logLine("info", "facts_renewed", {{"resources", r.value.dump()}});
        }
      },
      asio::detached);
  if (purgeInterval > 0)
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (;;) {
            purgeTimer.expires_after(std::chrono::seconds(purgeInterval));
            boost::system::error_code ec;
            co_await purgeTimer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return;
            service::Result r = co_await svc.purgeAllVersions();
            if (!r.ok) logLine("warning", "version_purge_failed", {{"error", r.message}});
          }
        },
        asio::detached);
  logLine("info", "server_started",
          {{"address", http.bindAddress},
           {"port", std::to_string(server.port())},
           {"tls", http.sslCertFile.empty() ? "false" : "true"},
           {"auth", auth ? "true" : "false"},
           {"pid", std::to_string(::getpid())}});

  if (supervisor) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          auto envs = co_await svc.blocking([&] { return store->listEnvironments(); });
          if (!envs) {
            logLine("warning", "scheduler_autostart_skipped", {{"error", llvm::toString(envs.takeError())}});
            co_return;
          }
          for (const auto& e : *envs) {
            bool autostart = inm::model::decodeEnvironmentSettings(e["settings"]).settings.autostartOnStart;
            if (!e["halted"].get<bool>() && autostart) supervisor->ensureRunning(e["id"]);
          }
        },
        asio::detached);
  }

  // Stopping: on SIGTERM/SIGINT, and when the server lock is lost to another server. The HTTP server drains
  // its requests and every scheduler finishes its running deploys and flushes (within its stop grace) before
  // the process exits: killing them earlier loses finished deploys' records, and a restart would run those
  // deploys again.
  bool stopping = false;
  int exitStatus = 0;
  asio::steady_timer lockTimer(io);
  asio::steady_timer forceTimer(io);
  std::function<void(const std::string&)> beginStop = [&](const std::string& why) {
    if (stopping) return;
    stopping = true;
    logLine("info", "server_stopping", {{"reason", why}});
    lockTimer.cancel();
    retentionTimer.cancel();
    purgeTimer.cancel();
    factTimer.cancel();
    compiles.stop();
    auto pending = std::make_shared<int>(supervisor ? 2 : 1);
    auto oneDone = [&io, pending] {
      if (--*pending == 0) io.stop();
    };
    if (supervisor) supervisor->stopAll(oneDone);
    server.shutdown(oneDone);
    forceTimer.expires_after(std::chrono::seconds(60) + supervisorKillAfter);
    forceTimer.async_wait([&](const boost::system::error_code& e) {
      if (!e) io.stop();
    });
  };

  // The single-server rule (docs/server.md "Life cycle"): the lock is a session lock, so a database restart
  // drops it. It is checked every second and re-taken at once after a restart; if another server took it in
  // between, this one stops (exit status 3) instead of running beside it.
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          lockTimer.expires_after(std::chrono::seconds(1));
          boost::system::error_code ec;
          co_await lockTimer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          if (ec || stopping) co_return;
          llvm::Expected<bool> held = co_await svc.blocking([&] {
            std::lock_guard<std::mutex> guard(lockMutex);
            return lock->check();
          });
          if (!held) {
            llvm::consumeError(held.takeError()); // the database is down: writes fail anyway; retry
          } else if (!*held) {
            logLine("error", "server_lock_lost",
                    {{"database", db.name},
                     {"detail", "another inmanta server took the database while it restarted; stopping"}});
            exitStatus = 3;
            beginStop("server lock lost");
            co_return;
          }
        }
      },
      asio::detached);

  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    beginStop(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  });
  io.run();
  if (supervisor) supervisor->killAll();
  compilePool.join();
  pool.join();
  store::setConnectionGate(nullptr);
  store::setServerFence("");
  logLine("info", "server_stopped", {{"status", std::to_string(exitStatus)}});
  return exitStatus;
}

} // namespace inm::server

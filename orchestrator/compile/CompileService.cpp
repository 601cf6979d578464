// The compile service's orchestration (see include/compile/CompileService.h): queue draining per environment,
// the stages of one run, recovery at start, the auto_full_compile cron. Blocking work (the database, libgit2,
// the compiler child) goes to the blocking pool through onPool(); everything else runs on strand_.
#include "compile/CompileService.h"

#include "ChildProcess.h"
#include "ModuleStage.h"
#include "cron/Cron.h"
#include "model/Settings.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <regex>

namespace inm::compile {

using store::ClaimedRun;
using store::Duplicate;
using store::EnvInfo;

struct CompileService::EnvState {
  bool draining = false; // a drain() coroutine owns the queue
  bool wake = false;     // a request arrived since drain() last looked
  bool running = false;  // a run is between claim and finish
  std::shared_ptr<bool> cronCancelled;
  std::string cronExpr;
};

namespace {

llvm::Error makeError(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

/// Runs a blocking function on `pool` and resumes the caller on its own executor. co_spawn needs a
/// default-constructible result, so the value travels through this frame instead.
/// GCC 12 may destroy class-type temporaries of a co_await expression twice (by-value coroutine arguments,
/// closures with class-type captures; GCC PR 99576), so in this file coroutines take class-type parameters by
/// reference and copy what they keep before their first suspension, and the closures handed to onPool() and
/// co_spawn() capture by reference only (the awaiting frame outlives the call).
template <typename T, typename F>
asio::awaitable<llvm::Expected<T>> onPool(asio::thread_pool& pool, F&& fIn) {
  std::decay_t<F> f = std::forward<F>(fIn);
  std::optional<T> value;
  std::string error;
  // The spawned lambda holds only pointers into this frame: with GCC 12, a use_awaitable co_spawn of a lambda
  // with class-type captures destroys those captures twice.
  auto* fp = &f;
  auto* vp = &value;
  auto* ep = &error;
  co_await asio::co_spawn(
      pool.get_executor(),
      [fp, vp, ep]() -> asio::awaitable<void> {
        llvm::Expected<T> r = (*fp)();
        if (r)
          *vp = std::move(*r);
        else
          *ep = llvm::toString(r.takeError());
        co_return;
      },
      asio::use_awaitable);
  if (!value) co_return makeError(error);
  co_return std::move(*value);
}

/// The value of a blocking call that reports failures inside its result; a pool failure becomes `onError`.
template <typename T>
T valueOr(llvm::Expected<T> e, T onError) {
  if (e) return std::move(*e);
  llvm::consumeError(e.takeError());
  return onError;
}

std::optional<int> parseVersion(const std::string& text) {
  static const std::regex kCommitted("Committed resources with version ([0-9]+)");
  std::smatch m;
  if (std::regex_search(text, m, kCommitted)) return std::stoi(m[1].str());
  return std::nullopt;
}

} // namespace

CompileService::CompileService(asio::any_io_executor executor, asio::thread_pool& blocking,
                               CompileServiceOptions options)
    : strand_(asio::make_strand(executor)), blocking_(blocking), options_(std::move(options)),
      store_(std::make_unique<store::CompileQueue>(options_.dbConnection, options_.dbConnections)) {
  initGit();
}

CompileService::~CompileService() = default;

void CompileService::stop() {
  cancel_ = true;
  asio::post(strand_, [this] {
    stopped_ = true;
    for (auto& [env, st] : envs_)
      if (st.cronCancelled) *st.cronCancelled = true;
  });
}

void CompileService::kick(const std::string& env) {
  EnvState& st = envs_[env];
  st.wake = true;
  if (st.draining || stopped_) return;
  st.draining = true;
  asio::co_spawn(strand_, drain(env), asio::detached);
}

asio::awaitable<llvm::Expected<int>> CompileService::start() {
  auto failed = co_await onPool<int>(blocking_, [&] { return store_->failUnfinished(); });
  if (!failed) co_return failed.takeError();
  auto queued = co_await onPool<std::vector<std::string>>(blocking_,
                                                          [this] { return store_->environmentsWithQueue(); });
  if (!queued) co_return queued.takeError();
  co_await asio::co_spawn(
      strand_,
      [this, &queued]() -> asio::awaitable<void> {
        for (const std::string& env : *queued) kick(env);
        co_return;
      },
      asio::use_awaitable);
  using Crons = std::vector<std::pair<std::string, std::string>>;
  auto crons = co_await onPool<Crons>(blocking_, [&] { return store_->cronSettings(); });
  if (!crons) co_return crons.takeError();
  for (const auto& [env, expr] : *crons) {
    if (auto err = co_await refreshCron(env)) {
      std::string msg = llvm::toString(std::move(err));
      if (options_.warn) options_.warn(msg);
    }
  }
  if (options_.sweepInterval.count() > 0) asio::co_spawn(strand_, sweep(), asio::detached);
  co_return *failed;
}

asio::awaitable<void> CompileService::sweep() {
  asio::steady_timer timer(strand_);
  while (!stopped_) {
    timer.expires_after(options_.sweepInterval);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) co_return;
    auto queued =
        co_await onPool<std::vector<std::string>>(blocking_, [&] { return store_->environmentsWithQueue(); });
    if (queued) {
      for (const std::string& env : *queued) kick(env);
    } else {
      llvm::consumeError(queued.takeError());
    }
    using Crons = std::vector<std::pair<std::string, std::string>>;
    auto crons = co_await onPool<Crons>(blocking_, [&] { return store_->cronSettings(); });
    if (!crons) {
      llvm::consumeError(crons.takeError());
      continue;
    }
    std::vector<std::string> changed;
    std::map<std::string, std::string> wanted(crons->begin(), crons->end());
    for (const auto& [env, expr] : wanted)
      if (envs_[env].cronExpr != expr) changed.push_back(env);
    for (const auto& [env, st] : envs_)
      if (!st.cronExpr.empty() && !wanted.count(env)) changed.push_back(env);
    for (const std::string& env : changed) {
      if (auto err = co_await refreshCron(env)) {
        std::string msg = llvm::toString(std::move(err));
        if (options_.warn && !warnedCron_.count(env + "\n" + msg)) options_.warn(msg);
        warnedCron_.insert(env + "\n" + msg); // warn once per environment and message
      }
    }
  }
}

asio::awaitable<llvm::Expected<nlohmann::json>> CompileService::listCompiles(const std::string& env,
                                                                             int limit) {
  co_return co_await onPool<nlohmann::json>(blocking_, [&] { return store_->listCompiles(env, limit); });
}

asio::awaitable<llvm::Expected<nlohmann::json>> CompileService::compileDetail(const std::string& id) {
  co_return co_await onPool<nlohmann::json>(blocking_, [&] { return store_->compileDetail(id); });
}

asio::awaitable<llvm::Expected<nlohmann::json>> CompileService::queue(const std::string& env) {
  co_return co_await onPool<nlohmann::json>(blocking_, [&] { return store_->queue(env); });
}

asio::awaitable<llvm::Expected<std::string>> CompileService::request(const CompileRequest& reqIn) {
  CompileRequest req = reqIn;
  auto id = co_await onPool<std::string>(blocking_, [&] { return store_->insertRequest(req); });
  if (!id) co_return id.takeError();
  std::string env = req.environment;
  co_await asio::co_spawn(
      strand_,
      [this, &env]() -> asio::awaitable<void> {
        kick(env);
        co_return;
      },
      asio::use_awaitable);
  co_return *id;
}

asio::awaitable<bool> CompileService::isCompiling(const std::string& envIn) {
  std::string env = envIn;
  co_return co_await asio::co_spawn(
      strand_,
      [this, &env]() -> asio::awaitable<bool> {
        auto it = envs_.find(env);
        co_return it != envs_.end() && it->second.running;
      },
      asio::use_awaitable);
}

asio::awaitable<void> CompileService::wake(const std::string& envIn) {
  std::string env = envIn;
  co_await asio::co_spawn(
      strand_,
      [this, &env]() -> asio::awaitable<void> {
        kick(env);
        co_return;
      },
      asio::use_awaitable);
}

asio::awaitable<size_t> CompileService::activeQueues() {
  co_return co_await asio::co_spawn(
      strand_,
      [this]() -> asio::awaitable<size_t> {
        size_t n = 0;
        for (const auto& [env, st] : envs_) n += st.draining ? 1 : 0;
        co_return n;
      },
      asio::use_awaitable);
}

asio::awaitable<llvm::Expected<int>> CompileService::purgeReports(std::chrono::seconds retention) {
  co_return co_await onPool<int>(blocking_, [&] { return store_->purgeOlderThan(retention); });
}

asio::awaitable<llvm::Error> CompileService::refreshCron(const std::string& envIn) {
  std::string env = envIn;
  auto info = co_await onPool<EnvInfo>(blocking_, [&] { return store_->envInfo(env); });
  if (!info) co_return info.takeError();
  model::DecodedSettings decoded = model::decodeEnvironmentSettings(info->settings);
  // A stored value that is not a cron expression decodes to the default (off): report it, as before the
  // settings were validated when set (a value written by an older server or by hand).
  for (const std::string& e : decoded.errors)
    if (e.find("'auto_full_compile'") != std::string::npos)
      co_return makeError("environment " + env + ": " + e);
  std::string expr = decoded.settings.autoFullCompile;
  if (!expr.empty()) {
    auto parsed = cron::CronSpec::parse(expr);
    if (!parsed)
      co_return makeError("environment " + env +
                          ": auto_full_compile: " + llvm::toString(parsed.takeError()));
  }
  co_await asio::co_spawn(
      strand_,
      [this, &env, &expr]() -> asio::awaitable<void> {
        EnvState& st = envs_[env];
        if (st.cronExpr == expr && st.cronCancelled && !*st.cronCancelled) co_return;
        if (st.cronCancelled) *st.cronCancelled = true;
        st.cronCancelled.reset();
        st.cronExpr = expr;
        if (!expr.empty() && !stopped_) {
          st.cronCancelled = std::make_shared<bool>(false);
          asio::co_spawn(strand_, runCron(env, expr, st.cronCancelled), asio::detached);
        }
      },
      asio::use_awaitable);
  co_return llvm::Error::success();
}

asio::awaitable<void> CompileService::runCron(std::string env, std::string expr,
                                              std::shared_ptr<bool> cancelled) {
  auto cron = cron::CronSpec::parse(expr);
  if (!cron) {
    llvm::consumeError(cron.takeError()); // refreshCron validated it
    co_return;
  }
  asio::system_timer timer(strand_);
  while (!*cancelled) {
    auto next = cron->next(std::chrono::system_clock::now());
    if (!next) co_return;
    timer.expires_at(*next);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (*cancelled || stopped_) co_return;
    CompileRequest req;
    req.environment = env;
    req.metadata = {{"type", "schedule"},
                    {"message", "Recompile model because a full compile was scheduled"}};
    auto id = co_await request(req);
    if (!id) llvm::consumeError(id.takeError()); // the environment may be gone; the next tick tries again
  }
}

asio::awaitable<void> CompileService::drain(std::string env) {
  const std::string envDir = options_.stateDir + "/server/" + env;
  const std::string dir = envDir + "/compiler";
  for (;;) {
    envs_[env].wake = false;
    auto info = co_await onPool<EnvInfo>(blocking_, [&] { return store_->envInfo(env); });
    if (!info || !info->exists || info->halted || !info->hasQueued || stopped_) {
      if (!info) llvm::consumeError(info.takeError());
      if (envs_[env].wake && !stopped_ && (!info || !info->halted)) continue;
      break;
    }
    // recompile_backoff: a minimum gap between the end of one run and the start of the next.
    const model::EnvironmentSettings settings = model::decodeEnvironmentSettings(info->settings).settings;
    double backoff = settings.recompileBackoff;
    if (info->secondsSinceLast < backoff) {
      asio::steady_timer t(strand_);
      t.expires_after(std::chrono::milliseconds(long((backoff - info->secondsSinceLast) * 1000) + 1));
      boost::system::error_code ec;
      co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    auto claimed = co_await onPool<ClaimedRun>(blocking_, [&] { return store_->claimNext(env); });
    if (!claimed) {
      llvm::consumeError(claimed.takeError());
      break; // the database is unavailable: the next request or restart resumes the queue
    }
    if (!claimed->found) break; // another run is in progress (another server) or the queue emptied
    envs_[env].running = true;
    ClaimedRun run = std::move(*claimed);

    // A stage's report row is inserted when it starts (so a stage in progress is visible and a restart can
    // tell where a run stopped) and completed when it ends. Failing to write a report does not stop the run.
    auto beginStage = [this, &run](const std::string& name,
                                   const std::string& command) -> asio::awaitable<std::string> {
      auto id =
          co_await onPool<std::string>(blocking_, [&] { return store_->beginStage(run.id, name, command); });
      if (!id) {
        llvm::consumeError(id.takeError());
        co_return std::string();
      }
      co_return *id;
    };
    // `command` replaces the one given at the start when non-empty (git builds its command line as it runs).
    auto endStage = [this](const std::string& reportId, const std::string& command, const std::string& out,
                           const std::string& err, int rc) -> asio::awaitable<bool> {
      if (!reportId.empty()) {
        auto done = co_await onPool<bool>(blocking_,
                                          [&] { return store_->endStage(reportId, command, out, err, rc); });
        if (!done) llvm::consumeError(done.takeError());
      }
      co_return rc == 0;
    };
    // Records a stage that already ran; returns false if it failed (then the run ends).
    auto stage = [&](const std::string& name, const std::string& command, const std::string& out,
                     const std::string& err, int rc) -> asio::awaitable<bool> {
      std::string reportId = co_await beginStage(name, command);
      co_return co_await endStage(reportId, "", out, err, rc);
    };
    auto finish = [this, &run](bool ok, std::optional<int> version,
                               const nlohmann::json& data) -> asio::awaitable<void> {
      auto r = co_await onPool<bool>(blocking_, [&] { return store_->finish(run, ok, version, data); });
      if (!r) llvm::consumeError(r.takeError());
    };
    auto failWith = [](const std::string& type, const std::string& msg) {
      return nlohmann::json{{"errors", nlohmann::json::array({{{"type", type}, {"message", msg}}})}};
    };

    // Init
    std::string initOut =
        "Compile " + run.id + " of environment " + env + " requested at " + run.requested + "\n";
    if (!run.absorbed.empty())
      initOut += "Merged " + std::to_string(run.absorbed.size()) + " queued request(s) into this run\n";
    if (!run.envVars.empty())
      initOut += "Using extra environment variables during compile " + run.envVars.dump() + "\n";
    std::string initErr;
    if (!settings.serverCompile)
      initErr = "server_compile is disabled for this environment\n";
    else if (info->repoUrl.empty() || info->repoBranch.empty())
      initErr = "the environment has no repository: set repo_url and repo_branch\n";
    bool initOk = co_await stage("Init", "", initOut, initErr, initErr.empty() ? 0 : 1);
    if (!initOk) {
      nlohmann::json data = failWith("Init", initErr);
      co_await finish(false, std::nullopt, data);
      envs_[env].running = false;
      continue;
    }

    // Repository: clone the first time, pull when asked or when the branch changed.
    std::string url = info->repoUrl, branch = info->repoBranch;
    std::optional<StageResult> git;
    std::string gitStage;
    const bool clone = !isCheckout(dir);
    if (clone) {
      gitStage = "Cloning repository";
    } else {
      std::string current = currentBranch(dir);
      if (current != branch)
        gitStage = "Switching branch from " + current + " to " + branch;
      else if (run.forceUpdate)
        gitStage = "Pulling updates";
    }
    std::string gitReportId;
    if (!gitStage.empty()) {
      gitReportId = co_await beginStage(gitStage, "");
      auto r = co_await onPool<StageResult>(blocking_, [&]() -> llvm::Expected<StageResult> {
        return clone ? cloneRepository(url, branch, dir, options_.git)
                     : pullBranch(url, branch, dir, options_.git);
      });
      git = valueOr(std::move(r), StageResult{"git", "", "internal error running git\n", 1, ""});
    }
    bool gitOk = !git || co_await endStage(gitReportId, git->command, git->out, git->err, git->returncode);
    if (!gitOk) {
      nlohmann::json data = failWith("GitError", git->err);
      co_await finish(false, std::nullopt, data);
      envs_[env].running = false;
      continue;
    }
    std::string commit = git ? git->commit : headCommit(dir);

    // A notify that arrived while an equal run compiled this very commit (a webhook delivered twice, two
    // pushes of one commit): that run's result stands, the compiler does not run again.
    if (run.forceUpdate && !commit.empty()) {
      auto dup =
          co_await onPool<Duplicate>(blocking_, [&] { return store_->findDuplicate(env, run, commit); });
      if (!dup)
        llvm::consumeError(dup.takeError());
      else if (dup->found) {
        std::string out =
            "commit " + commit + " was compiled by compile " + dup->compileId +
            ", which was running when this request arrived; its result is reused" +
            (dup->version ? " (version " + std::to_string(*dup->version) + ")" : std::string()) + "\n";
        co_await stage("Already compiled", "", out, "", 0);
        auto r = co_await onPool<bool>(blocking_, [&] { return store_->finishAsDuplicate(run, *dup); });
        if (!r) llvm::consumeError(r.takeError());
        envs_[env].running = false;
        continue;
      }
    }
    {
      auto r = co_await onPool<bool>(blocking_, [&] { return store_->recordCommit(run, commit); });
      if (!r) llvm::consumeError(r.takeError());
    }

    // The project's modules from git, into the environment's clone cache (docs/modules.md).
    if (needsModuleInstall(dir)) {
      std::string modReportId = co_await beginStage("Installing modules", "");
      auto r = co_await onPool<StageResult>(blocking_, [&]() -> llvm::Expected<StageResult> {
        return installModules(dir, envDir + "/modules", run.forceUpdate, options_.git);
      });
      StageResult mods =
          valueOr(std::move(r), StageResult{"", "", "internal error installing modules\n", 1, ""});
      if (!co_await endStage(modReportId, mods.command, mods.out, mods.err, mods.returncode)) {
        co_await finish(false, std::nullopt, failWith("ModuleInstallError", mods.err));
        envs_[env].running = false;
        continue;
      }
    }

    // The compiler, as a child process.
    nlohmann::json metadata = run.metadata.is_object() ? run.metadata : nlohmann::json::object();
    metadata["commit"] = commit;
    metadata["compile_id"] = run.id;
    if (!metadata.contains("type")) metadata["type"] = "api";
    const std::string dataFile = envDir + "/compile-data-" + run.id + ".json";
    std::vector<std::string> argv = {options_.compilerBinary, "-vvv", "export", "-X"};
    if (run.doExport) {
      argv.insert(argv.end(), {"-e", env, "--server_address", options_.serverAddress, "--server_port",
                               std::to_string(options_.serverPort), "--metadata", metadata.dump()});
      if (run.partial) argv.push_back("--partial");
      std::string token = options_.tokenFor ? options_.tokenFor(env) : options_.internalToken;
      if (!token.empty()) argv.insert(argv.end(), {"--token", token});
      argv.insert(argv.end(), options_.exportArgs.begin(), options_.exportArgs.end());
    } else {
      (void)llvm::sys::fs::create_directories(envDir + "/artifacts");
      argv.insert(argv.end(), {"-j", envDir + "/artifacts/" + run.id + ".json"});
    }
    argv.insert(argv.end(), {"--export-compile-data", "--export-compile-data-file", dataFile});
    std::map<std::string, std::string> extraEnv;
    for (auto it = run.envVars.begin(); run.envVars.is_object() && it != run.envVars.end(); ++it)
      extraEnv[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
    auto timeout = options_.compileTimeout;
    std::vector<std::string> shown = argv; // the report never shows the token
    for (size_t i = 0; i + 1 < shown.size(); ++i)
      if (shown[i] == "--token") shown[i + 1] = "<token>";
    std::string command = renderCommand(shown);
    std::string compileReportId = co_await beginStage("Recompiling configuration model", command);
    ChildResult spawnFailed;
    spawnFailed.spawnError = "internal error running the compiler";
    auto childOrError = co_await onPool<ChildResult>(blocking_, [&]() -> llvm::Expected<ChildResult> {
      return runChild(argv, dir, extraEnv, timeout, &cancel_);
    });
    ChildResult child = valueOr(std::move(childOrError), spawnFailed);
    int rc = child.returncode;
    std::string err = child.err;
    std::string failure;
    if (!child.spawnError.empty())
      failure = "the compiler could not be started: " + child.spawnError;
    else if (child.cancelled)
      failure = "the server stopped during the compile";
    else if (child.timedOut)
      failure =
          "the compiler ran past the timeout of " + std::to_string(timeout.count()) + " s and was killed";
    else if (child.signal)
      failure = "the compiler crashed: killed by signal " + std::to_string(child.signal) + " (" +
                strsignal(child.signal) + ")";
    if (!failure.empty()) {
      err += (err.empty() || err.back() == '\n' ? "" : "\n") + failure + "\n";
      rc = rc == 0 ? 1 : rc;
      if (rc < 0) rc = child.signal ? -child.signal : -9;
    }
    std::string out = "Compiling commit " + commit + "\n" + child.out;
    bool ok = co_await endStage(compileReportId, "", out, err, rc);
    std::optional<int> version = parseVersion(child.out + "\n" + child.err);
    nlohmann::json data;
    if (auto buf = llvm::MemoryBuffer::getFile(dataFile)) {
      data = nlohmann::json::parse((*buf)->getBuffer().str(), nullptr, false);
      if (data.is_discarded()) data = nullptr;
    }
    (void)llvm::sys::fs::remove(dataFile);
    if (!failure.empty())
      data = failWith(child.timedOut ? "CompilerTimeout" : "CompilerCrash", failure);
    else if (!ok && (data.is_null() || data.value("errors", nlohmann::json::array()).empty()))
      data = failWith("CompilerError", "the compiler exited with status " + std::to_string(rc));
    if (ok && run.doExport && !version) {
      ok = false;
      data = failWith(
          "ExportError",
          "the compiler succeeded but reported no version (no \"Committed resources with version N\")");
    }
    co_await finish(ok, version, data);
    envs_[env].running = false;
  }
  envs_[env].draining = false;
  envs_[env].running = false;
}

} // namespace inm::compile

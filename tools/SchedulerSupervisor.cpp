// Scheduler child processes (see SchedulerSupervisor.h).
#include "SchedulerSupervisor.h"

#include "service/Log.h"
#include "support/Spawn.h"

#include <boost/asio/post.hpp>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace inm::tools {

using service::logLine;

SchedulerSupervisor::SchedulerSupervisor(boost::asio::io_context& io, SupervisorOptions options)
    : io_(io), options_(std::move(options)), sigchld_(io, SIGCHLD) {
  waitForChildren();
}

void SchedulerSupervisor::waitForChildren() {
  sigchld_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG); // any child: only schedulers are started here
      if (pid <= 0) break;
      onExit(pid, status);
    }
    waitForChildren();
  });
}

void SchedulerSupervisor::ensureRunning(const std::string& env) {
  Child& c = children_[env];
  c.wanted = true;
  if (c.pid > 0 || (c.timer && c.failures > 0)) return; // running, or a restart is already scheduled
  spawn(env);
}

void SchedulerSupervisor::spawn(const std::string& env) {
  Child& c = children_[env];
  if (!c.wanted || c.pid > 0) return;
  std::vector<std::string> argv = {options_.executable, "scheduler", "--environment", env};
  for (const auto& f : options_.configFiles) {
    argv.push_back("-c");
    argv.push_back(f);
  }
  // Die with the server, get the server's effective database settings, no blocked signal. Nothing of the
  // server survives the exec (support::spawn closes every other descriptor): not its listening socket (Asio
  // opens it without SOCK_CLOEXEC), accepted connections or libpq sockets. A killed server frees its port at
  // once.
  support::SpawnOptions so;
  so.argv = std::move(argv);
  so.in = support::Stream::inherit();
  so.parentDeathSignal = SIGTERM;
  so.clearSignalMask = true;
  so.setEnv = {{"INMANTA_DATABASE_HOST", options_.db.host},
               {"INMANTA_DATABASE_PORT", std::to_string(options_.db.port)},
               {"INMANTA_DATABASE_NAME", options_.db.name},
               {"INMANTA_DATABASE_USERNAME", options_.db.username},
               {"INMANTA_DATABASE_PASSWORD", options_.db.password}};
  auto child = support::spawn(so);
  if (!child) {
    // Retried like a scheduler that exited at once (a failed exec used to be exit status 127).
    logLine("error", "scheduler_spawn_failed",
            {{"environment", env}, {"error", llvm::toString(child.takeError())}});
    scheduleRestart(env, std::chrono::seconds(std::min(60, 1 << std::min(c.failures++, 6))));
    return;
  }
  pid_t pid = child->pid;
  c.pid = pid;
  c.started = std::chrono::steady_clock::now();
  logLine("info", "scheduler_started", {{"environment", env}, {"pid", std::to_string(pid)}});
}

void SchedulerSupervisor::onExit(pid_t pid, int status) {
  for (auto& [env, c] : children_) {
    if (c.pid != pid) continue;
    c.pid = -1;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    auto ran = std::chrono::steady_clock::now() - c.started;
    if (!c.wanted) {
      logLine("info", "scheduler_stopped",
              {{"environment", env}, {"pid", std::to_string(pid)}, {"status", std::to_string(code)}});
      reportIfAllGone();
      return;
    }
    std::chrono::seconds delay;
    if (code == 2 && ran < std::chrono::seconds(2)) {
      if (!c.verbMissingLogged)
        logLine("warning", "scheduler_verb_unavailable",
                {{"environment", env},
                 {"detail", "'inmanta scheduler' exited with status 2 at once; retrying every 60 s"}});
      c.verbMissingLogged = true;
      delay = std::chrono::seconds(60);
    } else {
      if (ran > std::chrono::seconds(30)) c.failures = 0;
      delay = std::chrono::seconds(std::min(60, 1 << std::min(c.failures, 6)));
      logLine("warning", "scheduler_exited",
              {{"environment", env},
               {"status", std::to_string(code)},
               {"restart_in_s", std::to_string(delay.count())}});
    }
    ++c.failures;
    scheduleRestart(env, delay);
    return;
  }
}

void SchedulerSupervisor::scheduleRestart(const std::string& env, std::chrono::seconds delay) {
  Child& c = children_[env];
  c.timer = std::make_unique<boost::asio::steady_timer>(io_, delay);
  c.timer->async_wait([this, env](const boost::system::error_code& ec) {
    if (ec) return;
    auto it = children_.find(env);
    if (it == children_.end()) return;
    it->second.timer.reset();
    spawn(env);
  });
}

void SchedulerSupervisor::terminate(const std::string& env, Child& c) {
  c.wanted = false;
  c.failures = 0;
  if (c.timer) c.timer->cancel();
  c.timer.reset();
  if (c.pid <= 0) return;
  pid_t pid = c.pid;
  ::kill(pid, SIGTERM);
  auto killer = std::make_shared<boost::asio::steady_timer>(io_, options_.killAfter);
  killer->async_wait([this, env, pid, killer](const boost::system::error_code& ec) {
    if (ec) return;
    auto it = children_.find(env);
    if (it != children_.end() && it->second.pid == pid) {
      logLine(
          "warning", "scheduler_killed",
          {{"environment", env},
           {"pid", std::to_string(pid)},
           {"detail", "still running " + std::to_string(options_.killAfter.count()) + " s after SIGTERM"}});
      ::kill(pid, SIGKILL);
    }
  });
}

void SchedulerSupervisor::stop(const std::string& env) {
  auto it = children_.find(env);
  if (it != children_.end()) terminate(env, it->second);
}

bool SchedulerSupervisor::running(const std::string& env) const {
  auto it = children_.find(env);
  return it != children_.end() && it->second.pid > 0;
}

void SchedulerSupervisor::stopAll(std::function<void()> allGone) {
  allGone_ = std::move(allGone);
  for (auto& [env, c] : children_) terminate(env, c);
  reportIfAllGone();
}

void SchedulerSupervisor::reportIfAllGone() {
  if (!allGone_) return;
  for (const auto& [env, c] : children_)
    if (c.pid > 0) return;
  auto done = std::move(allGone_);
  allGone_ = nullptr;
  boost::asio::post(io_, std::move(done));
}

void SchedulerSupervisor::killAll() {
  for (auto& [env, c] : children_) {
    if (c.pid <= 0) continue;
    ::kill(c.pid, SIGKILL);
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    c.pid = -1;
  }
}

} // namespace inm::tools

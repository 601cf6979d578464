// Scheduler child processes (see SchedulerSupervisor.h).
#include "SchedulerSupervisor.h"

#include "service/Log.h"

#include <boost/asio/post.hpp>
#include <linux/close_range.h>
#include <sys/prctl.h>
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
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
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
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::string port = std::to_string(options_.db.port);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    logLine("error", "scheduler_spawn_failed", {{"environment", env}, {"error", std::strerror(errno)}});
    return;
  }
  if (pid == 0) {
    // Child: die with the server, get the server's effective database settings, exec the scheduler verb.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setenv("INMANTA_DATABASE_HOST", options_.db.host.c_str(), 1);
    ::setenv("INMANTA_DATABASE_PORT", port.c_str(), 1);
    ::setenv("INMANTA_DATABASE_NAME", options_.db.name.c_str(), 1);
    ::setenv("INMANTA_DATABASE_USERNAME", options_.db.username.c_str(), 1);
    ::setenv("INMANTA_DATABASE_PASSWORD", options_.db.password.c_str(), 1);
    // Nothing of the server survives the exec: not its listening socket (Asio opens it without
    // SOCK_CLOEXEC), accepted connections or libpq sockets. A killed server frees its port at once.
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    ::execv(options_.executable.c_str(), cargv.data());
    ::_exit(127);
  }
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
    c.timer = std::make_unique<boost::asio::steady_timer>(io_, delay);
    std::string e = env;
    c.timer->async_wait([this, e](const boost::system::error_code& ec) {
      if (ec) return;
      auto it = children_.find(e);
      if (it == children_.end()) return;
      it->second.timer.reset();
      spawn(e);
    });
    return;
  }
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

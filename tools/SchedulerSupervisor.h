// The server's supervisor of scheduler processes (orchestrator.md §1, §6.10): one child
// `<own binary> scheduler --environment <uuid> -c <config files…>` per running environment, with the server's
// database settings in INMANTA_DATABASE_* variables. A child that exits is restarted with an exponential
// backoff (1 s doubling to 60 s); one that exits with status 2 within 2 s (the verb is unknown to this
// binary) is logged once and retried only every 60 s. stop() sends SIGTERM then SIGKILL after the stop grace
// (the scheduler's own [scheduler] stop_grace, in which it finishes its running deploys and flushes, plus a
// margin for the flush); every child is reaped (SIGCHLD on the io_context), and stopAll() reports when the
// last one is gone so the server exits only then (docs/server.md "Life cycle"). Children are started by
// support::spawn with every descriptor above stderr closed on exec: a scheduler never holds the server's
// listening socket or its database connections. Invariant: all state is touched on the io_context thread
// only.
#pragma once

#include "service/Service.h"
#include "store/Store.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace inm::tools {

struct SupervisorOptions {
  std::string executable;
  std::vector<std::string> configFiles;
  store::DbSettings db;
  /// SIGTERM to SIGKILL: the scheduler's stop grace plus a margin for its last write.
  std::chrono::seconds killAfter{20};
};

class SchedulerSupervisor final : public service::SchedulerControl {
 public:
  SchedulerSupervisor(boost::asio::io_context& io, SupervisorOptions options);
  void ensureRunning(const std::string& env) override;
  void stop(const std::string& env) override;
  bool running(const std::string& env) const override;
  /// SIGTERM every child (SIGKILL after options.killAfter); used at shutdown. `allGone` runs once, on the
  /// io_context, when no child is left (at once when there is none).
  void stopAll(std::function<void()> allGone = {});
  /// SIGKILL and reap every remaining child (last thing before exit).
  void killAll();

 private:
  struct Child {
    pid_t pid = -1;
    bool wanted = false;
    int failures = 0;
    bool verbMissingLogged = false;
    std::chrono::steady_clock::time_point started;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };
  void spawn(const std::string& env);
  void waitForChildren();
  void onExit(pid_t pid, int status);
  /// spawn(env) again after `delay` (a restart after an exit or a failed start).
  void scheduleRestart(const std::string& env, std::chrono::seconds delay);
  void terminate(const std::string& env, Child& c);
  void reportIfAllGone();

  boost::asio::io_context& io_;
  SupervisorOptions options_;
  std::map<std::string, Child> children_;
  boost::asio::signal_set sigchld_;
  std::function<void()> allGone_;
};

} // namespace inm::tools

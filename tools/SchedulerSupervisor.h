// The server's supervisor of scheduler processes (orchestrator.md §1, §6.10): one child
// `<own binary> scheduler --environment <uuid> -c <config files…>` per running environment, with the server's
// database settings in INMANTA_DATABASE_* variables. A child that exits is restarted with an exponential
// backoff (1 s doubling to 60 s); one that exits with status 2 within 2 s (the verb is unknown to this
// binary) is logged once and retried only every 60 s. stop() sends SIGTERM then SIGKILL after 10 s; every
// child is reaped (SIGCHLD on the io_context). Invariant: all state is touched on the io_context thread only.
#pragma once

#include "service/Service.h"
#include "store/Store.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace inm::tools {

struct SupervisorOptions {
  std::string executable;
  std::vector<std::string> configFiles;
  store::DbSettings db;
};

class SchedulerSupervisor final : public service::SchedulerControl {
 public:
  SchedulerSupervisor(boost::asio::io_context& io, SupervisorOptions options);
  void ensureRunning(const std::string& env) override;
  void stop(const std::string& env) override;
  bool running(const std::string& env) const override;
  /// SIGTERM every child (SIGKILL after 10 s); used at shutdown.
  void stopAll();
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
  void terminate(const std::string& env, Child& c);

  boost::asio::io_context& io_;
  SupervisorOptions options_;
  std::map<std::string, Child> children_;
  boost::asio::signal_set sigchld_;
};

} // namespace inm::tools

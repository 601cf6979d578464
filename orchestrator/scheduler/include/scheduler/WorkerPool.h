// The scheduler process's bounded pool for blocking database work (orchestrator/schedhost/SchedulerHost.cpp):
// an io_context run by up to N threads that the system may refuse. asio::thread_pool throws when a thread is
// refused (EAGAIN under a process or thread limit): uncaught, the scheduler aborts; caught, the pool's
// unwinding joins the threads already started while they still wait for work, and hangs. This pool keeps the
// threads it got and says why it got no more, so the caller decides (too few: a clear error and a non-zero
// exit; fewer: a warning). Invariant: every thread started is joined, on every path out (join(), or the
// destructor, which stops the context first).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace inm::scheduler {

class WorkerPool {
 public:
  /// Starts up to `wanted` threads running the context; stops at the first the system refuses (refusal()).
  explicit WorkerPool(size_t wanted) {
    threads_.reserve(wanted);
    for (size_t i = 0; i < wanted; ++i) {
      try {
        threads_.emplace_back([this] { ioc_.run(); });
      } catch (const std::system_error& ex) {
        refusal_ = ex.what();
        break;
      }
    }
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Stops the context (queued work is dropped) and joins the threads.
  ~WorkerPool() {
    ioc_.stop();
    join();
  }

  /// Where work is posted (asio::post, asio::make_strand).
  boost::asio::io_context& context() { return ioc_; }
  /// How many threads started.
  size_t threads() const { return threads_.size(); }
  /// Why the first refused thread was refused ("" when all started).
  const std::string& refusal() const { return refusal_; }
  /// Lets the threads finish the queued work, then waits for them.
  void join() {
    work_.reset();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{ioc_.get_executor()};
  std::vector<std::thread> threads_;
  std::string refusal_;
};

} // namespace inm::scheduler

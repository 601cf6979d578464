// Two jobs side by side when the system gives a thread, one after the other when it does not: the scheduler's
// writer commits a batch over two connections at once (orchestrator/schedhost/SchedulerHost.cpp), and a
// refused thread (EAGAIN under a process or thread limit) must not abort the scheduler with
// std::system_error.
#pragma once

#include <functional>
#include <string>
#include <system_error>
#include <thread>

namespace inm::scheduler {

/// Runs `first` on this thread and `second` on a new one, and returns when both are done. When the thread
/// cannot be started, `refused` gets the reason and `second` runs here after `first`.
inline void runPair(const std::function<void()>& first, const std::function<void()>& second,
                    const std::function<void(const std::string&)>& refused) {
  std::thread other;
  try {
    other = std::thread(second);
  } catch (const std::system_error& ex) {
    refused(ex.what());
  }
  first();
  if (other.joinable())
    other.join();
  else
    second();
}

} // namespace inm::scheduler

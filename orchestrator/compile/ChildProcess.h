// Runs the compiler as a child process for the "Recompiling configuration model" stage (private to the
// compile service; blocking, so it runs on the bounded pool). The child gets its own process group so a
// timeout kills the compiler and anything it started. Invariant: runChild always returns — the child is
// reaped on every path and its output is capped, so a runaway or crashing compiler cannot wedge the queue.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace inm::compile {

/// The result of one child run.
struct ChildResult {
  int returncode = -1;    ///< exit status; -1 when it did not exit normally
  int signal = 0;         ///< the terminating signal, 0 if it exited
  bool timedOut = false;  ///< killed after the timeout
  bool cancelled = false; ///< killed because `cancel` was set (server shutdown)
  std::string out, err;   ///< captured stdout / stderr (capped)
  std::string spawnError; ///< non-empty when it could not be started
};

/// Runs `argv` in `cwd` with the current environment plus `extraEnv`, for at most `timeout`; killed within a
/// second once `*cancel` becomes true (when given).
ChildResult runChild(const std::vector<std::string>& argv, const std::string& cwd,
                     const std::map<std::string, std::string>& extraEnv, std::chrono::seconds timeout,
                     const std::atomic<bool>* cancel = nullptr);

/// A shell-style rendering of argv for reports.
std::string renderCommand(const std::vector<std::string>& argv);

} // namespace inm::compile

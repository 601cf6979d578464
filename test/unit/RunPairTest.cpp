// scheduler/RunPair.h: two jobs on two threads, or in turn when the system refuses the thread. The refusal is
// real: a forked child as an unprivileged user under RLIMIT_NPROC 0 (root ignores the limit), so the test
// fails if runPair lets std::system_error escape (the child aborts) or drops a job.
#include "scheduler/RunPair.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <atomic>
#include <unistd.h>

namespace {

using inm::scheduler::runPair;

TEST(RunPair, BothRunOnTwoThreads) {
  std::thread::id a, b;
  bool refused = false;
  runPair([&] { a = std::this_thread::get_id(); }, [&] { b = std::this_thread::get_id(); },
          [&](const std::string&) { refused = true; });
  EXPECT_FALSE(refused);
  EXPECT_EQ(a, std::this_thread::get_id());
  EXPECT_NE(b, std::thread::id());
  EXPECT_NE(a, b);
}

TEST(RunPair, ARefusedThreadRunsTheSecondJobAfterTheFirst) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become uid 65534 under RLIMIT_NPROC 0";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit none = {0, 0};
    if (setgid(65534) != 0 || setuid(65534) != 0 || setrlimit(RLIMIT_NPROC, &none) != 0) _exit(3);
    int order = 0, first = 0, second = 0;
    std::string why;
    runPair([&] { first = ++order; }, [&] { second = ++order; }, [&](const std::string& w) { why = w; });
    // Exit codes: 0 = both ran, first then second, with the reason reported.
    _exit(first == 1 && second == 2 && !why.empty() ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

} // namespace

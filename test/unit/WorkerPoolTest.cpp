// scheduler/WorkerPool.h: the scheduler's database pool keeps the threads the system gives and reports a
// refusal instead of throwing. The refusal is real: a forked child as an otherwise unused uid under
// RLIMIT_NPROC (root ignores the limit), so the test fails if the pool lets std::system_error escape (the
// child aborts), hangs joining (the parent's wait never returns and ctest times out) or drops posted work.
#include "scheduler/WorkerPool.h"

#include <boost/asio/post.hpp>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <atomic>
#include <unistd.h>

namespace {

using inm::scheduler::WorkerPool;

TEST(WorkerPool, RunsPostedWorkOnItsThreadsAndJoinWaitsForIt) {
  std::atomic<int> done{0};
  {
    WorkerPool pool(4);
    EXPECT_EQ(pool.threads(), 4u);
    EXPECT_EQ(pool.refusal(), "");
    for (int i = 0; i < 100; ++i) boost::asio::post(pool.context(), [&] { done++; });
    pool.join();
    EXPECT_EQ(done.load(), 100);
  }
}

// Exit codes of the child: 0 = as expected; 3 = could not drop privileges; 4 = wrong thread count or no
// reason; 5 = posted work did not run.
int refusedChild(rlim_t nproc, size_t wantThreads) {
  struct rlimit lim = {nproc, nproc};
  if (setgid(61234) != 0 || setuid(61234) != 0 || setrlimit(RLIMIT_NPROC, &lim) != 0) return 3;
  std::atomic<int> done{0};
  WorkerPool pool(4);
  if (pool.threads() != wantThreads || pool.refusal().empty()) return 4;
  if (wantThreads > 0) {
    for (int i = 0; i < 10; ++i) boost::asio::post(pool.context(), [&] { done++; });
    pool.join();
    if (done.load() != 10) return 5;
  }
  return 0; // the destructor stops and joins; a hang there keeps the parent waiting
}

void expectChild(rlim_t nproc, size_t wantThreads) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(refusedChild(nproc, wantThreads));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(WorkerPool, NoThreadAtAllIsReportedNotThrown) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become uid 61234 under RLIMIT_NPROC";
  expectChild(0, 0);
}

TEST(WorkerPool, SomeThreadsAreKeptAndJoined) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become uid 61234 under RLIMIT_NPROC";
  expectChild(3, 2); // the child itself and two threads
}

} // namespace

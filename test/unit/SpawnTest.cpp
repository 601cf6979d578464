// Unit tests of the process-spawn helper (support/Spawn.h) against real children
// (/bin/sh, /usr/bin/env, sleep): descriptors above stderr are not inherited unless handed down, the
// environment rules, the working directory, exit statuses, a failed exec reported by spawn(), and stopping a
// child and its process group. Invariant: every test reaps every child it starts.
#include "support/Spawn.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

using namespace inm::support;

namespace {

/// Everything the child wrote to its stdout pipe, then its exit code.
std::pair<std::string, int> runCapture(SpawnOptions o) {
  o.out = Stream::pipe();
  auto c = spawn(o);
  if (!c) return {"spawn error: " + llvm::toString(c.takeError()), -1};
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(c->stdoutFd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  ::close(c->stdoutFd);
  return {out, exitCode(waitExit(c->pid))};
}

SpawnOptions sh(const std::string& script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

std::string fdState(int fd) {
  return "if [ -e /proc/$$/fd/" + std::to_string(fd) + " ]; then echo open; else echo closed; fi";
}

} // namespace

TEST(Spawn, DescriptorsAboveStderrAreNotInherited) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0); // no close-on-exec: a plain fork+exec would hand both ends down
  auto [out, code] = runCapture(sh(fdState(p[0]) + "; " + fdState(p[1])));
  EXPECT_EQ(out, "closed\nclosed\n");
  EXPECT_EQ(code, 0);
  // Handed down explicitly: the same number in the child, the other one still closed.
  SpawnOptions kept = sh(fdState(p[0]) + "; " + fdState(p[1]));
  kept.keepFds = {p[1]};
  auto [out2, code2] = runCapture(kept);
  EXPECT_EQ(out2, "closed\nopen\n");
  EXPECT_EQ(code2, 0);
  ::close(p[0]);
  ::close(p[1]);
}

TEST(Spawn, EnvironmentRules) {
  ::setenv("INM_SPAWN_TEST_KEEP", "kept", 1);
  ::setenv("INM_SPAWN_TEST_DROP", "dropped", 1);
  ::setenv("INM_SPAWN_TEST_OVER", "old", 1);
  SpawnOptions o;
  o.argv = {"/usr/bin/env"};
  o.unsetEnv = {"INM_SPAWN_TEST_DROP"};
  o.setEnv = {{"INM_SPAWN_TEST_OVER", "new"}, {"INM_SPAWN_TEST_SET", "set"}};
  auto [out, code] = runCapture(o);
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("INM_SPAWN_TEST_KEEP=kept\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("INM_SPAWN_TEST_DROP"), std::string::npos) << out;
  EXPECT_NE(out.find("INM_SPAWN_TEST_OVER=new\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("INM_SPAWN_TEST_OVER=old"), std::string::npos) << out;
  EXPECT_NE(out.find("INM_SPAWN_TEST_SET=set\n"), std::string::npos) << out;
  // From nothing: only what is set.
  o.clearEnvironment = true;
  o.setEnv = {{"ONLY", "this"}};
  auto [clean, code2] = runCapture(o);
  EXPECT_EQ(clean, "ONLY=this\n");
  EXPECT_EQ(code2, 0);
}

TEST(Spawn, WorkingDirectoryAndStdin) {
  SpawnOptions o = sh("pwd; cat");
  o.cwd = "/";
  auto [out, code] = runCapture(o); // stdin defaults to /dev/null: cat ends at once
  EXPECT_EQ(out, "/\n");
  EXPECT_EQ(code, 0);
  // A pipe for stdin: what we write comes out.
  SpawnOptions cat = sh("cat");
  cat.in = Stream::pipe();
  cat.out = Stream::pipe();
  auto c = spawn(cat);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  ASSERT_EQ(::write(c->stdinFd, "hello", 5), 5);
  ::close(c->stdinFd);
  char buf[16] = {};
  std::string got;
  ssize_t n;
  while ((n = ::read(c->stdoutFd, buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  ::close(c->stdoutFd);
  EXPECT_EQ(got, "hello");
  EXPECT_EQ(exitCode(waitExit(c->pid)), 0);
}

TEST(Spawn, ExitStatus) {
  EXPECT_EQ(runCapture(sh("exit 7")).second, 7);
  EXPECT_EQ(runCapture(sh("kill -TERM $$")).second, 128 + SIGTERM);
  auto c = spawn(sh("exit 3"));
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  int status = waitExit(c->pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST(Spawn, FailuresAreErrorsOfSpawn) {
  SpawnOptions missing;
  missing.argv = {"/nonexistent/inm-spawn-test"};
  auto c = spawn(missing);
  ASSERT_FALSE(bool(c));
  EXPECT_EQ(llvm::toString(c.takeError()),
            "cannot start /nonexistent/inm-spawn-test: No such file or directory");
  SpawnOptions badDir = sh("true");
  badDir.cwd = "/nonexistent/dir";
  auto d = spawn(badDir);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(llvm::toString(d.takeError()),
            "cannot start /bin/sh: cannot change to directory /nonexistent/dir: No such file or directory");
  EXPECT_EQ(runCapture(SpawnOptions{}).first, "spawn error: cannot start a process without a program");
}

TEST(Spawn, StopProcessAndItsGroup) {
  // A child that ignores SIGTERM is killed after the grace.
  SpawnOptions stubborn = sh("trap '' TERM; echo ready; while :; do sleep 1; done");
  stubborn.out = Stream::pipe();
  stubborn.newProcessGroup = true;
  auto c = spawn(stubborn);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  char buf[8];
  ASSERT_GT(::read(c->stdoutFd, buf, sizeof buf), 0); // the trap is set
  ::close(c->stdoutFd);
  EXPECT_EQ(::getpgid(c->pid), c->pid); // leads its own group
  auto t0 = std::chrono::steady_clock::now();
  int status = stopProcess(c->pid, SIGTERM, std::chrono::milliseconds(300), true);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));
  // A grandchild in the group dies with it.
  SpawnOptions parent = sh("trap '' TERM; sleep 30 & echo $!; wait");
  parent.out = Stream::pipe();
  parent.newProcessGroup = true;
  auto p = spawn(parent);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  std::string line;
  char ch;
  while (::read(p->stdoutFd, &ch, 1) == 1 && ch != '\n') line += ch;
  ::close(p->stdoutFd);
  pid_t grandchild = std::stoi(line);
  stopProcess(p->pid, SIGTERM, std::chrono::milliseconds(100), true);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, comm, state;
    gone = !(stat >> pid >> comm >> state) || state == "Z"; // reaped, or a zombie of a non-reaping pid 1
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived its group's SIGKILL";
  // A plain SIGTERM is enough for a child that does not ignore it; tryWait sees it end.
  auto s = spawn(sh("sleep 30"));
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_FALSE(tryWait(s->pid).has_value());
  int st = stopProcess(s->pid, SIGTERM, std::chrono::seconds(5));
  EXPECT_EQ(exitCode(st), 128 + SIGTERM);
}

// The program executed and the argv[0] it sees are separate: the handlers resolve "ssh" on PATH but start it
// as "ssh" (what `ps`, and the tests that look for an ssh master by its argv, see).
TEST(Spawn, ProgramIsExecutedUnderTheGivenArgvZero) {
  SpawnOptions o;
  o.argv = {"named-shell", "-c", "echo $0"};
  o.program = "/bin/sh";
  auto [out, code] = runCapture(o);
  EXPECT_EQ(out, "named-shell\n");
  EXPECT_EQ(code, 0);
}

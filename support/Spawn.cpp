// The process-spawn helper (include/support/Spawn.h). fork + execve: the callers are multi-threaded (the
// server, the scheduler, the executor), so everything that allocates — argv, the environment block, the
// sorted list of kept descriptors — is built before fork, and the child makes only async-signal-safe calls
// until exec. A close-on-exec pipe carries a failing step's errno from the child back to spawn(): zero bytes
// read means the exec happened. Invariant: every descriptor above stderr that is not in keepFds is marked
// close-on-exec in the child (close_range), so nothing of ours leaks into a program, whoever opened it and
// how.
#include "support/Spawn.h"

#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace inm::support {

namespace {

/// The step of the child's set-up that failed, sent with its errno over the error pipe.
enum Step : int { kExec = 1, kChdir, kStreams, kUser, kParentGone };

struct Failure {
  int step;
  int err;
};

llvm::Error fail(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

/// Our environment with the rules of `o` applied, as "NAME=value" strings.
std::vector<std::string> buildEnvironment(const SpawnOptions& o) {
  std::vector<std::string> env;
  auto nameOf = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  if (!o.clearEnvironment)
    for (char** e = environ; e && *e; ++e) {
      std::string kv = *e;
      if (std::find(o.unsetEnv.begin(), o.unsetEnv.end(), nameOf(kv)) == o.unsetEnv.end())
        env.push_back(std::move(kv));
    }
  for (const auto& [name, value] : o.setEnv) {
    std::erase_if(env, [&](const std::string& kv) { return nameOf(kv) == name; });
    env.push_back(name + "=" + value);
  }
  return env;
}

[[noreturn]] void childFail(int errPipe, int step) {
  Failure f{step, errno};
  (void)!::write(errPipe, &f, sizeof f);
  ::_exit(127);
}

/// Connects standard stream `target` (0, 1, 2) as asked; `pipeEnd` is the child's end of a Pipe stream.
bool connectStream(const Stream& s, int target, int pipeEnd) {
  int from = -1;
  switch (s.mode) {
  case StreamMode::Inherit: return true;
  case StreamMode::Null:
    from = ::open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
    if (from < 0) return false;
    break;
  case StreamMode::Pipe: from = pipeEnd; break;
  case StreamMode::Fd: from = s.fd; break;
  }
  if (from == target) return ::fcntl(target, F_SETFD, 0) == 0; // dup2 onto itself keeps close-on-exec
  return ::dup2(from, target) == target;
}

void closeIf(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

} // namespace

llvm::Expected<Child> spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return fail("cannot start a process without a program");
  const std::string& program = o.program.empty() ? o.argv[0] : o.program;
  std::vector<std::string> args = o.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envStrings = buildEnvironment(o);
  std::vector<char*> envp;
  for (std::string& e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<int> keep = o.keepFds;
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::erase_if(keep, [](int fd) { return fd < 3; });

  // pipes[i]: {read, write} for stream i when it is a Pipe.
  int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  int errPipe[2] = {-1, -1};
  auto closeAll = [&] {
    for (auto& p : pipes) closeIf(p[0]), closeIf(p[1]);
    closeIf(errPipe[0]), closeIf(errPipe[1]);
  };
  const Stream* streams[3] = {&o.in, &o.out, &o.err};
  for (int i = 0; i < 3; ++i)
    if (streams[i]->mode == StreamMode::Pipe && ::pipe2(pipes[i], O_CLOEXEC) != 0) {
      std::string why = std::strerror(errno);
      closeAll();
      return fail("cannot create a pipe for " + program + ": " + why);
    }
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    std::string why = std::strerror(errno);
    closeAll();
    return fail("cannot create a pipe for " + program + ": " + why);
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: async-signal-safe calls only, until exec.
    if (o.parentDeathSignal) {
      ::prctl(PR_SET_PDEATHSIG, o.parentDeathSignal);
      if (::getppid() != parent) childFail(errPipe[1], kParentGone);
    }
    if (o.newSession)
      ::setsid();
    else if (o.newProcessGroup)
      ::setpgid(0, 0);
    if (o.clearSignalMask) {
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
    }
    if (o.defaultSignals)
      for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    // stdin is the read end of its pipe, stdout/stderr the write ends.
    if (!connectStream(o.in, 0, pipes[0][0]) || !connectStream(o.out, 1, pipes[1][1]) ||
        !connectStream(o.err, 2, pipes[2][1]))
      childFail(errPipe[1], kStreams);
    // Everything above stderr closes on exec, except the kept descriptors.
    unsigned from = 3;
    for (int fd : keep) {
      if (::fcntl(fd, F_SETFD, 0) != 0) childFail(errPipe[1], kStreams);
      if (unsigned(fd) > from) ::close_range(from, unsigned(fd) - 1, CLOSE_RANGE_CLOEXEC);
      from = unsigned(fd) + 1;
    }
    ::close_range(from, ~0U, CLOSE_RANGE_CLOEXEC);
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) childFail(errPipe[1], kChdir);
    if (o.runAs && (::setgid(o.runAs->second) != 0 || ::setuid(o.runAs->first) != 0))
      childFail(errPipe[1], kUser);
    ::execve(program.c_str(), argv.data(), envp.data());
    childFail(errPipe[1], kExec);
  }
  if (pid < 0) {
    std::string why = std::strerror(errno);
    closeAll();
    return fail("cannot start " + program + ": " + why);
  }
  Child c;
  c.pid = pid;
  closeIf(pipes[0][0]), closeIf(pipes[1][1]), closeIf(pipes[2][1]); // the child's ends
  c.stdinFd = std::exchange(pipes[0][1], -1);
  c.stdoutFd = std::exchange(pipes[1][0], -1);
  c.stderrFd = std::exchange(pipes[2][0], -1);
  closeIf(errPipe[1]);
  Failure f{0, 0};
  ssize_t n;
  while ((n = ::read(errPipe[0], &f, sizeof f)) < 0 && errno == EINTR) {
  }
  closeIf(errPipe[0]);
  if (n <= 0) return c; // closed on exec: the program runs
  waitExit(pid);
  closeIf(c.stdinFd), closeIf(c.stdoutFd), closeIf(c.stderrFd);
  std::string why = std::strerror(f.err);
  switch (f.step) {
  case kChdir: return fail("cannot start " + program + ": cannot change to directory " + o.cwd + ": " + why);
  case kStreams: return fail("cannot start " + program + ": cannot connect its standard streams: " + why);
  case kUser:
    return fail("cannot start " + program + " as uid " + std::to_string(o.runAs->first) + ": " + why);
  case kParentGone: return fail("cannot start " + program + ": its parent is gone");
  default: return fail("cannot start " + program + ": " + why);
  }
}

int waitExit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

std::optional<int> tryWait(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == 0) return std::nullopt;
  return r < 0 ? -1 : status;
}

int exitCode(int status) {
  if (status < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int stopProcess(pid_t pid, int sig, std::chrono::milliseconds grace, bool group) {
  if (pid <= 0) return -1;
  ::kill(pid, sig);
  auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    if (auto st = tryWait(pid)) return *st;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (group) ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  return waitExit(pid);
}

std::string findOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return std::string();
}

} // namespace inm::support

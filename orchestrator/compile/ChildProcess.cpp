// posix_spawn-based child runner (see ChildProcess.h). posix_spawn instead of fork: the server is
// multithreaded, and spawn with a chdir file action and POSIX_SPAWN_SETPGROUP needs no code between fork and
// exec.
#include "ChildProcess.h"

#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char** environ;

namespace inm::compile {
namespace {

constexpr size_t kOutputCap = 4 << 20; // per stream

void appendCapped(std::string& s, const char* data, size_t n, bool& truncated) {
  if (s.size() >= kOutputCap) {
    truncated = true;
    return;
  }
  s.append(data, std::min(n, kOutputCap - s.size()));
  if (s.size() >= kOutputCap) truncated = true;
}

} // namespace

std::string renderCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`{}") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

ChildResult runChild(const std::vector<std::string>& argv, const std::string& cwd,
                     const std::map<std::string, std::string>& extraEnv, std::chrono::seconds timeout,
                     const std::atomic<bool>* cancel) {
  ChildResult r;
  int outPipe[2], errPipe[2];
  if (pipe2(outPipe, O_CLOEXEC) != 0) {
    r.spawnError = std::strerror(errno);
    return r;
  }
  if (pipe2(errPipe, O_CLOEXEC) != 0) {
    r.spawnError = std::strerror(errno);
    close(outPipe[0]), close(outPipe[1]);
    return r;
  }
  // Environment: ours, with extraEnv overriding.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extraEnv) env[k] = v;
  std::vector<std::string> envStrings;
  for (const auto& [k, v] : env) envStrings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (std::string& s : envStrings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argvCopy = argv;
  for (std::string& s : argvCopy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, errPipe[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  // Nothing of the server leaks into a compile: its listening socket and connections (opened without
  // close-on-exec by Asio), database sockets, spooled request files.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(outPipe[1]);
  close(errPipe[1]);
  if (rc != 0) {
    r.spawnError = "cannot start " + argv[0] + ": " + std::strerror(rc);
    close(outPipe[0]), close(errPipe[0]);
    return r;
  }

  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool outOpen = true, errOpen = true, truncOut = false, truncErr = false;
  char buf[65536];
  while (outOpen || errOpen) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timedOut = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (cancel && cancel->load()) {
      r.cancelled = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    if (!outOpen) fds[0].fd = -1;
    if (!errOpen) fds[1].fd = -1;
    int n = poll(fds, 2, int(std::min<long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0)
        appendCapped(i == 0 ? r.out : r.err, buf, size_t(got), i == 0 ? truncOut : truncErr);
      else if (got == 0 || errno != EINTR)
        (i == 0 ? outOpen : errOpen) = false;
    }
  }
  close(outPipe[0]);
  close(errPipe[0]);
  // The streams are closed: the child has exited, or closed them and may still run until the deadline.
  // Wait for the exit without reaping (WNOWAIT), so the process group id cannot be reused while we kill what
  // is left in the group; then reap.
  for (;;) {
    siginfo_t info{};
    int w = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (w == 0 && info.si_pid == pid) break;
    if (w < 0 && errno != EINTR) break;
    if ((std::chrono::steady_clock::now() >= deadline || (cancel && cancel->load())) && !r.timedOut) {
      r.timedOut = true;
      kill(-pid, SIGKILL);
    }
    usleep(20000);
  }
  kill(-pid, SIGKILL); // anything left in its process group
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    r.returncode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
  if (truncOut) r.out += "\n[output truncated]\n";
  if (truncErr) r.err += "\n[output truncated]\n";
  return r;
}

} // namespace inm::compile

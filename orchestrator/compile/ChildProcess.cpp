// The compile service's child runner (see ChildProcess.h): started by support::spawn (its own process group,
// output on pipes), drained with poll() under a deadline, reaped on every path.
#include "ChildProcess.h"

#include "support/Spawn.h"

#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

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
  // Our environment with extraEnv overriding; stdin /dev/null; stdout/stderr captured; a process group of its
  // own (a timeout kills the compiler and what it started); no blocked or ignored signal of the server.
  // Nothing of the server leaks into a compile (support::spawn closes every other descriptor on exec): its
  // listening socket and connections (opened without close-on-exec by Asio), database sockets, spooled
  // request files.
  support::SpawnOptions so;
  so.argv = argv;
  so.cwd = cwd;
  for (const auto& [k, v] : extraEnv) so.setEnv.emplace_back(k, v);
  so.out = support::Stream::pipe();
  so.err = support::Stream::pipe();
  so.newProcessGroup = true;
  so.clearSignalMask = true;
  so.defaultSignals = true;
  auto child = support::spawn(so);
  if (!child) {
    r.spawnError = llvm::toString(child.takeError());
    return r;
  }
  const pid_t pid = child->pid;
  int outPipe[2] = {child->stdoutFd, -1}, errPipe[2] = {child->stderrFd, -1};

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

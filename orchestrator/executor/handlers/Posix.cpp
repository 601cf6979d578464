// POSIX helpers for the std handlers (handlers/Posix.h). runCommand starts the program (support::spawn)
// without a shell, so no argument is ever interpreted; stdin is fed and both output pipes are drained in one
// poll() loop to avoid a full-pipe deadlock. SIGPIPE on the stdin pipe is avoided by the executor ignoring
// SIGPIPE (a closed reader then shows as EPIPE and ends the feeding).
#include "Posix.h"

#include "support/Spawn.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace inm::executor::posix {

void throwErrno(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

std::string userName(uid_t uid) {
  struct passwd pw, *res = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) return pw.pw_name;
  return std::to_string(uid);
}

std::string groupName(gid_t gid) {
  struct group gr, *res = nullptr;
  char buf[4096];
  if (getgrgid_r(gid, &gr, buf, sizeof buf, &res) == 0 && res) return gr.gr_name;
  return std::to_string(gid);
}

uid_t lookupUser(const std::string& name) {
  struct passwd pw, *res = nullptr;
  char buf[4096];
  if (getpwnam_r(name.c_str(), &pw, buf, sizeof buf, &res) == 0 && res) return pw.pw_uid;
  throw std::runtime_error("user '" + name + "' does not exist on this host");
}

gid_t lookupGroup(const std::string& name) {
  struct group gr, *res = nullptr;
  char buf[4096];
  if (getgrnam_r(name.c_str(), &gr, buf, sizeof buf, &res) == 0 && res) return gr.gr_gid;
  throw std::runtime_error("group '" + name + "' does not exist on this host");
}

int modeToPermissions(mode_t mode) {
  mode &= 07777;
  return static_cast<int>(((mode >> 9) & 7) * 1000 + ((mode >> 6) & 7) * 100 + ((mode >> 3) & 7) * 10 +
                          (mode & 7));
}

mode_t permissionsToMode(long long permissions) {
  if (permissions < 0 || permissions > 7777)
    throw std::runtime_error("permissions " + std::to_string(permissions) +
                             " are not a mode (expected e.g. 644)");
  mode_t mode = 0;
  long long p = permissions;
  for (int shift = 0; shift < 12; shift += 3, p /= 10) {
    int digit = static_cast<int>(p % 10);
    if (digit > 7)
      throw std::runtime_error("permissions " + std::to_string(permissions) +
                               " contain the non-octal digit " + std::to_string(digit));
    mode |= static_cast<mode_t>(digit) << shift;
  }
  return mode;
}

void chownNames(const std::string& path, const std::string& owner, const std::string& group) {
  uid_t uid = owner.empty() ? static_cast<uid_t>(-1) : lookupUser(owner);
  gid_t gid = group.empty() ? static_cast<gid_t>(-1) : lookupGroup(group);
  if (lchown(path.c_str(), uid, gid) != 0) throwErrno("cannot change owner/group of", path);
}

using support::findOnPath;

bool onPath(const std::string& name) { return !findOnPath(name).empty(); }

CommandResult runCommand(const std::vector<std::string>& argv, const std::string* input,
                         const std::string& outputFile) {
  CommandResult result;
  if (argv.empty()) return result;
  // The executor is multi-threaded: the child may only make async-signal-safe calls, so the PATH search
  // (which allocates) happens here.
  std::string exe = findOnPath(argv[0]);
  if (exe.empty()) {
    result.err = argv[0] + ": command not found";
    return result;
  }
  int fileFd = -1;
  if (!outputFile.empty()) {
    fileFd = open(outputFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fileFd < 0) {
      result.err = std::string("cannot start ") + argv[0] + ": " + std::strerror(errno);
      return result;
    }
  }
  // The command inherits only stdin/stdout/stderr: pipes (or the output file for both outputs), /dev/null as
  // stdin when there is no input.
  support::SpawnOptions so;
  so.argv = argv; // argv[0] as the caller wrote it (e.g. "ssh"), the resolved path executed
  so.program = exe;
  so.in = input ? support::Stream::pipe() : support::Stream::null();
  so.out = fileFd >= 0 ? support::Stream::to(fileFd) : support::Stream::pipe();
  so.err = fileFd >= 0 ? support::Stream::to(fileFd) : support::Stream::pipe();
  auto child = support::spawn(so);
  if (fileFd >= 0) close(fileFd);
  if (!child) {
    // Started but not executed (a vanished or unreadable program): the shell's "cannot execute" status.
    result.exitCode = 127;
    result.err = llvm::toString(child.takeError());
    return result;
  }
  pid_t pid = child->pid;
  // fds[0] stdout, fds[1] stderr, fds[2] stdin (written while the outputs drain: no full-pipe deadlock).
  struct pollfd fds[3] = {
      {child->stdoutFd, POLLIN, 0}, {child->stderrFd, POLLIN, 0}, {child->stdinFd, POLLOUT, 0}};
  size_t written = 0;
  if (fds[2].fd >= 0 && input->empty()) close(fds[2].fd), fds[2].fd = -1;
  char buf[4096];
  while (fds[0].fd >= 0 || fds[1].fd >= 0 || fds[2].fd >= 0) {
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = (fds[2].revents & POLLOUT) ? ::write(fds[2].fd, input->data() + written,
                                                       std::min<size_t>(input->size() - written, 65536))
                                             : -1;
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == input->size()) {
        close(fds[2].fd);
        fds[2].fd = -1;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = support::waitExit(pid);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!outputFile.empty()) {
    std::ifstream in(outputFile, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    result.err = ss.str();
  }
  return result;
}

} // namespace inm::executor::posix

// POSIX helpers for the std handlers (handlers/Posix.h). runCommand forks and execs without a shell, so no
// argument is ever interpreted; both output pipes are drained with poll() to avoid a full-pipe deadlock.
#include "Posix.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
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

namespace {
/// The full path of an executable found on PATH, "" when absent. Resolved before fork so the child only
/// execs.
std::string findOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return std::string();
}
} // namespace

bool onPath(const std::string& name) { return !findOnPath(name).empty(); }

CommandResult runCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  if (argv.empty()) return result;
  // The executor is multi-threaded: the child may only make async-signal-safe calls, so the PATH search
  // (which allocates) happens here.
  std::string exe = findOnPath(argv[0]);
  if (exe.empty()) {
    result.err = argv[0] + ": command not found";
    return result;
  }
  int outPipe[2], errPipe[2];
  if (pipe2(outPipe, O_CLOEXEC) != 0) return result;
  if (pipe2(errPipe, O_CLOEXEC) != 0) {
    close(outPipe[0]);
    close(outPipe[1]);
    return result;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    close_range(3, ~0U, 0); // the command inherits only stdin/stdout/stderr
    execv(exe.c_str(), args.data());
    _exit(127);
  }
  close(outPipe[1]);
  close(errPipe[1]);
  if (pid < 0) {
    close(outPipe[0]);
    close(errPipe[0]);
    result.err = std::string("fork failed: ") + std::strerror(errno);
    return result;
  }
  struct pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  int open_ = 2;
  char buf[4096];
  while (open_ > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

} // namespace inm::executor::posix

// Small POSIX helpers shared by the std handlers (private to the executor library): owner/group names, the
// `permissions` integer (octal digits written as decimal, 644 = rw-r--r--), errno messages and running a
// command without a shell. Every failure is a std::runtime_error naming the path, user or command: the
// framework turns it into a `failed` state with that message.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace inm::executor::posix {

/// "<what> <path>: <strerror(errno)>".
[[noreturn]] void throwErrno(const std::string& what, const std::string& path);

/// The name of a uid/gid, or its number as text when it has no name.
std::string userName(uid_t uid);
std::string groupName(gid_t gid);
/// The uid/gid of a name; a missing user/group throws "user 'x' does not exist".
uid_t lookupUser(const std::string& name);
gid_t lookupGroup(const std::string& name);

/// st_mode & 07777 as the decimal-written octal integer (0644 -> 644).
int modeToPermissions(mode_t mode);
/// 644 -> 0644; a value with digits 8/9 or above 7777 throws naming the value.
mode_t permissionsToMode(long long permissions);

/// Applies owner/group (either may be empty = unchanged) to `path` without following a final symlink.
void chownNames(const std::string& path, const std::string& owner, const std::string& group);

/// The outcome of a command.
struct CommandResult {
  int exitCode = -1; ///< -1 when the command could not be started or was killed
  std::string out;   ///< stdout
  std::string err;   ///< stderr
};
/// Runs argv[0] (looked up in PATH) with the arguments, no shell; waits for it. stdin is `input` (from
/// /dev/null when null). With `outputFile`, stdout and stderr go to that file instead of pipes (for a command
/// that leaves a daemon holding them open, like an ssh master) and `err` is read back from it.
CommandResult runCommand(const std::vector<std::string>& argv, const std::string* input = nullptr,
                         const std::string& outputFile = "");
/// Whether an executable named `name` is on PATH.
bool onPath(const std::string& name);

} // namespace inm::executor::posix

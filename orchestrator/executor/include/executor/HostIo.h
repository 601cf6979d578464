// Host IO (docs/deploy.md "Agentless over SSH"): every change the built-in handlers make to a machine goes
// through this interface, so File, Directory, Symlink, Package and Service act the same on the executor's own
// host (LocalIo: POSIX calls) and on a host reached over SSH (SshIo: one multiplexed OpenSSH master per
// agent, each operation a POSIX-shell command over it). Invariants: a failure to act is a std::runtime_error
// naming the path (and the host when remote); a failure to *reach* the host (connection refused, refused key,
// unknown or changed host key) is a HostUnavailable naming host, port and ssh's own reason, which the handler
// framework reports as state `unavailable`. Permissions are the `permissions` integer (octal digits written
// as decimal).
#pragma once

#include "model/AgentUri.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace inm::executor {

/// The host cannot be reached (the resource ends `unavailable`, not `failed`).
class HostUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What lstat says about a path.
struct PathInfo {
  enum class Type { Missing, File, Directory, Symlink, Other };
  Type type = Type::Missing;
  int permissions = 0;      ///< 644 for rw-r--r--
  std::string owner, group; ///< names (the number as text when it has none)
  long long size = 0;       ///< bytes (describePath only; 0 from lstat on a remote host)
  std::string sha1;         ///< hex digest of a regular file's content (describePath with withSha1 only)
  bool exists() const { return type != Type::Missing; }
};

/// The outcome of a command.
struct RunResult {
  int exitCode = -1; ///< -1 when it could not be started or was killed
  std::string out, err;
};

/// Options of the SSH transport that come from the server config rather than the URI.
struct SshSettings {
  std::string knownHostsFile; ///< "" = ssh's default (~/.ssh/known_hosts of the executor's user)
  std::string identityFile;   ///< "" = ssh's defaults
  int connectTimeoutSeconds = 10;
  /// At most this many sessions per agent run operations at once (URI option `sessions=N` overrides).
  int maxSessions = 4;
};

class HostIo {
 public:
  virtual ~HostIo() = default;
  /// "this host" or "ssh://user@host:port" (for messages).
  virtual std::string describe() const = 0;
  virtual bool remote() const = 0;
  /// The agent URI in canonical form, options included ("local:" for this host).
  virtual std::string uri() const { return "local:"; }
  /// The user the operations act as when it is not the login user (URI option `run_as`: through `sudo -n`);
  /// "" = the login user.
  virtual std::string runAs() const { return ""; }

  /// lstat (a final symlink is not followed); Missing when the path does not exist.
  virtual PathInfo lstat(const std::string& path) = 0;
  virtual std::string readFile(const std::string& path) = 0;
  /// lstat plus size and, for a regular file with `withSha1`, the sha1 of its content: what the File
  /// handler's read phase needs, in one round trip on a remote host (default: lstat + readFile).
  virtual PathInfo describePath(const std::string& path, bool withSha1);
  /// writeFile, but an error ("the path already exists") when `path` exists, even as a dangling symlink;
  /// one round trip on a remote host (default: lstat, then writeFile). Over ssh, small text content with a
  /// mode within rw-rw-rw- and no owner change is written in place (exclusive create, one write, no remote
  /// process): a reader may see the new file empty for that instant, never partly written.
  virtual void createFile(const std::string& path, const std::string& content, int permissions,
                          const std::string& owner, const std::string& group);
  /// mkdir with exactly `permissions`, then owner/group ("" = as created); a chown failure removes the new
  /// directory again. One round trip on a remote host (default: mkdir, then chown).
  virtual void makeDirectory(const std::string& path, int permissions, const std::string& owner,
                             const std::string& group);
  /// Replaces (or creates) `path` atomically (temp file in the same directory, then rename) with the mode
  /// and owner/group ("" = as created) already applied.
  virtual void writeFile(const std::string& path, const std::string& content, int permissions,
                         const std::string& owner, const std::string& group) = 0;
  /// mkdir with exactly `permissions` (the umask does not apply).
  virtual void mkdir(const std::string& path, int permissions) = 0;
  /// rmdir; a missing directory is not an error.
  virtual void rmdir(const std::string& path) = 0;
  /// unlink; a missing path is not an error.
  virtual void unlink(const std::string& path) = 0;
  virtual void symlink(const std::string& source, const std::string& target) = 0;
  /// Points the symlink `target` at `source` atomically (a new link beside it, renamed over it).
  virtual void replaceSymlink(const std::string& source, const std::string& target) = 0;
  virtual std::string readlink(const std::string& path) = 0;
  virtual void chmod(const std::string& path, int permissions) = 0;
  /// owner/group "" = unchanged; a final symlink is not followed.
  virtual void chown(const std::string& path, const std::string& owner, const std::string& group) = 0;
  /// Runs argv (PATH lookup on that host), stdin from `input`.
  virtual RunResult run(const std::vector<std::string>& argv, const std::string& input = "") = 0;
  /// Whether `name` is an executable on that host's PATH.
  virtual bool hasCommand(const std::string& name) = 0;
  /// The argv prefix that runs one command string on this host over the agent's connection (ssh over the
  /// running master, which is started here); empty for the local host. For Python handlers' remote IO.
  virtual std::vector<std::string> commandPrefix() { return {}; }
};

/// The executor's own host.
std::unique_ptr<HostIo> makeLocalIo();
/// The host of an ssh:// URI; nothing connects until the first operation.
std::unique_ptr<HostIo> makeSshIo(const model::AgentUri& uri, const SshSettings& settings);
/// The process-wide LocalIo (handlers run without services in unit tests).
HostIo& localIo();

/// Quotes `s` for a POSIX shell ('…' with ' as '\'').
std::string shellQuote(const std::string& s);

} // namespace inm::executor

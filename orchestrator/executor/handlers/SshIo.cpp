// SshIo (executor/HostIo.h): a host reached over SSH. One OpenSSH master per SshIo (= per agent) is started
// on first use (`ssh -M -S <socket> -f -N` with ControlPersist, BatchMode, StrictHostKeyChecking=yes) and
// over it a small pool of long-lived sessions `ssh -S <socket> … sh -c '<driver>'` (at most
// SshSettings::maxSessions, URI option `sessions=N`, started lazily, the most recently used first) runs the
// agent's operations, one request at a time per session. The driver (kDriver) is a POSIX-shell loop: it reads
// a header line `<marker> <lines> <inputlen> <kind>` and that many script lines with the `read` builtin, then
// either evaluates the script in the driver and answers its text output (`b`: every operation but run and
// read, shell functions doing one round trip with as few processes as POSIX sh allows, no fork) or stores
// the input with `head -c N` and runs the script with output in files (`f`: run and readFile, binary-safe).
// The answer is `<marker> <rc> <outlen> <errlen>\n` and exactly those bytes; the reader trusts lengths,
// never scans the payload, so binary content and look-alike marker text pass through. The marker is random
// per session and the driver exits on a header without it, so a desynchronised stream never runs content as
// a script. Nothing but a POSIX shell and coreutils (head -c, stat, sha1sum, mktemp, mv -T, wc) is needed
// on the remote side, and sudo for URI option `run_as=USER`: then each session's driver runs under `sudo -n
// -u USER` (one sudo per session, not per operation), and a missing sudo or one that wants a password is a
// plain failure (`failed`) naming the host. Invariants: a session runs one request at a time; a session that
// cannot be started or dies three times in an operation is a HostUnavailable naming host, port and ssh's
// message; a remote command's own exit status passes through; sessions and the master are ended and the
// socket directory removed when the SshIo is destroyed (ControlPersist bounds the master's life if the
// executor is killed).
#include "Posix.h"
#include "executor/HostIo.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <random>
#include <spawn.h>
#include <sstream>
#include <unistd.h>

extern char** environ;

namespace inm::executor {

namespace {

/// ssh's stderr without the warning banner lines and blank lines, on one line.
std::string sshReason(const std::string& err) {
  std::istringstream in(err);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '@') continue;
    if (!out.empty()) out += " ";
    out += line;
  }
  return out.empty() ? "ssh exited with status 255 and no message" : out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

/// The remote driver (see the file comment): `$1` is the session's marker. Each request is
/// `<marker> <lines> <inputlen> <kind>\n`, then <lines> lines of script (builtins only read them), then the
/// input; kind `b` evaluates the script in the driver itself (no fork) with the input left on the session's
/// stdin for the script to consume (only _w does, always exactly <inputlen> bytes) and answers its text
/// output: scripts of this kind are calls of shell functions that never exit, whose umask/noclobber the
/// driver resets and whose variables are not the driver's; kind `f` stores the input in a file and runs the
/// script in a subshell with output in files (binary-safe, more processes). Functions: _d describes a path
/// ("missing" or "<type> <perms> <owner> <group> <size>", then the sha1 when asked), _w writes a file (temp
/// file created by the shell with the umask giving the mode, the content from `head -c` or, when small and
/// free of NUL bytes, from an argument with the printf builtin, then chmod/chown only when asked, `mv -T`;
/// a new file, `$5` set, with inline content, no chmod and no chown is instead created in place under
/// noclobber (O_EXCL) and filled by one printf: no process at all), _m makes a directory (chown failure
/// removes it again).
constexpr const char* kDriver = R"SH(export LC_ALL=C; M=$1; c=0; U=$(umask)
T=$(mktemp -d) || exit 1
trap 'rm -rf -- "$T"' EXIT; trap 'exit 1' HUP INT TERM PIPE
_d() {
  if [ -L "$1" ]; then t=l; elif [ -d "$1" ]; then t=d; elif [ -f "$1" ]; then t=f
  elif [ -e "$1" ]; then t=o; else echo missing; return 0; fi
  stat -c "$t %a %U %G %s" -- "$1" || return
  if [ "$t" = f ] && [ -n "$2" ]; then sha1sum < "$1"; fi
}
_w() {
  if [ -n "$5" ] && [ "$6" = i ] && [ -z "$3$4" ]; then
    if [ -e "$1" ] || [ -L "$1" ]; then echo "the path already exists" >&2; return 1; fi
    umask "$2"; set -C
    { printf %s "$7" >&3 || { rm -f -- "$1"; return 1; }; } 3> "$1"
    return
  fi
  case $1 in */*) d=${1%/*};; *) d=.;; esac
  t="$d/.${1##*/}.inmanta-$$-$c"; o=/dev/null; e=
  if [ -n "$5" ] && { [ -e "$1" ] || [ -L "$1" ]; }; then e="the path already exists"
  else umask "$2"; set -C; if true > "$t"; then o=$t; else e="cannot create a temporary file in $d"; fi; fi
  if [ "$6" = i ]; then [ "$o" = /dev/null ] || printf %s "$7" >| "$o" || { rm -f -- "$o"; return 1; }
  elif [ "$6" -gt 0 ]; then head -c "$6" >| "$o" || { [ "$o" = /dev/null ] || rm -f -- "$o"; return 1; }; fi
  if [ -n "$e" ]; then echo "$e" >&2; return 1; fi
  { [ -z "$3" ] || chmod -- "$3" "$t"; } && { [ -z "$4" ] || chown -- "$4" "$t"; } && mv -fT -- "$t" "$1" ||
    { rm -f -- "$t"; return 1; }
}
_m() { mkdir -m "$2" -- "$1" || return; [ -z "$3" ] || chown -h -- "$3" "$1" || { rmdir -- "$1"; return 1; }; }
while IFS=' ' read -r m n il k; do
  [ "$m" = "$M" ] || exit 1
  s=; i=0
  while [ "$i" -lt "$n" ]; do IFS= read -r l || exit 1; s="$s$l
"; i=$((i+1)); done
  c=$((c+1))
  if [ "$k" = b ]; then
    { eval "$s"; } > "$T/o" 2> "$T/e"; rc=$?; set +C; umask "$U"; o=; e=
    if [ -s "$T/o" ]; then l=; while IFS= read -r l; do o="$o$l
"; l=; done < "$T/o"; o="$o$l"; fi
    if [ -s "$T/e" ]; then l=; while IFS= read -r l; do e="$e$l
"; l=; done < "$T/e"; e="$e$l"; fi
    printf '%s %s %s %s\n%s%s' "$M" "$rc" "${#o}" "${#e}" "$o" "$e"
  else
    if [ "$il" -gt 0 ]; then head -c "$il" > "$T/i" || exit 1; else true > "$T/i"; fi
    (eval "$s") < "$T/i" > "$T/o" 2> "$T/e"; rc=$?
    printf '%s %s %s %s\n' "$M" "$rc" $(wc -c < "$T/o") $(wc -c < "$T/e")
    cat -- "$T/o" "$T/e"
  fi
done)SH";

/// What the sudo wrapper writes when the host has no sudo.
constexpr const char* kNoSudo = "inmanta-io: sudo is not installed";

/// run_as: `$1` the user, then the command's argv; the sudo check costs nothing but the `command` builtin.
constexpr const char* kSudoWrapper =
    "command -v sudo >/dev/null 2>&1 || { echo 'inmanta-io: sudo is not installed' >&2; exit 97; }\n"
    "u=$1; shift; exec sudo -n -u \"$u\" -- \"$@\"";

/// File content up to this size without NUL bytes is sent inside the request's script.
constexpr size_t kInlineContentBytes = 4096;

/// The permissions integer (644) as a mode.
unsigned modeOf(int permissions) { return static_cast<unsigned>(posix::permissionsToMode(permissions)); }

std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%03o", mode);
  return buf;
}

/// One `ssh … sh -c '<driver>'` process and its pipes.
struct Session {
  pid_t pid = -1; ///< the session's ssh, -1 when not running
  int toFd = -1, fromFd = -1;
  std::string marker, errFile;
  uint64_t masterGeneration = 0; ///< of the master it was started over
};

class SshIo : public HostIo {
 public:
  SshIo(model::AgentUri uri, SshSettings settings) : uri_(std::move(uri)), settings_(std::move(settings)) {
    if (auto it = uri_.options.find("known_hosts"); it != uri_.options.end())
      settings_.knownHostsFile = it->second;
    if (auto it = uri_.options.find("identity_file"); it != uri_.options.end())
      settings_.identityFile = it->second;
    if (auto it = uri_.options.find("sessions"); it != uri_.options.end()) {
      const std::string& v = it->second;
      bool digits = !v.empty() && v.size() <= 2 && v.find_first_not_of("0123456789") == std::string::npos;
      int n = digits ? std::stoi(v) : 0;
      if (n < 1 || n > 16)
        configError_ = "option sessions=" + v + " of " + describe() + " is not a number between 1 and 16";
      else
        settings_.maxSessions = n;
    }
    settings_.maxSessions = std::max(1, settings_.maxSessions);
    // run_as (the reference's option): act as that user through `sudo -n`; as the login user itself, no sudo.
    if (auto it = uri_.options.find("run_as"); it != uri_.options.end() && it->second != uri_.user)
      runAs_ = it->second;
  }
  ~SshIo() override {
    {
      std::lock_guard<std::mutex> lock(poolMutex_);
      assert(open_ == idle_.size() && "an SshIo destroyed while an operation runs");
      for (auto& s : idle_) stopSession(*s);
      idle_.clear();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stopMaster(masterGeneration_);
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }

  std::string describe() const override { return "ssh://" + uri_.target(); }
  std::string uri() const override { return uri_.str(); }
  std::string runAs() const override { return runAs_; }
  bool remote() const override { return true; }

  PathInfo lstat(const std::string& path) override { return describePath(path, false); }

  PathInfo describePath(const std::string& path, bool withSha1) override {
    RunResult r = remote('b', withArgs("_d \"$@\"", {path, withSha1 ? "1" : ""}), "");
    check(r, "cannot stat", path);
    PathInfo info;
    std::istringstream in(r.out);
    std::string type;
    in >> type;
    if (type == "missing") return info;
    info.type = type == "f"   ? PathInfo::Type::File
                : type == "d" ? PathInfo::Type::Directory
                : type == "l" ? PathInfo::Type::Symlink
                              : PathInfo::Type::Other;
    in >> info.permissions >> info.owner >> info.group >> info.size;
    if (withSha1 && info.type == PathInfo::Type::File) in >> info.sha1;
    if (!in || (withSha1 && info.type == PathInfo::Type::File && info.sha1.size() != 40))
      throw std::runtime_error("cannot stat " + path + " on " + describe() + ": unexpected answer '" +
                               trimmed(r.out) + "'");
    return info;
  }

  std::string readFile(const std::string& path) override {
    RunResult r = remote('f', withArgs("exec cat -- \"$1\"", {path}), "");
    check(r, "cannot read", path);
    return r.out;
  }

  void writeFile(const std::string& path, const std::string& content, int permissions,
                 const std::string& owner, const std::string& group) override {
    write(path, content, permissions, owner, group, false);
  }
  void createFile(const std::string& path, const std::string& content, int permissions,
                  const std::string& owner, const std::string& group) override {
    write(path, content, permissions, owner, group, true);
  }

  void mkdir(const std::string& path, int permissions) override { makeDirectory(path, permissions, "", ""); }
  void makeDirectory(const std::string& path, int permissions, const std::string& owner,
                     const std::string& group) override {
    check(
        remote('b', withArgs("_m \"$@\"", {path, std::to_string(permissions), ownerSpec(owner, group)}), ""),
        "cannot create directory", path);
  }
  void rmdir(const std::string& path) override {
    check(fast("[ ! -e \"$1\" ] || rmdir -- \"$1\"", {path}), "cannot remove directory", path);
  }
  void unlink(const std::string& path) override {
    check(fast("[ ! -e \"$1\" ] && [ ! -L \"$1\" ] || rm -f -- \"$1\"", {path}), "cannot remove", path);
  }
  void symlink(const std::string& source, const std::string& target) override {
    check(fast("ln -s -- \"$1\" \"$2\"", {source, target}), "cannot create symlink", target);
  }
  void replaceSymlink(const std::string& source, const std::string& target) override {
    check(
        fast("t=\"$2.inmanta-new\"; rm -f -- \"$t\" && ln -s -- \"$1\" \"$t\" && mv -fT -- \"$t\" \"$2\" || "
             "{ rm -f -- \"$t\"; return 1; }",
             {source, target}),
        "cannot replace symlink", target);
  }
  std::string readlink(const std::string& path) override {
    // "/" after the target keeps a trailing newline of the target from being stripped.
    RunResult r = fast("readlink -- \"$1\" && printf /", {path});
    check(r, "cannot read link", path);
    if (!r.out.empty() && r.out.back() == '/') r.out.pop_back();
    if (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }
  void chmod(const std::string& path, int permissions) override {
    check(fast("chmod -- \"$2\" \"$1\"", {path, std::to_string(permissions)}), "cannot chmod", path);
  }
  void chown(const std::string& path, const std::string& owner, const std::string& group) override {
    if (owner.empty() && group.empty()) return;
    check(fast("chown -h -- \"$2\" \"$1\"", {path, ownerSpec(owner, group)}), "cannot change owner/group of",
          path);
  }

  RunResult run(const std::vector<std::string>& argv, const std::string& input) override {
    std::string command;
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + shellQuote(a);
    RunResult r = remote('f', command + "\n", input);
    if (r.exitCode == 127 && r.err.find("not found") != std::string::npos)
      r.err = argv.empty() ? r.err : argv[0] + ": command not found on " + describe();
    return r;
  }

  std::vector<std::string> commandPrefix() override {
    std::vector<std::string> argv = {"ssh", "-S",           ensureMaster().first, "-o", "ControlMaster=no",
                                     "-o",  "BatchMode=yes"};
    addTarget(argv);
    argv.push_back("--");
    return argv;
  }

  bool hasCommand(const std::string& name) override {
    return fast("command -v -- \"$1\" >/dev/null 2>&1", {name}).exitCode == 0;
  }

 private:
  static std::string ownerSpec(const std::string& owner, const std::string& group) {
    return owner + (group.empty() ? "" : ":" + group);
  }

  /// The command line the login shell runs for `argv`: argv itself, or with run_as, a POSIX-sh wrapper that
  /// says so when sudo is missing and otherwise execs `sudo -n -u USER -- argv…` (-n: never prompt; a needed
  /// password fails at once instead of hanging the session).
  std::string remoteCommand(const std::vector<std::string>& argv) const {
    std::string line;
    if (!runAs_.empty()) line = "sh -c " + shellQuote(kSudoWrapper) + " inmanta-sudo " + shellQuote(runAs_);
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + shellQuote(a);
    return line;
  }

  /// The failure message when a session under run_as ended because of sudo (its stderr `err`), else "".
  std::string sudoProblem(const std::string& err) const {
    if (err.find(kNoSudo) != std::string::npos) return "sudo is not installed on " + describe();
    std::string login = uri_.user.empty() ? "the login user" : uri_.user;
    if (err.find("password is required") != std::string::npos ||
        err.find("a terminal is required") != std::string::npos)
      return "sudo needs a password for " + login + " on " + describe() + " (configure NOPASSWD)";
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("sudo: ", 0) == 0 || line.find("is not allowed to execute") != std::string::npos ||
          line.find("is not in the sudoers file") != std::string::npos)
        return "sudo refused to run the operations of " + describe() + " as " + runAs_ + ": " + trimmed(line);
    return "";
  }

  /// `set -- 'arg'…` then the body: a script of whole lines for the driver.
  static std::string withArgs(const std::string& body, const std::vector<std::string>& args) {
    std::string script = "set --";
    for (const auto& a : args) script += " " + shellQuote(a);
    return script + "\n" + body + "\n";
  }

  /// A `b` request running `body` as a function in the driver (text answer, no fork, `return` not `exit`).
  RunResult fast(const std::string& body, const std::vector<std::string>& args) {
    return remote('b', withArgs("_x() {\n" + body + "\n}; _x \"$@\"", args), "");
  }

  /// The atomic replace in one `b` request: the mode comes from the umask when it has no bits beyond
  /// rw-rw-rw- (no chmod process), chown runs only when the owner is not the login user or a group is set.
  void write(const std::string& path, const std::string& content, int permissions, const std::string& owner,
             const std::string& group, bool exclusive) {
    unsigned mode = modeOf(permissions);
    std::string chmodArg = (mode & ~0666u) ? std::to_string(permissions) : "";
    const std::string& actingUser = runAs_.empty() ? uri_.user : runAs_;
    std::string spec = (owner == actingUser && group.empty()) ? "" : ownerSpec(owner, group);
    std::vector<std::string> args = {path, octal(~mode & 0777u), chmodArg, spec, exclusive ? "1" : ""};
    // Small text travels in the script (no `head` process); the driver's `read` takes it a byte at a time,
    // hence the bound.
    bool inlined = content.size() <= kInlineContentBytes && content.find('\0') == std::string::npos;
    args.push_back(inlined ? "i" : std::to_string(content.size()));
    if (inlined) args.push_back(content);
    check(remote('b', withArgs("_w \"$@\"", args), inlined ? "" : content),
          exclusive ? "cannot create" : "cannot write", path);
  }

  /// Hands out an idle session (the most recently used first) or a new slot while fewer than maxSessions
  /// are open; waits otherwise. Returned by ~Lease: to the idle list when running, else the slot is freed.
  class Lease {
   public:
    explicit Lease(SshIo& io) : io_(io) {
      std::unique_lock<std::mutex> lock(io_.poolMutex_);
      io_.poolCv_.wait(lock, [&] {
        return !io_.idle_.empty() || io_.open_ < static_cast<size_t>(io_.settings_.maxSessions);
      });
      if (!io_.idle_.empty()) {
        session_ = std::move(io_.idle_.back());
        io_.idle_.pop_back();
      } else {
        ++io_.open_;
        session_ = std::make_unique<Session>();
        session_->errFile = "session-" + std::to_string(io_.nextSession_++) + ".err";
      }
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(io_.poolMutex_);
      if (session_->pid > 0)
        io_.idle_.push_back(std::move(session_));
      else
        --io_.open_;
      io_.poolCv_.notify_one();
    }
    Session& operator*() { return *session_; }

   private:
    SshIo& io_;
    std::unique_ptr<Session> session_;
  };

  /// Runs one request on a session of the pool. A session that dies is replaced; the master is restarted with
  /// it only when `ssh -O check` finds it gone or a replacement died too (so one killed session does not end
  /// the others running over a healthy master); the third death in one operation is a HostUnavailable with
  /// ssh's message.
  RunResult remote(char kind, const std::string& script, const std::string& input) {
    if (!configError_.empty()) throw std::runtime_error(configError_);
    for (int attempt = 0;; ++attempt) {
      Lease lease(*this);
      Session& s = *lease;
      if (s.pid <= 0) startSession(s);
      RunResult r;
      if (exchange(s, kind, script, input, r)) return r;
      std::string why = stopSession(s);
      // sudo refusing is the same on every attempt and no fault of the connection: `failed`, at once.
      if (!runAs_.empty())
        if (std::string problem = sudoProblem(why); !problem.empty()) throw std::runtime_error(problem);
      if (attempt >= 2) throw HostUnavailable("cannot reach " + describe() + " over ssh: " + sshReason(why));
      // The master may have died (sshd restarted, network drop): restart it too, once per generation, so
      // sessions failing together do not stop the master another one just started.
      std::lock_guard<std::mutex> lock(mutex_);
      if (attempt > 0 || !masterAlive(s.masterGeneration)) stopMaster(s.masterGeneration);
    }
  }

  /// Whether the master of `generation` is still the current one and answers `ssh -O check` (caller holds
  /// mutex_).
  bool masterAlive(uint64_t generation) {
    if (!masterUp_ || generation != masterGeneration_) return false;
    std::vector<std::string> argv = {"ssh", "-S", socket_, "-O", "check"};
    addTarget(argv);
    posix::CommandResult r = posix::runCommand(argv, nullptr, dir_ + "/check.log");
    ::unlink((dir_ + "/check.log").c_str());
    return r.exitCode == 0;
  }

  /// Starts `ssh -S <socket> … sh -c '<driver>' inmanta-io <marker>` with stdin a socket (writes never raise
  /// SIGPIPE), stdout a pipe and stderr a file in the socket directory.
  void startSession(Session& s) {
    auto [socket, generation] = ensureMaster();
    std::vector<std::string> argv = {"ssh", "-S", socket, "-o", "ControlMaster=no", "-o", "BatchMode=yes"};
    addTarget(argv);
    argv.push_back("--");
    std::random_device rd;
    std::ostringstream m;
    m << "inm-end-" << std::hex << rd() << rd() << rd();
    s.marker = m.str();
    s.masterGeneration = generation;
    argv.push_back(remoteCommand({"sh", "-c", kDriver, "inmanta-io", s.marker}));
    int in[2], out[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
      posix::throwErrno("cannot create the ssh session's stdin for", describe());
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]);
      ::close(in[1]);
      posix::throwErrno("cannot create the ssh session's stdout for", describe());
    }
    std::string errFile = dir_ + "/" + s.errFile;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[1], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    // Only stdin/stdout/stderr: a descriptor the executor holds without close-on-exec (its protocol socket
    // among them) must not live on in a session that outlives it (runCommand does the same with close_range).
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[1]);
    ::close(out[1]);
    if (rc != 0) {
      ::close(in[0]);
      ::close(out[0]);
      errno = rc;
      posix::throwErrno("cannot start ssh for", describe());
    }
    s.pid = pid;
    s.toFd = in[0];
    s.fromFd = out[0];
  }

  /// Ends the session (EOF on its stdin, then SIGTERM) and returns what ssh wrote on stderr.
  std::string stopSession(Session& s) {
    if (s.pid <= 0) return "";
    ::close(s.toFd);
    ::close(s.fromFd);
    ::kill(s.pid, SIGTERM);
    int status = 0;
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
    s.pid = -1;
    std::string errFile = dir_ + "/" + s.errFile;
    std::ifstream in(errFile, std::ios::binary);
    std::ostringstream err;
    err << in.rdbuf();
    ::unlink(errFile.c_str());
    return err.str().empty() ? "the ssh session ended unexpectedly" : err.str();
  }

  static bool writeAll(int fd, const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  /// Reads exactly `n` bytes (false on EOF/error).
  static bool readExact(int fd, size_t n, std::string& into) {
    into.resize(n);
    size_t done = 0;
    while (done < n) {
      ssize_t got = ::read(fd, into.data() + done, n - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      done += static_cast<size_t>(got);
    }
    return true;
  }

  /// One request/answer; false when the session is gone (EOF, broken pipe or a malformed answer).
  bool exchange(Session& s, char kind, const std::string& script, const std::string& input, RunResult& r) {
    size_t lines = static_cast<size_t>(std::count(script.begin(), script.end(), '\n'));
    assert(!script.empty() && script.back() == '\n' && "a script is whole lines");
    std::string request = s.marker + " " + std::to_string(lines) + " " + std::to_string(input.size()) + " " +
                          kind + "\n" + script;
    if (!writeAll(s.toFd, request) || !writeAll(s.toFd, input)) return false;
    std::string line;
    for (char c;;) {
      ssize_t got = ::read(s.fromFd, &c, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      if (c == '\n') break;
      line += c;
      if (line.size() > 200) return false;
    }
    std::istringstream in(line);
    std::string m;
    size_t outLen = 0, errLen = 0;
    in >> m >> r.exitCode >> outLen >> errLen;
    if (!in || m != s.marker) return false;
    return readExact(s.fromFd, outLen, r.out) && readExact(s.fromFd, errLen, r.err);
  }

  void check(const RunResult& r, const std::string& what, const std::string& path) {
    if (r.exitCode == 0) return;
    std::string why = trimmed(r.err);
    if (why.empty()) why = "exit status " + std::to_string(r.exitCode);
    throw std::runtime_error(what + " " + path + " on " + describe() + ": " + why);
  }

  void addTarget(std::vector<std::string>& argv) const {
    argv.insert(argv.end(), {"-p", std::to_string(uri_.port)});
    if (!uri_.user.empty()) argv.insert(argv.end(), {"-l", uri_.user});
    argv.push_back(uri_.host);
  }

  /// The master's socket and generation, starting the master when it is not running. Throws
  /// HostUnavailable with ssh's reason.
  std::pair<std::string, uint64_t> ensureMaster() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (masterUp_) return {socket_, masterGeneration_};
    if (dir_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl =
          std::string(tmp && *tmp && std::string(tmp).size() < 60 ? tmp : "/tmp") + "/inm-ssh-XXXXXX";
      std::vector<char> name(tmpl.begin(), tmpl.end());
      name.push_back('\0');
      if (!mkdtemp(name.data()))
        posix::throwErrno("cannot create a directory for the ssh control socket in", tmpl);
      dir_ = name.data();
      socket_ = dir_ + "/master";
    }
    std::vector<std::string> argv = {
        "ssh", "-M",
        "-S",  socket_,
        "-f",  "-N",
        "-o",  "ControlPersist=60",
        "-o",  "BatchMode=yes",
        "-o",  "StrictHostKeyChecking=yes",
        "-o",  "ConnectTimeout=" + std::to_string(settings_.connectTimeoutSeconds),
        "-o",  "ServerAliveInterval=15",
        "-o",  "LogLevel=ERROR"};
    if (!settings_.knownHostsFile.empty())
      argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + settings_.knownHostsFile, "-o",
                               "GlobalKnownHostsFile=/dev/null"});
    if (!settings_.identityFile.empty())
      argv.insert(argv.end(), {"-i", settings_.identityFile, "-o", "IdentitiesOnly=yes"});
    addTarget(argv);
    std::string log = dir_ + "/start.log";
    posix::CommandResult r = posix::runCommand(argv, nullptr, log);
    ::unlink(log.c_str());
    if (r.exitCode != 0)
      throw HostUnavailable("cannot reach " + describe() + " over ssh: " + sshReason(r.err));
    masterUp_ = true;
    return {socket_, masterGeneration_};
  }

  /// Stops the master if it is still the one of `generation` (caller holds mutex_).
  void stopMaster(uint64_t generation) {
    if (!masterUp_ || generation != masterGeneration_) return;
    masterUp_ = false;
    ++masterGeneration_;
    std::vector<std::string> argv = {"ssh", "-S", socket_, "-O", "exit"};
    addTarget(argv);
    posix::runCommand(argv, nullptr, dir_ + "/stop.log");
    ::unlink((dir_ + "/stop.log").c_str());
    ::unlink(socket_.c_str());
  }

  model::AgentUri uri_;
  SshSettings settings_;
  std::string configError_; ///< a bad URI option: every operation fails with it
  std::string runAs_;       ///< the run_as user when it is not the login user: sessions run under sudo
  std::mutex mutex_;        ///< guards the master
  bool masterUp_ = false;
  uint64_t masterGeneration_ = 0; ///< counts master restarts
  std::string dir_, socket_;
  std::mutex poolMutex_; ///< guards idle_, open_, nextSession_
  std::condition_variable poolCv_;
  std::vector<std::unique_ptr<Session>> idle_; ///< running sessions no operation uses
  size_t open_ = 0;                            ///< sessions leased or idle
  uint64_t nextSession_ = 0;
};

} // namespace

std::unique_ptr<HostIo> makeSshIo(const model::AgentUri& uri, const SshSettings& settings) {
  return std::make_unique<SshIo>(uri, settings);
}

} // namespace inm::executor

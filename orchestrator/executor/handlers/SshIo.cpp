// SshIo (executor/HostIo.h): a host reached over SSH. One OpenSSH master per SshIo (= per agent) is started
// on first use (`ssh -M -S <socket> -f -N` with ControlPersist, BatchMode, StrictHostKeyChecking=yes) and
// over it ONE long-lived session `ssh -S <socket> … sh -c '<driver>'` runs every operation of the agent
// (started lazily, restarted once per operation if it died). The driver is a POSIX-shell loop: it reads a
// header line
// `<marker> <scriptlen> <inputlen>`, then exactly that many bytes of script and of stdin (`head -c N`, which
// never reads past N bytes with GNU coreutils or busybox), runs the script (`sh -c '<body>' inmanta-io
// 'arg'…`, arguments single-quoted) with output in mktemp files and answers `<marker> <rc> <outlen>
// <errlen>\n` followed by exactly those bytes; the reader trusts lengths, never scans the payload, so binary
// content and look-alike marker text pass through. The marker is random per session. Nothing but a POSIX
// shell and coreutils (head -c, mktemp, wc) is needed on the remote side. Invariants: operations on one SshIo
// are serialised (one session); a session that cannot be started or dies twice in an operation is a
// HostUnavailable naming host, port and ssh's message; a remote command's own exit status passes through;
// the session and the master are ended and the socket directory removed when the SshIo is destroyed
// (ControlPersist bounds the master's life if the executor is killed).
#include "Posix.h"
#include "executor/HostIo.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
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

class SshIo : public HostIo {
 public:
  SshIo(model::AgentUri uri, SshSettings settings) : uri_(std::move(uri)), settings_(std::move(settings)) {
    if (auto it = uri_.options.find("known_hosts"); it != uri_.options.end())
      settings_.knownHostsFile = it->second;
    if (auto it = uri_.options.find("identity_file"); it != uri_.options.end())
      settings_.identityFile = it->second;
  }
  ~SshIo() override {
    std::lock_guard<std::mutex> opLock(opMutex_);
    stopSession();
    std::lock_guard<std::mutex> lock(mutex_);
    stopMaster();
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }

  std::string describe() const override { return "ssh://" + uri_.target(); }
  bool remote() const override { return true; }

  PathInfo lstat(const std::string& path) override {
    RunResult r =
        script("if [ -L \"$1\" ]; then t=l; elif [ -d \"$1\" ]; then t=d; elif [ -f \"$1\" ]; then t=f; "
               "elif [ -e \"$1\" ]; then t=o; else echo missing; exit 0; fi; "
               "exec stat -c \"$t %a %U %G\" -- \"$1\"",
               {path});
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
    in >> info.permissions >> info.owner >> info.group;
    if (!in)
      throw std::runtime_error("cannot stat " + path + " on " + describe() + ": unexpected answer '" +
                               trimmed(r.out) + "'");
    return info;
  }

  std::string readFile(const std::string& path) override {
    RunResult r = script("exec cat -- \"$1\"", {path});
    check(r, "cannot read", path);
    return r.out;
  }

  void writeFile(const std::string& path, const std::string& content, int permissions,
                 const std::string& owner, const std::string& group) override {
    std::string spec = owner + (group.empty() ? "" : ":" + group);
    RunResult r =
        script("set -e; d=$(dirname -- \"$1\"); b=$(basename -- \"$1\"); "
               "t=$(mktemp \"$d/.$b.inmanta-XXXXXX\"); trap 'rm -f -- \"$t\"' EXIT; "
               "cat > \"$t\"; chmod -- \"$2\" \"$t\"; if [ -n \"$3\" ]; then chown -- \"$3\" \"$t\"; fi; "
               "mv -f -- \"$t\" \"$1\"; trap - EXIT",
               {path, std::to_string(permissions), spec}, content);
    check(r, "cannot write", path);
  }

  void mkdir(const std::string& path, int permissions) override {
    check(script("mkdir -m \"$2\" -- \"$1\"", {path, std::to_string(permissions)}), "cannot create directory",
          path);
  }
  void rmdir(const std::string& path) override {
    check(script("[ ! -e \"$1\" ] || rmdir -- \"$1\"", {path}), "cannot remove directory", path);
  }
  void unlink(const std::string& path) override {
    check(script("[ ! -e \"$1\" ] && [ ! -L \"$1\" ] || rm -f -- \"$1\"", {path}), "cannot remove", path);
  }
  void symlink(const std::string& source, const std::string& target) override {
    check(script("ln -s -- \"$1\" \"$2\"", {source, target}), "cannot create symlink", target);
  }
  void replaceSymlink(const std::string& source, const std::string& target) override {
    check(script(
              "t=\"$2.inmanta-new\"; rm -f -- \"$t\" && ln -s -- \"$1\" \"$t\" && mv -fT -- \"$t\" \"$2\" || "
              "{ rm -f -- \"$t\"; exit 1; }",
              {source, target}),
          "cannot replace symlink", target);
  }
  std::string readlink(const std::string& path) override {
    RunResult r = script("exec readlink -- \"$1\"", {path});
    check(r, "cannot read link", path);
    if (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }
  void chmod(const std::string& path, int permissions) override {
    check(script("chmod -- \"$2\" \"$1\"", {path, std::to_string(permissions)}), "cannot chmod", path);
  }
  void chown(const std::string& path, const std::string& owner, const std::string& group) override {
    if (owner.empty() && group.empty()) return;
    check(script("chown -h -- \"$2\" \"$1\"", {path, owner + (group.empty() ? "" : ":" + group)}),
          "cannot change owner/group of", path);
  }

  RunResult run(const std::vector<std::string>& argv, const std::string& input) override {
    std::string command;
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + shellQuote(a);
    RunResult r = remote(command, input);
    if (r.exitCode == 127 && r.err.find("not found") != std::string::npos)
      r.err = argv.empty() ? r.err : argv[0] + ": command not found on " + describe();
    return r;
  }

  std::vector<std::string> commandPrefix() override {
    std::vector<std::string> argv = {"ssh", "-S",           ensureMaster(), "-o", "ControlMaster=no",
                                     "-o",  "BatchMode=yes"};
    addTarget(argv);
    argv.push_back("--");
    return argv;
  }

  bool hasCommand(const std::string& name) override {
    RunResult r = script("command -v -- \"$1\" >/dev/null 2>&1", {name});
    return r.exitCode == 0;
  }

 private:
  /// `sh -c '<body>' inmanta-io 'arg'…` over the master.
  RunResult script(const std::string& body, const std::vector<std::string>& args,
                   const std::string& input = "") {
    std::string command = "sh -c " + shellQuote(body) + " inmanta-io";
    for (const auto& a : args) command += " " + shellQuote(a);
    return remote(command, input);
  }

  /// Runs one command string in the session; a session that dies is restarted once (with the master), a
  /// second death is a HostUnavailable with ssh's message.
  RunResult remote(const std::string& command, const std::string& input) {
    std::lock_guard<std::mutex> opLock(opMutex_);
    for (int attempt = 0;; ++attempt) {
      if (pid_ <= 0) startSession();
      RunResult r;
      if (exchange(command, input, r)) return r;
      std::string why = stopSession();
      if (attempt > 0) throw HostUnavailable("cannot reach " + describe() + " over ssh: " + sshReason(why));
      // The master may have died (sshd restarted, network drop): restart it too, once.
      std::lock_guard<std::mutex> lock(mutex_);
      stopMaster();
    }
  }

  /// Starts `ssh -S <socket> … sh -c '<driver>'` with stdin a socket (writes never raise SIGPIPE), stdout a
  /// pipe and stderr a file in the socket directory.
  void startSession() {
    std::vector<std::string> argv = commandPrefix();
    static const char* driver =
        "while IFS=' ' read -r m sl il; do "
        "t=$(mktemp -d) || exit 1; "
        "head -c \"$sl\" > \"$t/s\"; head -c \"$il\" > \"$t/i\"; "
        "sh \"$t/s\" < \"$t/i\" > \"$t/o\" 2> \"$t/e\"; rc=$?; "
        "printf '%s %s %s %s\\n' \"$m\" \"$rc\" $(wc -c < \"$t/o\") $(wc -c < \"$t/e\"); "
        "cat \"$t/o\" \"$t/e\"; rm -rf -- \"$t\"; done";
    argv.push_back(std::string("sh -c ") + shellQuote(driver));
    std::random_device rd;
    std::ostringstream m;
    m << "inm-end-" << std::hex << rd() << rd() << rd();
    marker_ = m.str();
    int in[2], out[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
      posix::throwErrno("cannot create the ssh session's stdin for", describe());
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]);
      ::close(in[1]);
      posix::throwErrno("cannot create the ssh session's stdout for", describe());
    }
    std::string errFile = dir_ + "/session.err";
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
    pid_ = pid;
    toFd_ = in[0];
    fromFd_ = out[0];
  }

  /// Ends the session (EOF on its stdin, then SIGTERM) and returns what ssh wrote on stderr.
  std::string stopSession() {
    if (pid_ <= 0) return "";
    ::close(toFd_);
    ::close(fromFd_);
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    std::string errFile = dir_ + "/session.err";
    posix::CommandResult r = posix::runCommand({"cat", "--", errFile});
    ::unlink(errFile.c_str());
    std::string err = r.out;
    if (err.empty()) err = "the ssh session ended unexpectedly";
    return err;
  }

  bool writeAll(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::send(toFd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  /// Reads exactly `n` bytes (false on EOF/error).
  bool readExact(size_t n, std::string& into) {
    into.resize(n);
    size_t done = 0;
    while (done < n) {
      ssize_t got = ::read(fromFd_, into.data() + done, n - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      done += static_cast<size_t>(got);
    }
    return true;
  }

  /// One request/answer; false when the session is gone (EOF, broken pipe or a malformed answer).
  bool exchange(const std::string& command, const std::string& input, RunResult& r) {
    std::string request = marker_ + " " + std::to_string(command.size()) + " " +
                          std::to_string(input.size()) + "\n" + command + input;
    if (!writeAll(request)) return false;
    std::string line;
    for (char c;;) {
      ssize_t got = ::read(fromFd_, &c, 1);
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
    if (!in || m != marker_) return false;
    return readExact(outLen, r.out) && readExact(errLen, r.err);
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

  /// The master's socket, starting the master when it is not running. Throws HostUnavailable with ssh's
  /// reason.
  std::string ensureMaster() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (masterUp_) return socket_;
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
    return socket_;
  }

  void stopMaster() {
    if (!masterUp_) return;
    masterUp_ = false;
    std::vector<std::string> argv = {"ssh", "-S", socket_, "-O", "exit"};
    addTarget(argv);
    posix::runCommand(argv, nullptr, dir_ + "/stop.log");
    ::unlink((dir_ + "/stop.log").c_str());
    ::unlink(socket_.c_str());
  }

  model::AgentUri uri_;
  SshSettings settings_;
  std::mutex mutex_;   ///< guards the master
  std::mutex opMutex_; ///< serialises operations: one session, one request at a time
  pid_t pid_ = -1;     ///< the session's ssh, -1 when none
  int toFd_ = -1, fromFd_ = -1;
  std::string marker_;
  bool masterUp_ = false;
  std::string dir_, socket_;
};

} // namespace

std::unique_ptr<HostIo> makeSshIo(const model::AgentUri& uri, const SshSettings& settings) {
  return std::make_unique<SshIo>(uri, settings);
}

} // namespace inm::executor

// SshIo (executor/HostIo.h): a host reached over SSH. One OpenSSH master per SshIo (= per agent) is started
// on first use (`ssh -M -S <socket> -f -N` with ControlPersist, BatchMode, StrictHostKeyChecking=yes) and
// every operation is one `ssh -S <socket>` client over it running a small POSIX-shell script with its
// arguments single-quoted (`sh -c '<script>' inmanta-io 'arg'…`); file content travels on stdin. Nothing but
// a POSIX shell and coreutils is needed on the remote side. Invariants: ssh's exit status 255 (it could not
// connect, authenticate or verify the host key) is a HostUnavailable naming host, port and ssh's message
// (unless `-O check` finds the master alive: then 255 was the remote command's own status); a dead master is
// restarted once per operation; the master is asked to exit and its socket directory removed
// when the SshIo is destroyed (ControlPersist bounds its life if the executor is killed).
#include "Posix.h"
#include "executor/HostIo.h"

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <unistd.h>

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

  /// Runs one command string over the master; 255 = ssh failed (HostUnavailable after one master restart).
  RunResult remote(const std::string& command, const std::string& input) {
    for (int attempt = 0;; ++attempt) {
      std::vector<std::string> argv = commandPrefix();
      argv.push_back(command);
      posix::CommandResult r = posix::runCommand(argv, &input);
      // 255 is also a status a remote command may exit with: a live master means it was the command's own.
      if (r.exitCode == 255 && masterAlive()) return {r.exitCode, std::move(r.out), std::move(r.err)};
      if (r.exitCode == 255 && attempt == 0) {
        // The master may have died (sshd restarted, network drop): restart it once and retry.
        std::lock_guard<std::mutex> lock(mutex_);
        stopMaster();
        continue;
      }
      if (r.exitCode == 255)
        throw HostUnavailable("cannot reach " + describe() + " over ssh: " + sshReason(r.err));
      return {r.exitCode, std::move(r.out), std::move(r.err)};
    }
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

  bool masterAlive() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!masterUp_) return false;
    std::vector<std::string> argv = {"ssh", "-S", socket_, "-O", "check"};
    addTarget(argv);
    return posix::runCommand(argv).exitCode == 0;
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
  std::mutex mutex_;
  bool masterUp_ = false;
  std::string dir_, socket_;
};

} // namespace

std::unique_ptr<HostIo> makeSshIo(const model::AgentUri& uri, const SshSettings& settings) {
  return std::make_unique<SshIo>(uri, settings);
}

} // namespace inm::executor

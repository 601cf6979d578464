// LocalIo (executor/HostIo.h): the executor's own host through POSIX calls. writeFile is the atomic replace
// the File handler always had: temp file in the same directory, mode and owner applied to it, fsync, rename,
// fsync of the directory, so a reader sees the old file or the new one, never a half-written one.
#include "Posix.h"
#include "executor/Handler.h"
#include "executor/HostIo.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace inm::executor {

namespace {

std::string dirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void writeAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      posix::throwErrno("cannot write", path);
    }
    done += static_cast<size_t>(n);
  }
}

class LocalIo : public HostIo {
 public:
  std::string describe() const override { return "this host"; }
  bool remote() const override { return false; }

  PathInfo lstat(const std::string& path) override {
    PathInfo info;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return info;
      posix::throwErrno("cannot stat", path);
    }
    info.type = S_ISREG(st.st_mode)   ? PathInfo::Type::File
                : S_ISDIR(st.st_mode) ? PathInfo::Type::Directory
                : S_ISLNK(st.st_mode) ? PathInfo::Type::Symlink
                                      : PathInfo::Type::Other;
    info.permissions = posix::modeToPermissions(st.st_mode);
    info.owner = posix::userName(st.st_uid);
    info.group = posix::groupName(st.st_gid);
    info.size = static_cast<long long>(st.st_size);
    return info;
  }

  std::string readFile(const std::string& path) override {
    std::ifstream in(path, std::ios::binary);
    if (!in) posix::throwErrno("cannot read", path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  void writeFile(const std::string& path, const std::string& content, int permissions,
                 const std::string& owner, const std::string& group) override {
    mode_t mode = posix::permissionsToMode(permissions);
    uid_t uid = owner.empty() ? static_cast<uid_t>(-1) : posix::lookupUser(owner);
    gid_t gid = group.empty() ? static_cast<gid_t>(-1) : posix::lookupGroup(group);
    if (uid == geteuid()) uid = static_cast<uid_t>(-1);
    if (gid == getegid()) gid = static_cast<gid_t>(-1);
    std::string dir = dirName(path);
    std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    std::string tmpl = dir + "/." + base + ".inmanta-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    int fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) posix::throwErrno("cannot create a temporary file in", dir);
    std::string tmp(name.data());
    try {
      writeAll(fd, content, tmp);
      if (fchmod(fd, mode) != 0) posix::throwErrno("cannot chmod", tmp);
      if ((uid != static_cast<uid_t>(-1) || gid != static_cast<gid_t>(-1)) && fchown(fd, uid, gid) != 0)
        posix::throwErrno("cannot change owner/group of", path);
      if (fsync(fd) != 0) posix::throwErrno("cannot fsync", tmp);
      if (close(fd) != 0) {
        fd = -1;
        posix::throwErrno("cannot close", tmp);
      }
      fd = -1;
      if (rename(tmp.c_str(), path.c_str()) != 0)
        posix::throwErrno("cannot rename the new content onto", path);
    } catch (...) {
      if (fd >= 0) close(fd);
      ::unlink(tmp.c_str());
      throw;
    }
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  }

  void mkdir(const std::string& path, int permissions) override {
    mode_t mode = posix::permissionsToMode(permissions);
    if (::mkdir(path.c_str(), mode) != 0) posix::throwErrno("cannot create directory", path);
    if (::chmod(path.c_str(), mode) != 0) posix::throwErrno("cannot chmod", path); // the umask must not win
  }

  void rmdir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) posix::throwErrno("cannot remove directory", path);
  }

  void unlink(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) posix::throwErrno("cannot remove", path);
  }

  void symlink(const std::string& source, const std::string& target) override {
    if (::symlink(source.c_str(), target.c_str()) != 0) posix::throwErrno("cannot create symlink", target);
  }

  void replaceSymlink(const std::string& source, const std::string& target) override {
    std::string tmp = target + ".inmanta-new";
    ::unlink(tmp.c_str());
    if (::symlink(source.c_str(), tmp.c_str()) != 0) posix::throwErrno("cannot create symlink", tmp);
    if (rename(tmp.c_str(), target.c_str()) != 0) {
      ::unlink(tmp.c_str());
      posix::throwErrno("cannot replace symlink", target);
    }
  }

  std::string readlink(const std::string& path) override {
    std::vector<char> buf(4096);
    ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) posix::throwErrno("cannot read link", path);
    return std::string(buf.data(), static_cast<size_t>(n));
  }

  void chmod(const std::string& path, int permissions) override {
    if (::chmod(path.c_str(), posix::permissionsToMode(permissions)) != 0)
      posix::throwErrno("cannot chmod", path);
  }

  void chown(const std::string& path, const std::string& owner, const std::string& group) override {
    posix::chownNames(path, owner, group);
  }

  RunResult run(const std::vector<std::string>& argv, const std::string& input) override {
    posix::CommandResult r = posix::runCommand(argv, input.empty() ? nullptr : &input);
    return {r.exitCode, std::move(r.out), std::move(r.err)};
  }

  bool hasCommand(const std::string& name) override { return posix::onPath(name); }
};

} // namespace

// The HostIo defaults: the operations composed from the primitives (LocalIo keeps them; SshIo does each in
// one remote round trip).
PathInfo HostIo::describePath(const std::string& path, bool withSha1) {
  PathInfo info = lstat(path);
  if (withSha1 && info.type == PathInfo::Type::File) {
    std::string content = readFile(path);
    info.size = static_cast<long long>(content.size());
    info.sha1 = sha1Hex(content);
  }
  return info;
}

void HostIo::createFile(const std::string& path, const std::string& content, int permissions,
                        const std::string& owner, const std::string& group) {
  if (lstat(path).exists()) throw std::runtime_error("cannot create " + path + ": the path already exists");
  writeFile(path, content, permissions, owner, group);
}

void HostIo::makeDirectory(const std::string& path, int permissions, const std::string& owner,
                           const std::string& group) {
  mkdir(path, permissions);
  if (owner.empty() && group.empty()) return;
  try {
    chown(path, owner, group);
  } catch (...) {
    try {
      rmdir(path); // best effort: no half-configured directory left behind
    } catch (const std::exception&) {
    }
    throw;
  }
}

std::unique_ptr<HostIo> makeLocalIo() { return std::make_unique<LocalIo>(); }

HostIo& localIo() {
  static LocalIo io;
  return io;
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

} // namespace inm::executor

// std::File (std.md §4): a regular file with content addressed by sha1, permissions, owner and group. Content
// is fetched through the host's FileSource, verified, written to a temporary file in the same directory,
// fsynced and renamed over the path, so a reader sees the old file or the new one, never a half-written one.
// Attributes that are null in the desired state (owner, group, permissions) are not managed.
#include "Posix.h"
#include "StdHandlers.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace inm::executor::handlers {

namespace {

/// Current contents larger than this are not uploaded for diffs.
constexpr size_t kMaxUploadBytes = 1u << 20;

std::string dirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) posix::throwErrno("cannot read", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

/// Replaces (or creates) `path` with `content` atomically: temp file in the same directory, mode and owner
/// applied to it, fsync, rename, fsync of the directory. uid/gid -1 = leave as created.
void writeAtomically(const std::string& path, const std::string& content, mode_t mode, uid_t uid, gid_t gid) {
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
    if (rename(tmp.c_str(), path.c_str()) != 0) posix::throwErrno("cannot rename the new content onto", path);
  } catch (...) {
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    throw;
  }
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

class FileHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string path = optString(current, "path");
    if (path.empty() || path[0] != '/')
      throw std::runtime_error("path '" + path + "' is not an absolute path");
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) throw ResourcePurged();
      posix::throwErrno("cannot stat", path);
    }
    if (!S_ISREG(st.st_mode)) throw std::runtime_error("path " + path + " exists but is not a regular file");
    if (!current.get("hash").is_null()) {
      std::string content = readAll(path);
      std::string hash = sha1Hex(content);
      // The server has the desired content; offer the current one too so diffs can show both.
      if (hash != current.get("hash") && content.size() <= kMaxUploadBytes && services().files)
        services().files->putFile(hash, content);
      current.attributes["hash"] = hash;
    }
    if (!current.get("permissions").is_null())
      current.attributes["permissions"] = posix::modeToPermissions(st.st_mode);
    if (!current.get("owner").is_null()) current.attributes["owner"] = posix::userName(st.st_uid);
    if (!current.get("group").is_null()) current.attributes["group"] = posix::groupName(st.st_gid);
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    std::string path = optString(desired, "path");
    struct stat st;
    if (lstat(path.c_str(), &st) == 0)
      throw std::runtime_error("cannot create " + path + ": the path already exists");
    std::string owner = optString(desired, "owner"), group = optString(desired, "group");
    uid_t uid = owner.empty() ? static_cast<uid_t>(-1) : posix::lookupUser(owner);
    gid_t gid = group.empty() ? static_cast<gid_t>(-1) : posix::lookupGroup(group);
    const Json& perms = desired.get("permissions");
    mode_t mode = perms.is_number_integer() ? posix::permissionsToMode(perms.get<long long>()) : 0644;
    std::string content = getFile(optString(desired, "hash"));
    writeAtomically(path, content, mode, uid, gid);
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    std::string path = optString(desired, "path");
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) posix::throwErrno("cannot stat", path);
    const Json& perms = desired.get("permissions");
    mode_t mode =
        perms.is_number_integer() ? posix::permissionsToMode(perms.get<long long>()) : (st.st_mode & 07777);
    std::string owner = optString(desired, "owner"), group = optString(desired, "group");
    if (changes.contains("hash")) {
      // New content: the replacement carries the desired (or the existing) mode and ownership.
      uid_t uid = owner.empty() ? st.st_uid : posix::lookupUser(owner);
      gid_t gid = group.empty() ? st.st_gid : posix::lookupGroup(group);
      if (uid == geteuid() && gid == getegid()) uid = static_cast<uid_t>(-1), gid = static_cast<gid_t>(-1);
      writeAtomically(path, getFile(optString(desired, "hash")), mode, uid, gid);
    } else {
      if (changes.contains("permissions") && chmod(path.c_str(), mode) != 0)
        posix::throwErrno("cannot chmod", path);
      if (changes.contains("owner") || changes.contains("group"))
        posix::chownNames(path, changes.contains("owner") ? owner : "",
                          changes.contains("group") ? group : "");
    }
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    std::string path = optString(desired, "path");
    if (unlink(path.c_str()) != 0 && errno != ENOENT) posix::throwErrno("cannot remove", path);
    ctx.setPurged();
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeFileHandler() { return std::make_unique<FileHandler>(); }

} // namespace inm::executor::handlers

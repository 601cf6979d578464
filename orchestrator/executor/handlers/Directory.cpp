// std::Directory (std.md §4): one directory level with permissions, owner and group. create = mkdir + chmod
// (the umask must not win) + chown; update = chmod/chown of what changed; delete = rmdir (an error when not
// empty).
#include "Posix.h"
#include "StdHandlers.h"

#include <sys/stat.h>

#include <cerrno>
#include <unistd.h>

namespace inm::executor::handlers {

namespace {

class DirectoryHandler : public CRUDHandler {
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
    if (!S_ISDIR(st.st_mode)) throw std::runtime_error("path " + path + " exists but is not a directory");
    if (!current.get("permissions").is_null())
      current.attributes["permissions"] = posix::modeToPermissions(st.st_mode);
    if (!current.get("owner").is_null()) current.attributes["owner"] = posix::userName(st.st_uid);
    if (!current.get("group").is_null()) current.attributes["group"] = posix::groupName(st.st_gid);
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    std::string path = optString(desired, "path");
    std::string owner = optString(desired, "owner"), group = optString(desired, "group");
    // Resolve names first: a missing user must not leave a half-configured directory behind.
    if (!owner.empty()) posix::lookupUser(owner);
    if (!group.empty()) posix::lookupGroup(group);
    const Json& perms = desired.get("permissions");
    mode_t mode = perms.is_number_integer() ? posix::permissionsToMode(perms.get<long long>()) : 0755;
    if (mkdir(path.c_str(), mode) != 0) posix::throwErrno("cannot create directory", path);
    if (chmod(path.c_str(), mode) != 0) posix::throwErrno("cannot chmod", path);
    if (!owner.empty() || !group.empty()) posix::chownNames(path, owner, group);
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    std::string path = optString(desired, "path");
    if (changes.contains("permissions")) {
      mode_t mode = posix::permissionsToMode(desired.get("permissions").get<long long>());
      if (chmod(path.c_str(), mode) != 0) posix::throwErrno("cannot chmod", path);
    }
    if (changes.contains("owner") || changes.contains("group"))
      posix::chownNames(path, changes.contains("owner") ? optString(desired, "owner") : "",
                        changes.contains("group") ? optString(desired, "group") : "");
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    std::string path = optString(desired, "path");
    if (rmdir(path.c_str()) != 0 && errno != ENOENT) posix::throwErrno("cannot remove directory", path);
    ctx.setPurged();
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeDirectoryHandler() { return std::make_unique<DirectoryHandler>(); }

} // namespace inm::executor::handlers

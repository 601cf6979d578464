// std::Directory (std.md §4): one directory level with permissions, owner and group, through the agent's
// HostIo (local or ssh://). create = mkdir with the exact mode (the umask must not win) + chown
// (HostIo::makeDirectory); update = chmod/chown of what changed; delete = rmdir (an error when not empty).
#include "Posix.h"
#include "StdHandlers.h"

namespace inm::executor::handlers {

namespace {

class DirectoryHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string path = optString(current, "path");
    if (path.empty() || path[0] != '/')
      throw std::runtime_error("path '" + path + "' is not an absolute path");
    PathInfo info = io().lstat(path);
    if (!info.exists()) throw ResourcePurged();
    if (info.type != PathInfo::Type::Directory)
      throw std::runtime_error("path " + path + " exists but is not a directory");
    if (!current.get("permissions").is_null()) current.attributes["permissions"] = info.permissions;
    if (!current.get("owner").is_null()) current.attributes["owner"] = info.owner;
    if (!current.get("group").is_null()) current.attributes["group"] = info.group;
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    std::string path = optString(desired, "path");
    std::string owner = optString(desired, "owner"), group = optString(desired, "group");
    // Resolve names first on the local host: a missing user must not leave a half-configured directory.
    if (!io().remote()) {
      if (!owner.empty()) posix::lookupUser(owner);
      if (!group.empty()) posix::lookupGroup(group);
    }
    const Json& perms = desired.get("permissions");
    int mode = 755;
    if (perms.is_number_integer()) {
      posix::permissionsToMode(perms.get<long long>()); // validates
      mode = static_cast<int>(perms.get<long long>());
    }
    io().makeDirectory(path, mode, owner, group); // one round trip over ssh; a failed chown removes it again
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    std::string path = optString(desired, "path");
    if (changes.contains("permissions")) {
      long long perms = desired.get("permissions").get<long long>();
      posix::permissionsToMode(perms); // validates
      io().chmod(path, static_cast<int>(perms));
    }
    if (changes.contains("owner") || changes.contains("group"))
      io().chown(path, changes.contains("owner") ? optString(desired, "owner") : "",
                 changes.contains("group") ? optString(desired, "group") : "");
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    io().rmdir(optString(desired, "path"));
    ctx.setPurged();
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeDirectoryHandler() { return std::make_unique<DirectoryHandler>(); }

} // namespace inm::executor::handlers

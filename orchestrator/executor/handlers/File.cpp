// std::File (std.md §4): a regular file with content addressed by sha1, permissions, owner and group. Content
// is fetched through the host's FileSource, verified, and written through the agent's HostIo (the executor's
// host or an ssh:// host), which replaces the file atomically (temp file in the same directory, renamed
// over the path), so a reader sees the old file or the new one, never a half-written one (a new small file on
// an ssh host is created in place by one write: see HostIo::createFile). Attributes that
// are null in the desired state (owner, group, permissions) are not managed. A content change is logged on
// the deploy action with the unified diff of the old and new content (the deploy's change log).
#include "Posix.h"
#include "StdHandlers.h"
#include "support/TextDiff.h"

#include <optional>

namespace inm::executor::handlers {

namespace {

/// Current contents larger than this are not uploaded for diffs.
constexpr size_t kMaxUploadBytes = 1u << 20;

int desiredPermissions(const Resource& desired, int fallback) {
  const Json& perms = desired.get("permissions");
  if (!perms.is_number_integer()) return fallback;
  posix::permissionsToMode(perms.get<long long>()); // validates: throws naming a bad value
  return static_cast<int>(perms.get<long long>());
}

class FileHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string path = optString(current, "path");
    if (path.empty() || path[0] != '/')
      throw std::runtime_error("path '" + path + "' is not an absolute path");
    // One describePath: type, mode, owner, group and the content's sha1 (one round trip over ssh).
    bool wantHash = !current.get("hash").is_null();
    currentContent_.reset();
    PathInfo info = io().describePath(path, wantHash);
    if (!info.exists()) throw ResourcePurged();
    if (info.type != PathInfo::Type::File)
      throw std::runtime_error("path " + path + " exists but is not a regular file");
    ctx.set("current_owner", info.owner);
    ctx.set("current_group", info.group);
    ctx.set("current_permissions", info.permissions);
    if (wantHash) {
      // The server has the desired content; offer the current one too so diffs can show both (read only
      // then: an unchanged file is never transferred).
      if (info.sha1 != current.get("hash") && info.size <= static_cast<long long>(kMaxUploadBytes) &&
          services().files) {
        std::string content = io().readFile(path);
        services().files->putFile(sha1Hex(content), content);
        currentContent_ = std::move(content); // for the change log's diff if this run updates it
      }
      current.attributes["hash"] = info.sha1;
    }
    if (!current.get("permissions").is_null()) current.attributes["permissions"] = info.permissions;
    if (!current.get("owner").is_null()) current.attributes["owner"] = info.owner;
    if (!current.get("group").is_null()) current.attributes["group"] = info.group;
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    std::string path = optString(desired, "path");
    int perms = desiredPermissions(desired, 644);
    std::string content = getFile(optString(desired, "hash"));
    // Fails when the path appeared since the read phase (the existence check is part of the write).
    io().createFile(path, content, perms, optString(desired, "owner"), optString(desired, "group"));
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    std::string path = optString(desired, "path");
    std::string owner = optString(desired, "owner"), group = optString(desired, "group");
    if (changes.contains("hash")) {
      // New content: the replacement carries the desired (or the existing) mode and ownership.
      auto currentText = [&](const char* key) {
        const Json& v = ctx.get(key);
        return v.is_string() ? v.get<std::string>() : std::string();
      };
      const Json& curPerms = ctx.get("current_permissions");
      int perms = desiredPermissions(desired, curPerms.is_number_integer() ? curPerms.get<int>() : 644);
      std::string content = getFile(optString(desired, "hash"));
      io().writeFile(path, content, perms, owner.empty() ? currentText("current_owner") : owner,
                     group.empty() ? currentText("current_group") : group);
      // The change log: what the content was and is now (binary or huge content: a one-line summary; a
      // current content over kMaxUploadBytes was not read, so only the hashes are in the changes).
      if (currentContent_)
        ctx.info(
            "Updated the content of %(path)s:\n%(diff)s",
            Json{{"path", path}, {"diff", contentDiff(*currentContent_, content, "previous", "deployed")}});
    } else {
      if (changes.contains("permissions")) io().chmod(path, desiredPermissions(desired, 644));
      if (changes.contains("owner") || changes.contains("group"))
        io().chown(path, changes.contains("owner") ? owner : "", changes.contains("group") ? group : "");
    }
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    io().unlink(optString(desired, "path"));
    ctx.setPurged();
  }

 private:
  std::optional<std::string> currentContent_; ///< the content readResource found, when it differed
};

} // namespace

std::unique_ptr<HandlerAPI> makeFileHandler() { return std::make_unique<FileHandler>(); }

} // namespace inm::executor::handlers

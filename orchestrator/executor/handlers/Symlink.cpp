// std::Symlink (std.md §4), through the agent's HostIo (local or ssh://): `target` is the link's path,
// `source` what it points to. A target that exists and is not a symlink is an error (never replaced); update
// swaps the link atomically (new link beside it + rename).
#include "StdHandlers.h"

namespace inm::executor::handlers {

namespace {

class SymlinkHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string target = optString(current, "target");
    if (target.empty() || target[0] != '/')
      throw std::runtime_error("target '" + target + "' is not an absolute path");
    PathInfo info = io().lstat(target);
    if (!info.exists()) throw ResourcePurged();
    if (info.type != PathInfo::Type::Symlink)
      throw std::runtime_error("target " + target + " exists and is not a symlink");
    current.attributes["source"] = io().readlink(target);
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    io().symlink(optString(desired, "source"), optString(desired, "target"));
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    io().replaceSymlink(optString(desired, "source"), optString(desired, "target"));
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    io().unlink(optString(desired, "target"));
    ctx.setPurged();
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeSymlinkHandler() { return std::make_unique<SymlinkHandler>(); }

} // namespace inm::executor::handlers

// std::Symlink (std.md §4): `target` is the link's path, `source` what it points to. A target that exists and
// is not a symlink is an error (never replaced); update swaps the link atomically (new link beside it +
// rename).
#include "Posix.h"
#include "StdHandlers.h"

#include <sys/stat.h>

#include <cerrno>
#include <unistd.h>
#include <vector>

namespace inm::executor::handlers {

namespace {

class SymlinkHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string target = optString(current, "target");
    if (target.empty() || target[0] != '/')
      throw std::runtime_error("target '" + target + "' is not an absolute path");
    struct stat st;
    if (lstat(target.c_str(), &st) != 0) {
      if (errno == ENOENT) throw ResourcePurged();
      posix::throwErrno("cannot stat", target);
    }
    if (!S_ISLNK(st.st_mode)) throw std::runtime_error("target " + target + " exists and is not a symlink");
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1);
    ssize_t n = readlink(target.c_str(), buf.data(), buf.size());
    if (n < 0) posix::throwErrno("cannot read link", target);
    current.attributes["source"] = std::string(buf.data(), static_cast<size_t>(n));
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    std::string target = optString(desired, "target");
    if (symlink(optString(desired, "source").c_str(), target.c_str()) != 0)
      posix::throwErrno("cannot create symlink", target);
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    std::string target = optString(desired, "target");
    std::string tmp = target + ".inmanta-new";
    unlink(tmp.c_str());
    if (symlink(optString(desired, "source").c_str(), tmp.c_str()) != 0)
      posix::throwErrno("cannot create symlink", tmp);
    if (rename(tmp.c_str(), target.c_str()) != 0) {
      unlink(tmp.c_str());
      posix::throwErrno("cannot replace symlink", target);
    }
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    std::string target = optString(desired, "target");
    if (unlink(target.c_str()) != 0 && errno != ENOENT) posix::throwErrno("cannot remove symlink", target);
    ctx.setPurged();
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeSymlinkHandler() { return std::make_unique<SymlinkHandler>(); }

} // namespace inm::executor::handlers

// std::Package with dpkg/apt (std.md §4: the reference used yum/dnf): read with dpkg-query (and apt-cache
// policy for `latest`), install/upgrade/remove with apt-get, all through the agent's HostIo (local or
// ssh://). The current `state` is `installed` or `removed`
// (`latest` when the installed version is the candidate). Without dpkg-query the handler fails with "handler
// not available on this host".
#include "Posix.h"
#include "StdHandlers.h"

#include <regex>
#include <sstream>

namespace inm::executor::handlers {

namespace {

const std::regex kPackageName("^[a-z0-9][a-z0-9+.-]*(:[a-z0-9]+)?$");

class PackageHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string name = optString(current, "name");
    if (!std::regex_match(name, kPackageName))
      throw std::runtime_error("'" + name + "' is not a Debian package name");
    if (!io().hasCommand("dpkg-query"))
      throw std::runtime_error("handler not available on " + io().describe() +
                               ": dpkg-query is not installed");
    RunResult r = io().run({"dpkg-query", "-W", "-f=${Status}\t${Version}", name});
    std::string status, version;
    if (r.exitCode == 0) {
      std::istringstream ss(r.out);
      std::getline(ss, status, '\t');
      std::getline(ss, version);
    }
    bool installed = status == "install ok installed";
    std::string state = installed ? "installed" : "removed";
    if (installed && optString(current, "state") == "latest") {
      RunResult p = io().run({"apt-cache", "policy", name});
      std::string candidate;
      std::istringstream ps(p.out);
      for (std::string line; std::getline(ps, line);) {
        size_t at = line.find("Candidate:");
        if (at != std::string::npos) {
          candidate = line.substr(at + 10);
          candidate.erase(0, candidate.find_first_not_of(' '));
        }
      }
      if (candidate.empty() || candidate == version) state = "latest";
    }
    ctx.set("installed_version", version);
    ctx.debug("package %(name)s is %(state)s (version %(version)s)",
              {{"name", name}, {"state", state}, {"version", version}});
    current.attributes["state"] = state;
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    updateResource(ctx, {}, desired);
  }

  void updateResource(HandlerContext& ctx, const Json&, const Resource& desired) override {
    std::string name = optString(desired, "name"), state = optString(desired, "state");
    bool wasInstalled =
        !ctx.get("installed_version").is_null() && !ctx.get("installed_version").get<std::string>().empty();
    std::vector<std::string> cmd = {"apt-get", "-y", "-q"};
    if (state == "removed") {
      cmd.insert(cmd.end(), {"remove", name});
    } else if (state == "installed" || state == "latest") {
      cmd.insert(cmd.end(), {"install", name});
    } else {
      throw std::runtime_error("package state '" + state + "' is not one of installed, removed, latest");
    }
    RunResult r = io().run(cmd);
    if (r.exitCode != 0)
      throw std::runtime_error("apt-get " + cmd[3] + " " + name + " failed (exit " +
                               std::to_string(r.exitCode) + "): " + r.err);
    ctx.info("apt-get %(command)s %(name)s", {{"command", cmd[3]}, {"name", name}, {"output", r.out}});
    if (state == "removed")
      ctx.setPurged();
    else if (wasInstalled)
      ctx.setUpdated();
    else
      ctx.setCreated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    throw std::runtime_error("std::Package is not purgeable: use state=removed");
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makePackageHandler() { return std::make_unique<PackageHandler>(); }

} // namespace inm::executor::handlers

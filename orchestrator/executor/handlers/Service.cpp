// std::Service with systemd (std.md §4): `state` running/stopped via `systemctl is-active/start/stop`,
// `onboot` via `is-enabled/enable/disable` (through the agent's HostIo: local or ssh://); reloads with
// `reload-or-restart` unless the service should be stopped. Where systemd is not running (no
// /run/systemd/system, as in containers) it fails with "handler not available on this host".
#include "Posix.h"
#include "StdHandlers.h"

#include <regex>

namespace inm::executor::handlers {

namespace {

const std::regex kUnitName("^[A-Za-z0-9:_.@\\\\-]+$");

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void requireSystemd(HostIo& io) {
  if (io.lstat("/run/systemd/system").type != PathInfo::Type::Directory || !io.hasCommand("systemctl"))
    throw std::runtime_error("handler not available on " + io.describe() +
                             ": systemd is not running (no /run/systemd/system)");
}

void systemctl(HostIo& io, const std::string& verb, const std::string& name) {
  RunResult r = io.run({"systemctl", verb, name});
  if (r.exitCode != 0) throw std::runtime_error("systemctl " + verb + " " + name + " failed: " + trim(r.err));
}

class ServiceHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string name = optString(current, "name");
    if (!std::regex_match(name, kUnitName))
      throw std::runtime_error("'" + name + "' is not a systemd unit name");
    requireSystemd(io());
    std::string active = trim(io().run({"systemctl", "is-active", name}).out);
    std::string enabled = trim(io().run({"systemctl", "is-enabled", name}).out);
    current.attributes["state"] = active == "active" ? "running" : "stopped";
    current.attributes["onboot"] = enabled == "enabled";
  }
  void createResource(HandlerContext& ctx, const Resource& desired) override {
    updateResource(ctx, {}, desired);
  }
  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    std::string name = optString(desired, "name");
    if (changes.contains("state"))
      systemctl(io(), optString(desired, "state") == "running" ? "start" : "stop", name);
    if (changes.contains("onboot")) {
      const Json& onboot = desired.get("onboot");
      systemctl(io(), onboot.is_boolean() && onboot.get<bool>() ? "enable" : "disable", name);
    }
    ctx.setUpdated();
  }
  void deleteResource(HandlerContext& ctx, const Resource&) override {
    throw std::runtime_error("std::Service is not purgeable: use state=stopped");
  }
  bool canReload() const override { return true; }
  void doReload(HandlerContext& ctx, const Resource& resource) override {
    if (optString(resource, "state") == "stopped") return;
    requireSystemd(io());
    systemctl(io(), "reload-or-restart", optString(resource, "name"));
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeServiceHandler() { return std::make_unique<ServiceHandler>(); }

} // namespace inm::executor::handlers

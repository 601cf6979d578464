// The scheduler host's configuration (SchedulerHost.h readConfig): [scheduler] executor and stop_grace,
// [database], [config] state-dir and the [agent] options the executors and external agents use, decoded and
// checked once before the process connects to anything. Invariant: every error names the setting and the
// value it refused, in the words `inmanta scheduler` has always printed after "inmanta scheduler: ".
#include "schedhost/SchedulerHost.h"

#include <cstdint>
#include <cstdlib>
#include <utility>

namespace inm::schedhost {

namespace {
llvm::Error fail(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}
} // namespace

llvm::Error readConfig(const config::Config& cfg, HostOptions& o) {
  // A server's schedulers get only the server's -c files: `[scheduler] executor = null` picks the test double
  // for them (integration tests of the server's life cycle).
  if (o.executorKind.empty()) o.executorKind = cfg.getString("scheduler", "executor", "process");
  if (o.executorKind != "null" && o.executorKind != "process")
    return fail("[scheduler] executor must be process or null, not '" + o.executorKind + "'");
  auto graceOr = cfg.getInt("scheduler", "stop_grace", 10);
  if (!graceOr || *graceOr < 0 || *graceOr > 3600)
    return fail("[scheduler] stop_grace: " + (graceOr ? std::string("must be between 0 and 3600 seconds")
                                                      : llvm::toString(graceOr.takeError())));
  o.stopGrace = std::chrono::seconds(*graceOr);
  o.db.host = cfg.getString("database", "host", "localhost");
  o.db.name = cfg.getString("database", "name", "inmanta");
  o.db.user = cfg.getString("database", "username", "postgres");
  o.db.password = cfg.getString("database", "password", "");
  auto port = cfg.getInt("database", "port", 5432);
  if (!port) return port.takeError();
  o.db.port = static_cast<int>(*port);
  o.stateDir = cfg.getString("config", "state-dir", "/var/lib/inmanta");
  if (o.executorKind != "process") return llvm::Error::success();
  // ssh:// agents (docs/deploy.md "Agentless over SSH"): which known_hosts and key the executors' ssh uses.
  for (const auto& [option, flag] : {std::pair{"ssh-known-hosts-file", "--ssh-known-hosts"},
                                     std::pair{"ssh-identity-file", "--ssh-identity"}})
    if (std::string v = cfg.getString("agent", option, ""); !v.empty())
      o.executorArguments.insert(o.executorArguments.end(), {flag, v});
  // [agent] failover-timeout (docs/deploy.md "Failover"): an external session that does not answer the
  // heartbeat for this long is closed, so a standby takes over within it; a closed connection at once.
  {
    std::string text = cfg.getString("agent", "failover-timeout", "10");
    char* end = nullptr;
    double seconds = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(seconds >= 2) || seconds > 3600)
      return fail("[agent] failover-timeout must be 2-3600 seconds, got '" + text + "'");
    o.failoverTimeout = std::chrono::milliseconds(int64_t(seconds * 1000));
  }
  // [agent] executor-retention-time: seconds (fractions allowed) an idle executor is kept; 0 keeps them.
  std::string retention = cfg.getString("agent", "executor-retention-time", "60");
  char* end = nullptr;
  double seconds = std::strtod(retention.c_str(), &end);
  if (retention.empty() || *end != '\0' || !(seconds >= 0))
    return fail("[agent] executor-retention-time must be a number of seconds, got '" + retention + "'");
  o.executorRetention = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  return llvm::Error::success();
}

} // namespace inm::schedhost

// The `external_agent` rows of one environment (docs/deploy.md "External agents", migration 003): which
// connection holds each external agent and its standbys. Used by the scheduler host's ExternalAgents at start
// (every row disconnected) and after every change of primary or standbys. Invariant: blocking calls, one
// transaction each; run them on a database thread, never on the state machine's.
#pragma once

#include <string>
#include <vector>

namespace inm::scheduler::pg {

/// What the scheduler knows of one external agent: its primary (the last one when disconnected) and its
/// standbys in promotion order (holders: "<host> pid <pid> via <peer>").
struct ExternalAgentRecord {
  std::string name;
  std::string holder;
  bool connected = false;
  std::vector<std::string> standbys;
  bool failover = false; ///< this record is a standby's promotion (sets agent.last_failover)
};

/// The `external_agent` rows of `env` (blocking database calls; run them on a DB thread).
/// `resetExternalAgents` marks every row disconnected without standbys (a scheduler starts without sessions)
/// and returns the names; `recordExternalAgents` writes records (a disconnected record keeps the stored
/// holder). Both return their error as text ("" = done).
std::string resetExternalAgents(const std::string& connString, const std::string& env,
                                std::vector<std::string>& names);
std::string recordExternalAgents(const std::string& connString, const std::string& env,
                                 const std::vector<ExternalAgentRecord>& records);

} // namespace inm::scheduler::pg

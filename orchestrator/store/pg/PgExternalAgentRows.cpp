// The `external_agent` rows of one environment (ExternalAgentRows.h): the scheduler's record of which
// external agent sessions hold which agents. Blocking libpqxx calls on a connection of their own, run on a
// database thread; part of the
// scheduler's store (store/pg, moved from scheduler/pg) so that no SQL lives in the scheduler host.
// Invariant: each call is one transaction, and errors come back as text, never as an exception.
#include "Connection.h"
#include "store/ExternalAgentRows.h"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace inm::scheduler::pg {

std::string resetExternalAgents(const std::string& connString, const std::string& env,
                                std::vector<std::string>& names) {
  try {
    std::unique_ptr<pqxx::connection> c = store::openConnection(connString);
    pqxx::work tx(*c);
    tx.exec_params("UPDATE external_agent SET connected = false, disconnected_at = now() "
                   "WHERE environment = $1 AND connected",
                   env);
    tx.exec_params("UPDATE external_agent SET standbys = '[]' WHERE environment = $1 AND standbys <> '[]'",
                   env);
    for (const auto& row :
         tx.exec_params("SELECT name FROM external_agent WHERE environment = $1 ORDER BY name", env))
      names.push_back(row[0].as<std::string>());
    tx.commit();
    return "";
  } catch (const std::exception& e) {
    return std::string("cannot read the external agents: ") + e.what();
  }
}

std::string recordExternalAgents(const std::string& connString, const std::string& env,
                                 const std::vector<ExternalAgentRecord>& records) {
  try {
    std::unique_ptr<pqxx::connection> c = store::openConnection(connString);
    pqxx::work tx(*c);
    for (const auto& r : records) {
      std::string standbys = nlohmann::json(r.standbys).dump();
      if (r.connected)
        tx.exec_params(
            "INSERT INTO external_agent (environment, name, holder, connected, claimed_at, standbys) "
            "VALUES ($1, $2, $3, true, now(), $4::jsonb) ON CONFLICT (environment, name) DO UPDATE "
            "SET holder = EXCLUDED.holder, connected = true, standbys = EXCLUDED.standbys, "
            "claimed_at = CASE WHEN external_agent.connected AND external_agent.holder = "
            "EXCLUDED.holder THEN external_agent.claimed_at ELSE now() END",
            env, r.name, r.holder, standbys);
      else
        tx.exec_params(
            "INSERT INTO external_agent (environment, name, holder, connected, standbys) "
            "VALUES ($1, $2, '', false, $3::jsonb) ON CONFLICT (environment, name) DO UPDATE "
            "SET standbys = EXCLUDED.standbys, disconnected_at = CASE WHEN external_agent.connected "
            "THEN now() ELSE external_agent.disconnected_at END, connected = false",
            env, r.name, standbys);
      if (r.failover)
        tx.exec_params("UPDATE agent SET last_failover = now() WHERE environment = $1 AND name = $2", env,
                       r.name);
    }
    tx.commit();
    return "";
  } catch (const std::exception& e) {
    return std::string("cannot record the external agents: ") + e.what();
  }
}

} // namespace inm::scheduler::pg

// The scheduler's side of external agents (docs/deploy.md "External agents"): a Unix socket under the state
// dir on which the server relays `inmanta agent` connections. A connection starts with one `claim` frame
// (agent names and the holder's description); the claim is granted (`claimed`) or refused (`refused`, naming
// the holder), and a granted connection then speaks the executor protocol as an attached
// executor::ExecutorProcess. A claim of a held agent is not refused: that connection is kept as a standby
// (`standby` frame) and promoted (`primary` frame, then the executor protocol) when the agents it claims are
// all free again, oldest standby first (docs/deploy.md "Failover"). Claims are persistent: an agent once
// claimed stays external (its work answers `unavailable` while no session holds it) until its row in
// `external_agent` is deleted. Invariants: at most one live session per agent, and a standby is promoted only
// after the previous session is dead (its in-flight work already answered `unavailable`); every change of
// primary or standbys is reported through `persist` in the order it happened; everything runs on the
// io_context thread.
#pragma once

#include "executor/ExecutorClient.h"
#include "store/ExternalAgentRows.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace inm::schedhost {

using scheduler::pg::ExternalAgentRecord;

class ExternalAgents {
 public:
  /// The new state of some agents to record in the database.
  using Persist = std::function<void(const std::vector<ExternalAgentRecord>& records)>;

  ExternalAgents(boost::asio::io_context& ioc, executor::ExecutorOptions options,
                 executor::FileProvider files, Persist persist, std::function<void(const std::string&)> log,
                 std::function<void(const std::vector<std::string>&)> onClaim);
  ~ExternalAgents();

  /// Agents recorded as external by an earlier run (their work waits for a claim).
  void setKnown(const std::vector<std::string>& agents);
  /// Binds the socket (an existing stale socket file is replaced) and starts accepting. Returns "" or the
  /// error.
  std::string listen(const std::string& path);

  /// Serves `get_code` of the sessions attached from now on (their Python handler code, by version and
  /// agent).
  void setCodeProvider(executor::CodeProvider code) { code_ = std::move(code); }

  bool isExternal(const std::string& agent) const { return external_.count(agent) != 0; }
  /// The live session of an external agent, or nullptr with the reason in `error`.
  std::shared_ptr<executor::ExecutorProcess> session(const std::string& agent, std::string* error) const;
  /// Closes the listener and asks every session to stop; `done` runs once all are gone.
  void shutdown(std::function<void()> done);

 private:
  struct Conn;
  void accept();
  void onClaim(std::shared_ptr<Conn> conn, const executor::Json& claim);
  void reply(std::shared_ptr<Conn> conn, const executor::Json& answer, std::function<void()> then);
  /// Reserves `agents` for `conn`, writes `answer`, then attaches the connection as their session.
  void grant(std::shared_ptr<Conn> conn, const std::vector<std::string>& agents, const std::string& holder,
             const executor::Json& answer, bool failover);
  /// Promotes the oldest standbys whose agents are all free.
  void promote();
  /// Reports the current primary and standbys of `agents` through persist_.
  void record(const std::vector<std::string>& agents, bool failover);

  boost::asio::io_context& ioc_;
  executor::ExecutorOptions options_;
  executor::FileProvider files_;
  executor::CodeProvider code_;
  Persist persist_;
  std::function<void(const std::string&)> log_;
  std::function<void(const std::vector<std::string>&)> onClaimed_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::string path_;
  std::set<std::string> external_;
  struct Claim {
    std::string holder;
    std::shared_ptr<executor::ExecutorProcess> session;
  };
  std::map<std::string, Claim> claims_; ///< live claims only
  struct Standby {
    std::shared_ptr<Conn> conn;
    std::vector<std::string> agents;
    std::string holder;
  };
  std::vector<Standby> standbys_; ///< in claim order: the first one that fits is promoted
  uint64_t nextSession_ = 1;
};

} // namespace inm::schedhost

// The executor side of an external agent's session (`inmanta agent`, orchestrator/agent; docs/deploy.md
// "External agents and Python code"). The scheduler speaks the executor protocol to the agent as to a local
// executor; the router answers `hello` and `heartbeat` itself and runs the work in `inmanta executor` child
// processes of its own (executor::ExecutorPool), one per code blueprint, exactly as the scheduler's local
// executors do. The blueprint of a (version, agent) pair comes from the scheduler over the same connection:
// `get_code` lists the {module, path, hash} of its Python handler code, each file is fetched with `get_file`,
// its sha1 verified, and the tree is laid out once under <code dir>/<blueprint>/ (reused by later sessions
// and versions with the same code). Invariants: every request gets exactly one result (missing or corrupt
// code: `unavailable` naming the module and file); the children are stopped before run() returns; everything
// runs on the session's io_context thread.
#pragma once

#include "executor/ExecutorClient.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace inm::agent {

class AgentRouter : public std::enable_shared_from_this<AgentRouter> {
 public:
  /// `codeDir`: where blueprints are laid out (created on first use); `log`: one line to the agent's log.
  AgentRouter(boost::asio::any_io_executor executor, executor::ExecutorOptions options, std::string codeDir,
              std::function<void(const std::string&)> log);
  ~AgentRouter();

  /// Serves the protocol on `socket` until the peer closes it or breaks the protocol, then stops the
  /// executors (work still in flight then is lost with the connection; the scheduler reports it
  /// `unavailable`). A `shutdown` frame from the scheduler starts drain() with the default grace.
  boost::asio::awaitable<void> run(boost::asio::local::stream_protocol::socket socket);

  /// How many executor processes were started (for logs).
  size_t started() const { return pool_.started(); }

  /// Stops taking new work (new requests are answered `unavailable`, naming `reason`), lets the accepted
  /// actions finish for up to `grace`, then answers the ones still open `unavailable` (one log line each).
  /// Once every accepted request has its answer written, the write side of the socket is shut down; run()
  /// ends when the peer closes. Idempotent.
  void drain(std::chrono::milliseconds grace, std::string reason);
  /// The grace of a drain the scheduler asks for (a `shutdown` frame); default 30 s.
  void setShutdownGrace(std::chrono::milliseconds grace) { shutdownGrace_ = grace; }
  /// Accepted requests without an answer yet.
  size_t open() const { return open_.size(); }
  /// drain() completed: every answer is written and the socket's write side is shut down.
  bool drained() const { return halfClosed_; }

 private:
  /// A ready blueprint key, or why the code of a (version, agent) cannot be run.
  using Blueprint = std::variant<std::string, std::string>;
  struct Waiting {
    bool facts = false;
    executor::DeployRequest request;
  };

  void send(const executor::Json& message);
  void writeNext();
  void onFrame(executor::Json& msg);
  void dispatch(bool facts, std::vector<executor::DeployRequest> requests);
  void runOn(const std::string& key, bool facts, std::vector<executor::DeployRequest> requests);
  void answer(bool facts, const executor::ActionResult& result);
  /// get_file to the server; `reply` gets the content or nullopt (absent, or the connection closed).
  void requestFile(const std::string& hash, std::function<void(std::optional<std::string>)> reply);
  boost::asio::awaitable<std::optional<std::string>> fetchFile(const std::string& hash);
  boost::asio::awaitable<executor::Json> fetchCode(int version, const std::string& agent);
  /// The blueprint of (version, agent): asks the code, lays it out unless already there.
  boost::asio::awaitable<Blueprint> resolve(int version, std::string agent);
  /// Fails every waiting file and code request (the connection closed).
  void closeWaits();
  /// Every accepted request is answered (or the grace ran out and drain() answered it): sends `bye` and
  /// half-closes the socket once the queued answers are written.
  void finishDrain();
  /// Whether the request is still open (accepted, not answered).
  bool isOpen(bool facts, const std::string& actionId) const { return open_.count({facts, actionId}) > 0; }

  boost::asio::any_io_executor executor_;
  std::string codeDir_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<boost::asio::local::stream_protocol::socket> socket_;
  std::vector<std::string> writeQueue_;
  bool writing_ = false;
  bool closed_ = false;
  executor::ExecutorPool pool_;
  std::map<std::string, std::string> codeDirs_;                   ///< blueprint key -> its --python-code dir
  std::map<std::pair<int, std::string>, std::string> blueprints_; ///< (version, agent) -> ready key
  std::map<std::pair<int, std::string>, std::vector<Waiting>> waiting_; ///< requests waiting for their code
  uint64_t nextRequest_ = 0;
  std::map<uint64_t, std::function<void(std::optional<std::string>)>> fileWaits_;
  std::map<uint64_t, std::function<void(executor::Json)>> codeWaits_;
  std::map<std::pair<bool, std::string>, std::string> open_; ///< (facts, action id) -> resource id
  bool draining_ = false;
  bool finishing_ = false; ///< every open request answered: half-close once the queue is written
  bool halfClosed_ = false;
  std::string drainReason_;
  std::chrono::milliseconds shutdownGrace_{30000};
  std::unique_ptr<boost::asio::steady_timer> graceTimer_;
};

} // namespace inm::agent

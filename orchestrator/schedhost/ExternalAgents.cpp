// ExternalAgents (ExternalAgents.h): the claim handshake on the scheduler's Unix socket, the standby queue
// and its promotion; a primary's connection is handed to an attached ExecutorProcess, which speaks the
// executor protocol exactly as with a local child.
#include "ExternalAgents.h"

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace asio = boost::asio;
using local = asio::local::stream_protocol;

namespace inm::schedhost {

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
} // namespace

struct ExternalAgents::Conn {
  explicit Conn(local::socket s) : socket(std::move(s)), deadline(socket.get_executor()) {}
  local::socket socket;
  asio::steady_timer deadline;
  unsigned char length[4] = {};
  std::string body;
  std::string out;
  unsigned char probe[1] = {}; ///< a standby's read: it only completes when the agent closes
  bool ready = false;          ///< a standby's `standby` frame is written: it may be promoted
  bool promoted = false;
};

ExternalAgents::ExternalAgents(asio::io_context& ioc, executor::ExecutorOptions options,
                               executor::FileProvider files, Persist persist,
                               std::function<void(const std::string&)> log,
                               std::function<void(const std::vector<std::string>&)> onClaim)
    : ioc_(ioc), options_(std::move(options)), files_(std::move(files)), persist_(std::move(persist)),
      log_(std::move(log)), onClaimed_(std::move(onClaim)), acceptor_(ioc) {}

ExternalAgents::~ExternalAgents() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  if (!path_.empty()) ::unlink(path_.c_str());
  for (auto& [name, claim] : claims_)
    if (claim.session) claim.session->terminateNow();
}

void ExternalAgents::setKnown(const std::vector<std::string>& agents) {
  for (const auto& a : agents) external_.insert(a);
}

std::string ExternalAgents::listen(const std::string& path) {
  // sun_path holds 107 bytes plus the terminating NUL.
  if (path.size() > 107)
    return "the external agent socket path " + path +
           " is longer than 107 bytes; use a shorter [config] state-dir";
  std::error_code fec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), fec);
  ::unlink(path.c_str()); // a socket left behind by a killed scheduler
  boost::system::error_code ec;
  acceptor_.open(local(), ec);
  if (!ec) acceptor_.bind(local::endpoint(path), ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return "cannot listen on the external agent socket " + path + ": " + ec.message();
  path_ = path;
  accept();
  return "";
}

void ExternalAgents::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, local::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      return accept();
    }
    auto conn = std::make_shared<Conn>(std::move(socket));
    // The server sends the claim at once; a silent peer is dropped.
    conn->deadline.expires_after(std::chrono::seconds(10));
    conn->deadline.async_wait([conn](boost::system::error_code e) {
      if (e) return;
      boost::system::error_code ignored;
      conn->socket.close(ignored);
    });
    asio::async_read(
        conn->socket, asio::buffer(conn->length), [this, conn](boost::system::error_code e, size_t) {
          if (e) return;
          uint32_t n = (uint32_t(conn->length[0]) << 24) | (uint32_t(conn->length[1]) << 16) |
                       (uint32_t(conn->length[2]) << 8) | uint32_t(conn->length[3]);
          if (n > (1u << 20)) {
            log_("warning: dropped an external agent connection: its claim frame of " + std::to_string(n) +
                 " bytes is too large");
            return;
          }
          conn->body.resize(n);
          asio::async_read(conn->socket, asio::buffer(conn->body),
                           [this, conn](boost::system::error_code e2, size_t) {
                             if (e2) return;
                             conn->deadline.cancel();
                             executor::Json claim = executor::Json::parse(conn->body, nullptr, false);
                             onClaim(conn, claim);
                           });
        });
    accept();
  });
}

void ExternalAgents::reply(std::shared_ptr<Conn> conn, const executor::Json& answer,
                           std::function<void()> then) {
  conn->out = executor::encodeFrame(answer);
  asio::async_write(conn->socket, asio::buffer(conn->out),
                    [conn, then](boost::system::error_code ec, size_t) {
                      if (!ec && then) then();
                    });
}

void ExternalAgents::onClaim(std::shared_ptr<Conn> conn, const executor::Json& claim) {
  auto refuse = [&](const std::string& why) {
    log_("warning: refused an external agent claim: " + why);
    reply(conn, executor::Json{{"type", "refused"}, {"message", why}}, nullptr);
  };
  if (!claim.is_object() || claim.value("type", std::string()) != "claim" || !claim.contains("agents") ||
      !claim["agents"].is_array() || claim["agents"].empty())
    return refuse("the first frame must be {\"type\": \"claim\", \"agents\": [names…]}");
  if (claim.value("protocol", 0) != executor::kProtocolVersion)
    return refuse("the agent speaks executor protocol version " + std::to_string(claim.value("protocol", 0)) +
                  ", this scheduler speaks version " + std::to_string(executor::kProtocolVersion));
  std::vector<std::string> agents;
  for (const auto& a : claim["agents"]) {
    if (!a.is_string() || a.get<std::string>().empty())
      return refuse("agent names must be non-empty strings");
    agents.push_back(a.get<std::string>());
  }
  std::string holder = claim.value("holder", std::string("an unnamed agent process"));
  std::string heldBy;
  for (const auto& a : agents) {
    auto it = claims_.find(a);
    // A reservation (no session yet) or a live session holds the name; a dead one is being released.
    if (it != claims_.end() && (!it->second.session || it->second.session->alive())) {
      heldBy = it->second.holder;
      break;
    }
  }
  bool queued = false; // an older standby waits for one of these agents: it goes first
  for (const auto& s : standbys_)
    for (const auto& a : agents)
      if (std::find(s.agents.begin(), s.agents.end(), a) != s.agents.end()) queued = true;
  if (heldBy.empty() && !queued)
    return grant(conn, agents, holder, executor::Json{{"type", "claimed"}, {"agents", agents}}, false);
  // Held (or others wait first): a standby, kept connected and watched for its close.
  standbys_.push_back(Standby{conn, agents, holder});
  log_("external agent " + joined(agents) + ": " + holder + " is standby" +
       (heldBy.empty() ? std::string() : " (primary: " + heldBy + ")"));
  conn->out =
      executor::encodeFrame(executor::Json{{"type", "standby"}, {"agents", agents}, {"primary", heldBy}});
  asio::async_write(
      conn->socket, asio::buffer(conn->out), [this, conn](boost::system::error_code ec, size_t) {
        conn->ready = !ec; // a failed write is never promoted; the read below ends it at once
        conn->socket.async_read_some(
            asio::buffer(conn->probe), [this, conn](boost::system::error_code, size_t) {
              // A standby sends nothing: any completion (EOF, error, stray byte) ends it, unless it was
              // promoted.
              if (conn->promoted) return;
              for (auto it = standbys_.begin(); it != standbys_.end(); ++it)
                if (it->conn == conn) {
                  log_("external agent " + joined(it->agents) + ": standby " + it->holder + " disconnected");
                  auto agents = it->agents;
                  standbys_.erase(it);
                  boost::system::error_code ignored;
                  conn->socket.close(ignored);
                  record(agents, false);
                  return promote();
                }
            });
        promote(); // its primary may have gone while the `standby` frame was written
      });
  record(agents, false);
}

void ExternalAgents::record(const std::vector<std::string>& agents, bool failover) {
  std::vector<ExternalAgentRecord> records;
  for (const auto& a : agents) {
    ExternalAgentRecord r;
    r.name = a;
    auto it = claims_.find(a);
    r.connected = it != claims_.end() && it->second.session && it->second.session->alive();
    if (r.connected) r.holder = it->second.holder;
    for (const auto& s : standbys_)
      if (std::find(s.agents.begin(), s.agents.end(), a) != s.agents.end()) r.standbys.push_back(s.holder);
    r.failover = failover;
    records.push_back(std::move(r));
  }
  persist_(records);
}

void ExternalAgents::promote() {
  for (size_t i = 0; i < standbys_.size();) {
    bool free = true;
    for (const auto& a : standbys_[i].agents)
      if (claims_.count(a)) free = false; // a reservation, a live session or one still being released
    if (!free || !standbys_[i].conn->ready || !standbys_[i].conn->socket.is_open()) {
      ++i;
      continue;
    }
    Standby s = std::move(standbys_[i]);
    standbys_.erase(standbys_.begin() + long(i));
    s.conn->promoted = true;
    log_("external agent " + joined(s.agents) + ": standby " + s.holder + " becomes primary");
    grant(s.conn, s.agents, s.holder, executor::Json{{"type", "primary"}, {"agents", s.agents}}, true);
  }
}

void ExternalAgents::grant(std::shared_ptr<Conn> conn, const std::vector<std::string>& agents,
                           const std::string& holder, const executor::Json& answer, bool failover) {
  // Reserve the names now (a concurrent claim must see them), attach once the answer is written.
  for (const auto& a : agents) claims_[a] = Claim{holder, nullptr};
  conn->out = executor::encodeFrame(answer);
  asio::async_write(
      conn->socket, asio::buffer(conn->out),
      [this, conn, agents, holder, failover](boost::system::error_code ec, size_t) {
        if (ec) { // the process went before its answer: release the reservation for the next one
          boost::system::error_code ignored;
          conn->socket.close(ignored);
          for (const auto& a : agents) claims_.erase(a);
          log_("warning: external agent " + joined(agents) + " (" + holder +
               ") went before its claim was answered: " + ec.message());
          record(agents, false);
          return promote();
        }
        int fd = ::dup(conn->socket.native_handle());
        boost::system::error_code ignored;
        conn->socket.close(ignored); // also ends a promoted standby's pending read (ignored: promoted)
        std::string label = "external agent " + joined(agents);
        std::shared_ptr<executor::ExecutorProcess> session;
        if (fd >= 0)
          session = executor::ExecutorProcess::attach(
              ioc_.get_executor(), "external-" + std::to_string(nextSession_++), fd, options_, files_, label);
        if (!session) {
          for (const auto& a : agents) claims_.erase(a);
          log_("warning: cannot attach " + label + " (dup failed)");
          return promote();
        }
        session->setCodeProvider(code_);
        for (const auto& a : agents) {
          claims_[a] = Claim{holder, session};
          external_.insert(a);
        }
        record(agents, failover);
        log_(label + " claimed by " + holder);
        std::weak_ptr<executor::ExecutorProcess> weak = session;
        session->whenDead([this, agents, holder, weak, label] {
          asio::post(ioc_, [this, agents, holder, weak, label] {
            auto s = weak.lock();
            std::vector<std::string> released;
            for (const auto& a : agents) {
              auto it = claims_.find(a);
              if (it != claims_.end() && it->second.session == s) {
                claims_.erase(it);
                released.push_back(a);
              }
            }
            if (released.empty()) return;
            log_(label + " (" + holder + ") disconnected: " + (s ? s->deathCause() : std::string("gone")));
            record(released, false);
            promote(); // the dead session's in-flight work has been answered: a standby may take over now
          });
        });
        onClaimed_(agents);
      });
}

std::shared_ptr<executor::ExecutorProcess> ExternalAgents::session(const std::string& agent,
                                                                   std::string* error) const {
  auto it = claims_.find(agent);
  if (it != claims_.end() && it->second.session && it->second.session->alive()) {
    if (!it->second.session->stopping()) return it->second.session;
    if (error)
      *error = "external agent " + agent +
               " is shutting down; its resources wait until `inmanta agent` claims it again";
    return nullptr;
  }
  if (error)
    *error = "external agent " + agent +
             " is not connected; its resources wait until `inmanta agent` claims it again";
  return nullptr;
}

void ExternalAgents::shutdown(std::function<void()> done) {
  boost::system::error_code ec;
  acceptor_.close(ec);
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
  for (auto& s : standbys_) {
    s.conn->promoted = true; // not a disconnect to record: the scheduler stops
    boost::system::error_code ignored;
    s.conn->socket.close(ignored);
  }
  standbys_.clear();
  std::set<std::shared_ptr<executor::ExecutorProcess>> sessions;
  for (auto& [name, claim] : claims_)
    if (claim.session) sessions.insert(claim.session);
  if (sessions.empty()) {
    if (done) asio::post(ioc_, done);
    return;
  }
  auto left = std::make_shared<size_t>(sessions.size());
  auto finish = std::make_shared<std::function<void()>>(std::move(done));
  for (const auto& s : sessions)
    s->shutdown([left, finish] {
      if (--*left == 0 && *finish) (*finish)();
    });
}

} // namespace inm::schedhost

// The claim half of the external agent relay (AgentRelay.h): request checks, auth, and the claim exchange
// with the scheduler (one length-prefixed JSON frame each way, the executor protocol's framing).
#include "AgentRelay.h"

#include "Auth.h"
#include "model/Ids.h"

#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace inm::api {

using local = asio::local::stream_protocol;
using model::ErrorCode;

std::string agentSocketPath(const std::string& stateDir, const std::string& env) {
  std::error_code ec;
  return (std::filesystem::absolute(stateDir, ec) / ("scheduler-" + env + ".sock")).string();
}

namespace {

constexpr const char* kPath = "/api/v2/agent/connect";

Reply relayError(ErrorCode code, const std::string& message) {
  Reply r;
  r.status = model::httpStatus(code);
  r.json = nlohmann::json{{"message", message}};
  return r;
}

std::string frame(const nlohmann::json& message) {
  std::string body = message.dump();
  uint32_t n = static_cast<uint32_t>(body.size());
  std::string out{char((n >> 24) & 0xff), char((n >> 16) & 0xff), char((n >> 8) & 0xff), char(n & 0xff)};
  return out + body;
}

} // namespace

void relayKeepalive(int fd) {
  int on = 1, idle = 3, interval = 1, count = 3;
  unsigned int userTimeout = 10000; // ms: unacknowledged data for this long ends the connection
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeout, sizeof userTimeout);
}

bool isAgentConnect(const http::request<http::string_body>& raw) {
  std::string target(raw.target());
  return target.substr(0, target.find('?')) == kPath;
}

asio::awaitable<AgentClaim> claimAgents(asio::io_context& io, const HttpOptions& opts,
                                        const http::request<http::string_body>& raw, std::string peer) {
  AgentClaim out;
  if (raw.method() != http::verb::get) {
    out.error =
        relayError(ErrorCode::MethodNotAllowed,
                   std::string("method ") + std::string(raw.method_string()) + " is not allowed on " + kPath);
    co_return out;
  }
  auto upgrade = raw.find(http::field::upgrade);
  if (upgrade == raw.end() || !boost::beast::iequals(upgrade->value(), "inmanta-executor")) {
    out.error = relayError(ErrorCode::BadRequest, std::string(kPath) +
                                                      " needs the header `Upgrade: inmanta-executor` "
                                                      "(it is the connection of `inmanta agent`)");
    co_return out;
  }
  std::map<std::string, std::string> query;
  std::string target(raw.target());
  size_t q = target.find('?');
  std::string qs = q == std::string::npos ? "" : target.substr(q + 1);
  for (size_t i = 0; i < qs.size();) {
    size_t j = std::min(qs.find('&', i), qs.size());
    std::string kv = qs.substr(i, j - i);
    size_t e = kv.find('=');
    if (!kv.empty())
      query[percentDecode(kv.substr(0, e), true)] =
          e == std::string::npos ? "" : percentDecode(kv.substr(e + 1), true);
    i = j + 1;
  }
  std::string env = query["environment"];
  std::transform(env.begin(), env.end(), env.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (!model::isUuid(env)) {
    out.error = relayError(ErrorCode::BadRequest,
                           "the query parameter environment must be an environment id (a uuid), "
                           "got '" +
                               query["environment"] + "'");
    co_return out;
  }
  nlohmann::json agents = nlohmann::json::array();
  std::string list = query["agents"];
  for (size_t i = 0; i <= list.size();) {
    size_t j = std::min(list.find(',', i), list.size());
    if (j > i) agents.push_back(list.substr(i, j - i));
    i = j + 1;
  }
  if (agents.empty()) {
    out.error = relayError(ErrorCode::BadRequest,
                           "the query parameter agents must name at least one agent (agents=a,b)");
    co_return out;
  }
  if (opts.auth) {
    try {
      auto h = raw.find(http::field::authorization);
      Caller caller = verifyBearer(h == raw.end() ? std::string() : std::string(h->value()), opts.jwtKeys);
      if (std::find(caller.clientTypes.begin(), caller.clientTypes.end(), "agent") ==
          caller.clientTypes.end())
        throw ApiError{ErrorCode::Forbidden, "an external agent needs a token with client type agent"};
      if (caller.environment && *caller.environment != env)
        throw ApiError{ErrorCode::Forbidden,
                       "the token is scoped to environment " + *caller.environment + ", not " + env};
    } catch (const ApiError& e) {
      out.error = relayError(e.code, e.message);
      co_return out;
    }
  }
  if (opts.stateDir.empty()) {
    out.error =
        relayError(ErrorCode::Unavailable, "this server relays no external agents (no [config] state-dir)");
    co_return out;
  }
  std::string path = agentSocketPath(opts.stateDir, env);
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    // The scheduler refuses such a socket too (it runs without external agents): say why, not "end of
    // stream".
    out.error = relayError(ErrorCode::Unavailable,
                           "the scheduler of environment " + env +
                               " accepts no external agents: its socket path " + path + " is " +
                               std::to_string(path.size()) + " bytes, a Unix socket path must be under " +
                               std::to_string(sizeof(sockaddr_un::sun_path)) +
                               " bytes; set a shorter [config] state-dir on the server");
    co_return out;
  }
  auto sock = std::make_unique<local::socket>(io);
  boost::system::error_code ec;
  co_await sock->async_connect(local::endpoint(path), asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    out.error = relayError(ErrorCode::Unavailable, "the scheduler of environment " + env +
                                                       " does not accept external agents now (" + path +
                                                       ": " + ec.message() + ")");
    co_return out;
  }
  std::string holder = query.count("holder") ? query["holder"] : "an agent";
  holder += " via " + peer;
  std::string claim =
      frame(nlohmann::json{{"type", "claim"}, {"protocol", 1}, {"agents", agents}, {"holder", holder}});
  // The scheduler answers at once; a stuck one is cut off.
  asio::steady_timer deadline(io);
  deadline.expires_after(std::chrono::seconds(15));
  local::socket* raw_sock = sock.get();
  deadline.async_wait([raw_sock](boost::system::error_code e) {
    if (e) return;
    boost::system::error_code ignored;
    raw_sock->close(ignored);
  });
  unsigned char len[4];
  std::string body;
  co_await asio::async_write(*sock, asio::buffer(claim), asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) co_await asio::async_read(*sock, asio::buffer(len), asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) {
    uint32_t n =
        (uint32_t(len[0]) << 24) | (uint32_t(len[1]) << 16) | (uint32_t(len[2]) << 8) | uint32_t(len[3]);
    if (n > (1u << 20))
      ec = asio::error::message_size;
    else
      body.resize(n);
  }
  if (!ec)
    co_await asio::async_read(*sock, asio::buffer(body), asio::redirect_error(asio::use_awaitable, ec));
  deadline.cancel();
  if (ec) {
    out.error = relayError(ErrorCode::Unavailable, "the scheduler of environment " + env +
                                                       " did not answer the claim: " + ec.message());
    co_return out;
  }
  nlohmann::json answer = nlohmann::json::parse(body, nullptr, false);
  std::string type = answer.is_object() ? answer.value("type", std::string()) : std::string();
  if (type == "refused") {
    out.error = relayError(ErrorCode::Conflict,
                           answer.value("message", std::string("the scheduler refused the claim")));
    co_return out;
  }
  if (type == "standby") {
    out.standby = true;
    out.standbyFrame = std::string(reinterpret_cast<const char*>(len), 4) + body;
  } else if (type != "claimed") {
    out.error =
        relayError(ErrorCode::Internal, "the scheduler answered the claim with an unexpected frame: " + body);
    co_return out;
  }
  out.scheduler = std::move(sock);
  co_return out;
}

} // namespace inm::api

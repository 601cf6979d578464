// Private to api/: the external agent relay (docs/deploy.md "External agents"). `GET /api/v2/agent/connect
// ?environment=ENV&agents=A,B&holder=TEXT` with `Upgrade: inmanta-executor` is authenticated (a token of
// client type `agent` scoped to ENV when auth is on), its claim is forwarded to ENV's scheduler over the
// scheduler's Unix socket, and on `claimed` the server answers 101 and splices bytes between the two sockets
// until either closes. Invariant: the server never reads or changes a relayed byte; a refusal is an HTTP
// error naming the cause.
#pragma once

#include "Request.h"
#include "api/HttpServer.h"
#include "api/Splice.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>

#include <memory>
#include <optional>
#include <string>

namespace inm::api {

/// Whether `raw` asks for the agent relay (its path, whatever the method: the relay answers a wrong one).
bool isAgentConnect(const http::request<http::string_body>& raw);

/// The outcome of the claim: an error reply, or the scheduler connection (claim granted, or kept as a
/// standby: the scheduler sends its `standby` frame and later `primary` through the relay).
struct AgentClaim {
  std::optional<Reply> error;
  std::unique_ptr<asio::local::stream_protocol::socket> scheduler;
  bool standby = false;
  std::string standbyFrame; ///< the scheduler's `standby` frame (length prefix included), relayed as is
};

/// Short TCP keepalive on a relayed connection: a peer that vanished without closing (a network cut) is
/// noticed within about 6 s, and the relay closes both sides, so the scheduler drops it as primary or
/// standby.
void relayKeepalive(int fd);

/// Authenticates and forwards the claim of `raw` (from `peer`) to the environment's scheduler.
asio::awaitable<AgentClaim> claimAgents(asio::io_context& io, const HttpOptions& opts,
                                        const http::request<http::string_body>& raw, std::string peer);

/// Answers 101, forwards bytes `buffer` already holds, then splices `stream` and `scheduler` until one
/// closes.
/// A standby's 101 carries `Inmanta-Agent-Role: standby` and its `standby` frame follows at once; the agent
/// waits for `primary` (docs/deploy.md "Failover").
template <typename Stream>
asio::awaitable<void> relayAgent(Stream& stream, boost::beast::flat_buffer& buffer,
                                 asio::local::stream_protocol::socket& scheduler,
                                 const std::string& standbyFrame = "") {
  namespace beast = boost::beast;
  http::response<http::empty_body> res{http::status::switching_protocols, 11};
  res.set(http::field::server, "inmanta-cpp");
  res.set(http::field::upgrade, "inmanta-executor");
  res.set(http::field::connection, "Upgrade");
  res.set("Inmanta-Agent-Role", standbyFrame.empty() ? "primary" : "standby");
  boost::system::error_code ec;
  co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  auto& tcp = beast::get_lowest_layer(stream);
  tcp.expires_never();
  relayKeepalive(tcp.socket().native_handle());
  if (!standbyFrame.empty()) {
    co_await asio::async_write(stream, asio::buffer(standbyFrame),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
  if (buffer.size() > 0) {
    co_await asio::async_write(scheduler, buffer.data(), asio::redirect_error(asio::use_awaitable, ec));
    buffer.consume(buffer.size());
    if (ec) co_return;
  }
  co_await splice(stream, scheduler, [&] {
    boost::system::error_code ignored;
    tcp.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    tcp.socket().close(ignored);
    scheduler.close(ignored);
  });
}

} // namespace inm::api

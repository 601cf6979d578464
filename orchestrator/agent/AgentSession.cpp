// The external agent process (include/agent/Agent.h): the upgrade request, the standby wait, the session
// that pumps bytes between the (plain or TLS) server connection and an AgentRouter behind a socketpair, and
// the retry loop. When another process holds the agents the server answers `Inmanta-Agent-Role: standby`:
// this process then waits, connected, for the scheduler's `primary` frame (docs/deploy.md "Failover") before
// the session starts. A lost connection or a refused claim is retried with exponential backoff (1 s doubling
// to 30 s); a bad request or a rejected token ends the process with code 1. SIGTERM/SIGINT drain the current
// session (no new work; running actions get up to the shutdown grace, the rest is answered `unavailable`;
// every answer reaches the server) and end with 0. Invariant: log lines go to stderr, one per event.
#include "AgentRouter.h"
#include "agent/Agent.h"
#include "api/Splice.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <signal.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace inm::agent {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;

std::atomic<bool> gStop{false};
extern "C" void onStopSignal(int) { gStop = true; }

void say(const std::string& msg) {
  auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  std::fprintf(stderr, "%s inmanta agent: %s\n", buf, msg.c_str());
  std::fflush(stderr);
}

/// How one connection attempt ended.
struct Attempt {
  enum Kind { Session, Retry, Fatal } kind = Retry;
  std::string message;
};

std::string percentEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += char(c);
    else
      out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

/// Short TCP keepalive: a server that vanished without closing is noticed within about half a minute.
void enableKeepalive(int fd) {
  int on = 1, idle = 10, interval = 5, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

/// A standby's wait (docs/deploy.md "Failover"): frames from the scheduler are read off `buffer`/`stream`
/// until `primary`; `standby` is logged. Returns "" once promoted (bytes after the frame stay in `buffer`),
/// or why the wait ended (the connection closed, a stop signal, a frame this agent does not know).
template <typename Stream>
asio::awaitable<std::string> awaitPromotion(Stream& stream, beast::flat_buffer& buffer,
                                            const std::string& agentList) {
  auto& lowest = beast::get_lowest_layer(stream);
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer tick(ex);
  std::function<void(boost::system::error_code)> onTick = [&](boost::system::error_code e) {
    if (e) return;
    if (gStop) {
      boost::system::error_code ignored;
      lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
      lowest.socket().close(ignored);
      return;
    }
    tick.expires_after(std::chrono::milliseconds(200));
    tick.async_wait(onTick);
  };
  onTick({});
  std::string result;
  for (;;) {
    auto bytes = [&] { return static_cast<const unsigned char*>(buffer.data().data()); };
    size_t need = 4; // the length prefix, then the frame it announces
    if (buffer.size() >= 4)
      need +=
          (size_t(bytes()[0]) << 24) | (size_t(bytes()[1]) << 16) | (size_t(bytes()[2]) << 8) | bytes()[3];
    if (buffer.size() >= 4 && need == 4) {
      result = "the server sent an empty frame while standby";
      break;
    }
    if (need > (1u << 20) + 4) {
      result = "the server sent a standby frame of " + std::to_string(need) + " bytes";
      break;
    }
    if (buffer.size() < need) {
      boost::system::error_code ec;
      size_t n = co_await stream.async_read_some(buffer.prepare(std::max<size_t>(need - buffer.size(), 512)),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      buffer.commit(n);
      if (ec) {
        result = gStop ? "stopped while standby" : "the connection closed while standby: " + ec.message();
        break;
      }
      continue;
    }
    std::string body(reinterpret_cast<const char*>(bytes()) + 4, need - 4);
    buffer.consume(need);
    auto frame = nlohmann::json::parse(body, nullptr, false);
    std::string type = frame.is_object() ? frame.value("type", std::string()) : std::string();
    if (type == "standby") {
      std::string primary = frame.value("primary", std::string());
      say("standby for agent(s) " + agentList + (primary.empty() ? "" : " (primary: " + primary + ")") +
          "; waiting to be promoted");
      continue;
    }
    if (type == "primary") {
      say("promoted: this process is now primary for agent(s) " + agentList);
      break;
    }
    result = "the server sent an unexpected frame while standby: " + body.substr(0, 200);
    break;
  }
  tick.cancel();
  co_return result;
}

/// The upgrade request, the 101 answer, then the session until either side closes.
template <typename Stream>
asio::awaitable<Attempt> runSession(Stream& stream, const AgentOptions& o) {
  auto& lowest = beast::get_lowest_layer(stream);
  char hostName[256] = "unknown-host";
  gethostname(hostName, sizeof hostName - 1);
  std::string agentList;
  for (const auto& a : o.agents) agentList += (agentList.empty() ? "" : ",") + a;
  std::string holder = std::string(hostName) + " pid " + std::to_string(::getpid());
  std::string target = "/api/v2/agent/connect?environment=" + percentEncode(o.environment) +
                       "&agents=" + percentEncode(agentList) + "&holder=" + percentEncode(holder);
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, o.host);
  req.set(http::field::user_agent, "inmanta-agent");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::upgrade, "inmanta-executor");
  if (!o.token.empty()) req.set(http::field::authorization, "Bearer " + o.token);
  boost::system::error_code ec;
  lowest.expires_after(std::chrono::seconds(30));
  co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Attempt{Attempt::Retry, "sending the connect request failed: " + ec.message()};
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Attempt{Attempt::Retry, "reading the server's answer failed: " + ec.message()};
  const auto& res = parser.get();
  int status = res.result_int();
  if (status != 101) {
    std::string message = res.body();
    auto j = nlohmann::json::parse(message, nullptr, false);
    if (j.is_object() && j.contains("message") && j["message"].is_string())
      message = j["message"].get<std::string>();
    std::string text = "the server refused the connection (HTTP " + std::to_string(status) + "): " + message;
    // A bad request or a rejected token does not get better by retrying; a held agent or a missing scheduler
    // may.
    bool fatal = status == 400 || status == 401 || status == 403 || status == 404 || status == 405;
    co_return Attempt{fatal ? Attempt::Fatal : Attempt::Retry, text};
  }
  lowest.expires_never();
  enableKeepalive(lowest.socket().native_handle());
  if (res["Inmanta-Agent-Role"] == "standby") {
    // Another process holds the agent(s): wait, connected, until the scheduler promotes this one.
    std::string why = co_await awaitPromotion(stream, buffer, agentList);
    if (!why.empty()) co_return Attempt{Attempt::Session, why};
  }

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    co_return Attempt{Attempt::Retry, std::string("socketpair failed: ") + std::strerror(errno)};
  auto ex = co_await asio::this_coro::executor;
  local::socket hostSide(ex);
  hostSide.assign(local(), pair[0]);
  say("connected to " + o.host + ":" + std::to_string(o.port) + "; holding agent(s) " + agentList +
      " of environment " + o.environment);
  executor::ExecutorOptions executorOptions;
  executorOptions.threads = o.threads;
  auto router = std::make_shared<AgentRouter>(ex, executorOptions, o.codeDir, say);
  router->setShutdownGrace(o.shutdownGrace);
  local::socket routerSide(ex);
  routerSide.assign(local(), pair[1]);
  bool routerDone = false;
  asio::steady_timer routerFinished(ex, std::chrono::steady_clock::time_point::max());
  asio::co_spawn(ex, router->run(std::move(routerSide)), [&](std::exception_ptr) {
    routerDone = true;
    routerFinished.cancel();
  });
  bool closed = false;
  bool halfClosed = false;
  asio::steady_timer lastWords(ex);
  auto closeNow = [&] {
    if (closed) return;
    closed = true;
    lastWords.cancel();
    boost::system::error_code ignored;
    lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest.socket().close(ignored);
    hostSide.shutdown(local::socket::shutdown_both, ignored);
    hostSide.close(ignored);
  };
  // After a drain the router's direction ends first: end ours towards the server too, but keep reading until
  // the server closes, so the answers are read there before the connection goes (closing with unread input
  // would reset it). A server that does not close within 10 s is cut off.
  auto closeBoth = [&] {
    if (closed) return;
    if (!halfClosed && router->drained()) {
      halfClosed = true;
      boost::system::error_code ignored;
      lowest.socket().shutdown(tcp::socket::shutdown_send, ignored);
      lastWords.expires_after(std::chrono::seconds(10));
      lastWords.async_wait([&](boost::system::error_code e) {
        if (!e) closeNow();
      });
      return;
    }
    closeNow();
  };
  // A stop signal drains the session (router->drain): no new work, the running actions finish within the
  // grace and every answer reaches the server. Checked on a short tick; a session that does not end within
  // the grace plus 20 s is cut off.
  asio::steady_timer tick(ex);
  bool draining = false;
  auto drainStarted = std::chrono::steady_clock::now();
  std::function<void(boost::system::error_code)> onTick = [&](boost::system::error_code e) {
    if (e || closed) return;
    if (gStop && !draining) {
      draining = true;
      drainStarted = std::chrono::steady_clock::now();
      router->drain(o.shutdownGrace, "stop signal");
    }
    if (draining &&
        std::chrono::steady_clock::now() - drainStarted > o.shutdownGrace + std::chrono::seconds(20)) {
      say("the session did not end within the shutdown grace plus 20 s; closing it");
      return closeNow();
    }
    tick.expires_after(std::chrono::milliseconds(200));
    tick.async_wait(onTick);
  };
  onTick({});
  if (buffer.size() > 0) { // protocol bytes that arrived with the 101 answer
    co_await asio::async_write(hostSide, buffer.data(), asio::redirect_error(asio::use_awaitable, ec));
    buffer.consume(buffer.size());
  }
  co_await api::splice(stream, hostSide, closeBoth);
  closeNow();
  tick.cancel();
  if (!routerDone) co_await routerFinished.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return Attempt{Attempt::Session, "the connection to the server closed"};
}

asio::awaitable<Attempt> connectOnce(const AgentOptions& o, ssl::context* tls) {
  auto ex = co_await asio::this_coro::executor;
  boost::system::error_code ec;
  tcp::resolver resolver(ex);
  auto endpoints = co_await resolver.async_resolve(o.host, std::to_string(o.port),
                                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Attempt{Attempt::Retry, "cannot resolve " + o.host + ": " + ec.message()};
  std::string where = o.host + ":" + std::to_string(o.port);
  if (!tls) {
    beast::tcp_stream stream(ex);
    stream.expires_after(std::chrono::seconds(10));
    co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return Attempt{Attempt::Retry, "cannot connect to " + where + ": " + ec.message()};
    co_return co_await runSession(stream, o);
  }
  beast::ssl_stream<beast::tcp_stream> stream(ex, *tls);
  auto& lowest = beast::get_lowest_layer(stream);
  lowest.expires_after(std::chrono::seconds(10));
  co_await lowest.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Attempt{Attempt::Retry, "cannot connect to " + where + ": " + ec.message()};
  SSL_set_tlsext_host_name(stream.native_handle(), o.host.c_str());
  stream.set_verify_callback(ssl::host_name_verification(o.host));
  co_await stream.async_handshake(ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Attempt{Attempt::Fatal, "TLS handshake with " + where + " failed: " + ec.message()};
  co_return co_await runSession(stream, o);
}

} // namespace

int runAgent(const AgentOptions& o) {
  std::optional<ssl::context> tls;
  if (o.ssl) {
    tls.emplace(ssl::context::tls_client);
    boost::system::error_code ec;
    tls->set_verify_mode(ssl::verify_peer, ec);
    if (!o.caCert.empty())
      tls->load_verify_file(o.caCert, ec);
    else
      tls->set_default_verify_paths(ec);
    if (ec) {
      std::cerr << "inmanta agent: cannot load the CA certificate " << o.caCert << ": " << ec.message()
                << "\n";
      return 2;
    }
  }

  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  int backoff = 1;
  while (!gStop) {
    asio::io_context ioc;
    Attempt result;
    asio::co_spawn(ioc, connectOnce(o, tls ? &*tls : nullptr), [&](std::exception_ptr e, Attempt a) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          a = Attempt{Attempt::Retry, std::string("internal error: ") + x.what()};
        }
      }
      result = std::move(a);
    });
    ioc.run();
    if (result.kind == Attempt::Fatal) {
      say(result.message + "; not retrying");
      return 1;
    }
    if (gStop) break;
    if (result.kind == Attempt::Session) backoff = 1;
    say(result.message + "; retrying in " + std::to_string(backoff) + " s");
    for (int i = 0; i < backoff * 10 && !gStop; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (result.kind != Attempt::Session) backoff = std::min(30, backoff * 2);
  }
  say("stopped");
  return 0;
}

} // namespace inm::agent

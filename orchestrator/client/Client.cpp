// The HTTP transport of client::Client (see include/client/Client.h): one io_context owned by the client, one
// coroutine per connection slot, Beast for HTTP/1.1 and OpenSSL for TLS. Blocking calls run the io_context
// until their coroutines finish. Invariant: Beast/Asio errors are error codes here (redirect_error), never
// exceptions, and each becomes one llvm::Error naming host:port and the request.
#include "client/Client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <llvm/Support/raw_ostream.h>

#include <limits>

namespace inm::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

char HttpError::ID = 0;

void HttpError::log(llvm::raw_ostream& os) const {
  os << message << " (HTTP " << status << ", " << where << ")";
}

Failure takeFailure(llvm::Error err) {
  Failure f;
  llvm::handleAllErrors(
      std::move(err),
      [&](const HttpError& e) {
        f.status = e.status;
        f.message = e.message;
        llvm::raw_string_ostream os(f.text);
        e.log(os);
      },
      [&](const llvm::ErrorInfoBase& e) {
        f.message = e.message();
        f.text = f.message;
      });
  return f;
}

llvm::Expected<nlohmann::json> Response::json() const {
  if (body.empty()) return nlohmann::json();
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the server's answer is not JSON: %s",
                                   body.substr(0, 200).c_str());
  return j;
}

namespace {

/// One connection slot: closed, plain TCP or TLS.
struct Conn {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  bool open() const { return plain || tls; }
  beast::tcp_stream& lowest() { return plain ? *plain : beast::get_lowest_layer(*tls); }
  void close() {
    error_code ec;
    if (open()) lowest().socket().close(ec);
    plain.reset();
    tls.reset();
    buffer.clear();
  }
};

/// What one exchange produced: an answer or an error text; `retry` when a reused connection failed before
/// any answer arrived (the server had closed it), so a fresh connection may try again.
struct Outcome {
  bool ok = false;
  unsigned status = 0;
  std::string reason;
  std::string body;
  std::string contentEncoding;
  std::string error;
  bool retry = false;
};

std::string describe(const error_code& ec) { return ec.message(); }

} // namespace

struct Client::Impl {
  asio::io_context ioc;
  ssl::context tlsContext{ssl::context::tls_client};
  bool tlsConfigured = false;
  std::string tlsError;
  std::vector<Conn> conns;

  /// Loads the CA (once): `caCertFile`, else the system's default store.
  void configureTls(const Endpoint& ep) {
    if (tlsConfigured) return;
    tlsConfigured = true;
    error_code ec;
    tlsContext.set_verify_mode(ssl::verify_peer, ec);
    if (!ep.caCertFile.empty()) {
      tlsContext.load_verify_file(ep.caCertFile, ec);
      if (ec) tlsError = "cannot load the CA certificate " + ep.caCertFile + ": " + describe(ec);
    } else {
      tlsContext.set_default_verify_paths(ec);
    }
  }

  asio::awaitable<std::string> connect(const Endpoint& ep, Conn& c) {
    error_code ec;
    auto ex = co_await asio::this_coro::executor;
    tcp::resolver resolver(ex);
    auto results = co_await resolver.async_resolve(ep.host, std::to_string(ep.port),
                                                   asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return "cannot resolve " + ep.host + ": " + describe(ec);
    if (ep.ssl) {
      configureTls(ep);
      if (!tlsError.empty()) co_return tlsError;
      c.tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ex, tlsContext);
    } else {
      c.plain = std::make_unique<beast::tcp_stream>(ex);
    }
    c.lowest().expires_after(ep.timeout);
    co_await c.lowest().async_connect(results, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      c.close();
      co_return "cannot connect to " + ep.address() + ": " + describe(ec);
    }
    if (c.tls) {
      if (!SSL_set_tlsext_host_name(c.tls->native_handle(), ep.host.c_str())) {
        c.close();
        co_return "cannot set the TLS server name " + ep.host;
      }
      c.tls->set_verify_callback(ssl::host_name_verification(ep.host));
      c.lowest().expires_after(ep.timeout);
      co_await c.tls->async_handshake(ssl::stream_base::client,
                                      asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        c.close();
        co_return "TLS handshake with " + ep.address() + " failed: " + describe(ec);
      }
    }
    co_return std::string();
  }

  template <class Stream>
  asio::awaitable<void> roundTrip(Stream& s, Conn& c, const Endpoint& ep,
                                  http::request<http::string_body>& req, bool reused, Outcome& out) {
    error_code ec;
    c.lowest().expires_after(ep.timeout);
    co_await http::async_write(s, req, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      out.retry = reused;
      out.error =
          (ec == beast::error::timeout ? "timed out after " + std::to_string(ep.timeout.count()) + " s"
                                       : describe(ec)) +
          " while sending to " + ep.address();
      co_return;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    c.lowest().expires_after(ep.timeout);
    co_await http::async_read(s, c.buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      out.retry = reused && !parser.got_some();
      out.error =
          (ec == beast::error::timeout ? "no answer within " + std::to_string(ep.timeout.count()) + " s"
                                       : describe(ec)) +
          " from " + ep.address();
      co_return;
    }
    auto& res = parser.get();
    out.ok = true;
    out.status = res.result_int();
    out.reason = std::string(res.reason());
    out.contentEncoding = std::string(res[http::field::content_encoding]);
    out.body = std::move(res.body());
    if (!res.keep_alive()) c.close();
  }

  asio::awaitable<Outcome> exchange(const Endpoint& ep, Conn& c, http::request<http::string_body>& req) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool reused = c.open();
      if (!reused) {
        std::string err = co_await connect(ep, c);
        if (!err.empty()) {
          Outcome o;
          o.error = err;
          co_return o;
        }
      }
      Outcome o;
      if (c.tls)
        co_await roundTrip(*c.tls, c, ep, req, reused, o);
      else
        co_await roundTrip(*c.plain, c, ep, req, reused, o);
      if (!o.ok) c.close();
      if (o.ok || !o.retry) co_return o;
    }
    Outcome o;
    o.error = "the connection to " + ep.address() + " was closed twice before an answer";
    co_return o;
  }
};

namespace {

std::string encodeQuery(const Query& query) {
  std::string s;
  for (const auto& [k, v] : query) {
    s += s.empty() ? '?' : '&';
    s += encodeSegment(k);
    s += '=';
    s += encodeSegment(v);
  }
  return s;
}

http::request<http::string_body> buildRequest(const Endpoint& ep, const Request& r) {
  http::request<http::string_body> req;
  req.version(11);
  req.method_string(r.method);
  req.target(r.path + encodeQuery(r.query));
  req.set(http::field::host, ep.host);
  req.set(http::field::user_agent, "inmanta-cpp-client/0.1");
  req.set(http::field::accept_encoding, "gzip");
  req.keep_alive(true);
  if (!ep.token.empty()) req.set(http::field::authorization, "Bearer " + ep.token);
  if (r.tenant && !ep.environment.empty()) req.set("X-Inmanta-tid", ep.environment);
  if (!r.body.empty()) {
    req.set(http::field::content_type, "application/json");
    if (r.gzipped) {
      req.set(http::field::content_encoding, "gzip");
      req.body() = r.body;
    } else if (r.body.size() >= 1024) {
      req.set(http::field::content_encoding, "gzip");
      req.body() = gzip(r.body, r.body.size() > (1u << 20) ? 1 : 6);
    } else {
      req.body() = r.body;
    }
  }
  req.prepare_payload();
  return req;
}

/// Turns an outcome into a Response or an error.
llvm::Expected<Response> finish(const Endpoint& ep, const Request& r, Outcome o) {
  std::string where = r.method + " " + r.path + " on " + ep.address();
  if (!o.ok)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s (%s %s)", o.error.c_str(),
                                   r.method.c_str(), r.path.c_str());
  if (o.contentEncoding == "gzip") {
    auto plain = gunzip(o.body);
    if (!plain) return plain.takeError();
    o.body = std::move(*plain);
  }
  if (o.status != 200) {
    std::string message;
    auto j = nlohmann::json::parse(o.body, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("message") && j["message"].is_string())
      message = j["message"].get<std::string>();
    else
      message = o.body.empty() ? o.reason : o.body.substr(0, 300);
    if (message.empty()) message = "HTTP " + std::to_string(o.status);
    return llvm::make_error<HttpError>(o.status, message, where);
  }
  Response res;
  res.status = o.status;
  res.body = std::move(o.body);
  return res;
}

} // namespace

Client::Client(Endpoint endpoint) : endpoint_(std::move(endpoint)), impl_(std::make_unique<Impl>()) {
  impl_->conns.resize(1);
}

Client::~Client() {
  for (Conn& c : impl_->conns) c.close();
}

llvm::Expected<Response> Client::send(const Request& request) {
  auto req = buildRequest(endpoint_, request);
  Outcome result;
  Impl& impl = *impl_;
  asio::co_spawn(
      impl.ioc,
      [&]() -> asio::awaitable<void> { result = co_await impl.exchange(endpoint_, impl.conns[0], req); },
      asio::detached);
  impl.ioc.restart();
  impl.ioc.run();
  return finish(endpoint_, request, std::move(result));
}

llvm::Expected<nlohmann::json> Client::call(const std::string& method, const std::string& path,
                                            const nlohmann::json* body, const Query& query) {
  Request r;
  r.method = method;
  r.path = path;
  r.query = query;
  if (body) r.body = body->dump();
  auto res = send(r);
  if (!res) return res.takeError();
  return res->json();
}

llvm::Error Client::sendAll(const std::vector<Request>& requests, unsigned parallel) {
  Impl& impl = *impl_;
  parallel = std::max(1u, std::min<unsigned>(parallel, unsigned(requests.size())));
  if (impl.conns.size() < parallel) impl.conns.resize(parallel);
  size_t next = 0;
  std::optional<std::pair<size_t, Outcome>> firstFailure;
  for (unsigned w = 0; w < parallel; ++w) {
    asio::co_spawn(
        impl.ioc,
        [&, w]() -> asio::awaitable<void> {
          while (next < requests.size()) {
            size_t i = next++;
            auto req = buildRequest(endpoint_, requests[i]);
            Outcome o = co_await impl.exchange(endpoint_, impl.conns[w], req);
            if ((!o.ok || o.status != 200) && (!firstFailure || firstFailure->first > i))
              firstFailure.emplace(i, std::move(o));
          }
        },
        asio::detached);
  }
  impl.ioc.restart();
  impl.ioc.run();
  if (!firstFailure) return llvm::Error::success();
  auto res = finish(endpoint_, requests[firstFailure->first], std::move(firstFailure->second));
  return res ? llvm::Error::success() : res.takeError();
}

} // namespace inm::client

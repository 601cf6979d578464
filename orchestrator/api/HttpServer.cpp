// The HTTP server (see HttpServer.h): accept loop, one coroutine per connection (plain or TLS), request
// decoding (raw path split on '/', segments percent-decoded; query; gzip; JSON whatever the Content-Type),
// authentication, dispatch to the route table and JSON error bodies. Route handlers live in Routes*.cpp.
#include "api/HttpServer.h"

#include "AgentRelay.h"
#include "Auth.h"
#include "Authz.h"
#include "Request.h"
#include "model/JsonNumbers.h"
#include "model/QueryParams.h"
#include "service/Log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <malloc.h>
#include <optional>
#include <sstream>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

namespace inm::api {

namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using model::ErrorCode;

namespace {

/// Inflates a gzip or zlib body; false when it is corrupt or larger than `limit`.
bool inflateBody(const std::string& in, std::string& out, uint64_t limit, std::string& error) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    error = "cannot initialise zlib";
    return false;
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = uInt(in.size());
  char buf[65536];
  int rc = Z_OK;
  out.clear();
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      error = "the gzip request body is corrupt";
      inflateEnd(&zs);
      return false;
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > limit) {
      error = "the decompressed request body exceeds max_request_size";
      inflateEnd(&zs);
      return false;
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      error = "the gzip request body is truncated";
      inflateEnd(&zs);
      return false;
    }
  }
  inflateEnd(&zs);
  return true;
}

/// Inflates gzip/zlib file `in` into file `out` in chunks; false (with `error`) when corrupt, truncated or
/// larger than `limit`.
bool inflateFile(const std::string& in, const std::string& out, uint64_t limit, std::string& error) {
  std::ifstream src(in, std::ios::binary);
  std::ofstream dst(out, std::ios::binary | std::ios::trunc);
  if (!src || !dst) {
    error = "cannot read the spooled request body";
    return false;
  }
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    error = "cannot initialise zlib";
    return false;
  }
  std::vector<char> inBuf(1 << 16), outBuf(1 << 16);
  uint64_t total = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0) {
      src.read(inBuf.data(), std::streamsize(inBuf.size()));
      zs.avail_in = uInt(src.gcount());
      zs.next_in = reinterpret_cast<Bytef*>(inBuf.data());
      if (zs.avail_in == 0) {
        error = "the gzip request body is truncated";
        inflateEnd(&zs);
        return false;
      }
    }
    zs.next_out = reinterpret_cast<Bytef*>(outBuf.data());
    zs.avail_out = uInt(outBuf.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      error = "the gzip request body is corrupt";
      inflateEnd(&zs);
      return false;
    }
    size_t n = outBuf.size() - zs.avail_out;
    total += n;
    if (total > limit) {
      error = "the decompressed request body exceeds max_request_size";
      inflateEnd(&zs);
      return false;
    }
    dst.write(outBuf.data(), std::streamsize(n));
  }
  inflateEnd(&zs);
  dst.close();
  if (!dst) {
    error = "cannot write the decompressed request body";
    return false;
  }
  return true;
}

/// Temporary files of one request, removed with it.
struct SpoolFiles {
  std::vector<std::string> paths;
  SpoolFiles() = default;
  SpoolFiles(const SpoolFiles&) = delete;
  SpoolFiles& operator=(const SpoolFiles&) = delete;
  ~SpoolFiles() {
    for (const auto& p : paths) ::unlink(p.c_str());
  }
  /// The directory of spool files: $TMPDIR (or /tmp).
  static std::filesystem::path dir() {
    std::error_code ec;
    std::filesystem::path d = std::filesystem::temp_directory_path(ec);
    return ec ? std::filesystem::path("/tmp") : d;
  }
  int lastErrno = 0; ///< errno of the last make() that failed
  /// A new empty file inmanta-body-<server pid>-XXXXXX; "" when it cannot be created (errno in lastErrno).
  std::string make() {
    std::string tmpl = (dir() / ("inmanta-body-" + std::to_string(::getpid()) + "-XXXXXX")).string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
      lastErrno = errno;
      return std::string();
    }
    ::close(fd);
    paths.push_back(tmpl);
    return tmpl;
  }
};

/// Removes the spool files a killed server left (an upload in flight at SIGKILL): those whose pid names no
/// living process. A living server's files (other servers share $TMPDIR) and foreign files are kept.
void removeStaleSpoolFiles() {
  std::error_code ec;
  const std::string prefix = "inmanta-body-";
  for (std::filesystem::directory_iterator it(SpoolFiles::dir(), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    size_t dash = name.find('-', prefix.size());
    if (dash == std::string::npos || dash == prefix.size()) continue;
    pid_t pid = static_cast<pid_t>(std::atol(name.substr(prefix.size(), dash - prefix.size()).c_str()));
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    if (std::filesystem::remove(it->path(), rm))
      service::logLine("info", "stale_request_file_removed", {{"path", it->path().string()}});
  }
}

std::string contentTypeFor(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".html") return "text/html";
  if (ext == ".js" || ext == ".mjs") return "application/javascript";
  if (ext == ".css") return "text/css";
  if (ext == ".json") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".woff") return "font/woff";
  if (ext == ".ttf") return "font/ttf";
  if (ext == ".map" || ext == ".txt") return "text/plain";
  return "application/octet-stream";
}

Reply errorReply(ErrorCode code, const std::string& message) {
  Reply r;
  r.status = model::httpStatus(code);
  r.json = nlohmann::json{{"message", message}};
  return r;
}

/// The 400 for an integer too wide for 64 bits (model/JsonNumbers.h), with the resource's id when the
/// integer is inside a put_version resource that has one.
std::string wideIntegerMessage(const nlohmann::json& body, const model::WideInteger& wide) {
  std::string id;
  if (wide.path.rfind("resources[", 0) == 0) {
    try {
      const nlohmann::json& r = body.at("resources").at(std::stoul(wide.path.substr(10)));
      if (r.contains("id") && r["id"].is_string()) id = r["id"].get<std::string>();
    } catch (const std::exception&) {
    }
  }
  return model::wideIntegerMessage(wide, id);
}

} // namespace

struct HttpServer::Impl {
  Impl(asio::io_context& io, service::Service& svc, HttpOptions opts)
      : io(io), svc(svc), opts(std::move(opts)), acceptor(io) {}

  asio::io_context& io;
  service::Service& svc;
  HttpOptions opts;
  std::vector<Route> routes;
  tcp::acceptor acceptor;
  std::optional<ssl::context> tls;
  size_t inFlight = 0;
  bool stopping = false;
  std::function<void()> onDrained;

  void checkDrained() {
    if (stopping && inFlight == 0 && onDrained) {
      auto f = std::move(onDrained);
      onDrained = nullptr;
      f();
    }
  }

  asio::awaitable<void> acceptLoop() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket sock = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (stopping || ec == asio::error::operation_aborted) co_return;
        continue;
      }
      if (tls)
        asio::co_spawn(io, serveTls(std::move(sock)), asio::detached);
      else
        asio::co_spawn(io, servePlain(std::move(sock)), asio::detached);
    }
  }

  asio::awaitable<void> servePlain(tcp::socket sock) {
    beast::tcp_stream stream(std::move(sock));
    beast::flat_buffer buffer;
    try {
      co_await serve(stream, buffer);
    } catch (const std::exception& e) {
      service::logLine("error", "connection_error", {{"message", e.what()}});
      checkDrained();
    }
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  asio::awaitable<void> serveTls(tcp::socket sock) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(sock)), *tls);
    beast::flat_buffer buffer;
    boost::system::error_code ec;
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    co_await stream.async_handshake(ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    try {
      co_await serve(stream, buffer);
    } catch (const std::exception& e) {
      service::logLine("error", "connection_error", {{"message", e.what()}});
      checkDrained();
    }
    co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
  }

  /// Writes `reply`; false when the connection cannot carry another request (a streamed body that failed
  /// or a write error).
  template <typename Stream>
  asio::awaitable<bool> writeReply(Stream& stream, const Reply& reply, unsigned version, bool keepAlive,
                                   bool head) {
    if (reply.stream) co_return co_await writeStreamed(stream, reply, version, keepAlive, head);
    http::response<http::string_body> res{static_cast<http::status>(reply.status), version};
    res.set(http::field::server, "inmanta-cpp");
    res.set(http::field::content_type, reply.json ? std::string("application/json") : reply.contentType);
    if (reply.json) // messages may quote request bytes: never throw on invalid UTF-8
      res.body() = reply.json->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    else
      res.body() = reply.raw;
    res.keep_alive(keepAlive);
    res.prepare_payload();
    boost::system::error_code ec;
    if (head) {
      // A HEAD answer announces the length but carries no body.
      http::response<http::empty_body> h{res.result(), version};
      for (const auto& f : res) h.set(f.name_string(), f.value());
      co_await http::async_write(stream, h, asio::redirect_error(asio::use_awaitable, ec));
      co_return !ec;
    }
    co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    co_return !ec;
  }

  /// A body produced in pieces (service/BodyStream.h): each piece is one HTTP/1.1 chunk, written before the
  /// next is asked for. A failure after the header ends the connection without the last chunk, so the client
  /// sees a truncated transfer; it is logged. HTTP/1.0 has no chunks: the body ends with the connection.
  template <typename Stream>
  asio::awaitable<bool> writeStreamed(Stream& stream, const Reply& reply, unsigned version, bool keepAlive,
                                      bool head) {
    bool chunked = version >= 11;
    http::response<http::empty_body> res{static_cast<http::status>(reply.status), version};
    res.set(http::field::server, "inmanta-cpp");
    res.set(http::field::content_type, reply.contentType);
    res.keep_alive(keepAlive && chunked);
    res.chunked(chunked);
    http::response_serializer<http::empty_body> header{res};
    boost::system::error_code ec;
    co_await http::async_write_header(stream, header, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || head) co_return !ec && chunked;
    for (;;) {
      llvm::Expected<std::string> piece = co_await reply.stream->next();
      if (!piece) {
        auto [code, message] = model::describe(piece.takeError());
        service::logLine("error", "answer_stream_failed",
                         {{"status", std::to_string(model::httpStatus(code))}, {"message", message}});
        co_return false;
      }
      if (piece->empty()) break;
      if (chunked)
        co_await asio::async_write(stream, http::make_chunk(asio::buffer(*piece)),
                                   asio::redirect_error(asio::use_awaitable, ec));
      else
        co_await asio::async_write(stream, asio::buffer(*piece),
                                   asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return false;
    }
    if (!chunked) co_return false;
    co_await asio::async_write(stream, http::make_chunk_last(),
                               asio::redirect_error(asio::use_awaitable, ec));
    co_return !ec;
  }

  /// Request bodies (as received) above this size are followed by a malloc_trim (see serve()).
  static constexpr size_t kTrimAfterBody = 256u << 10;

  /// Whether a request's body goes to a temporary file instead of memory: a put_version larger than
  /// spoolRequestSize (or of unknown length), which Service::putVersionFile then parses streaming.
  bool spoolable(const http::request_header<>& h, const boost::optional<uint64_t>& length) const {
    if (h.method() != http::verb::put || (length && *length <= opts.spoolRequestSize)) return false;
    std::string_view target(h.target().data(), h.target().size());
    return target.substr(0, target.find('?')) == "/api/v1/version";
  }

  /// After an early answer (413, 507) to a client that may still be sending: stop sending, then read and drop
  /// what arrives for a moment, so closing does not reset the connection before the client has read the
  /// answer.
  template <typename Stream>
  asio::awaitable<void> lingeringClose(Stream& stream) {
    auto& lowest = beast::get_lowest_layer(stream);
    boost::system::error_code ec;
    lowest.socket().shutdown(tcp::socket::shutdown_send, ec);
    lowest.expires_after(std::chrono::seconds(2));
    std::vector<char> sink(1 << 16);
    for (size_t total = 0; total < (64u << 20);) {
      size_t n =
          co_await lowest.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      total += n;
    }
  }

  /// Counts a request in flight from its header on (a shutdown waits for it); released once, at the latest
  /// when the connection's coroutine ends, also by an exception.
  struct InFlight {
    Impl& server;
    bool held = true;
    explicit InFlight(Impl& s) : server(s) { ++server.inFlight; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    /// `check` false: the caller calls checkDrained itself later (after writing the answer, so a drained
    /// shutdown never cuts an answer off).
    void release(bool check = true) {
      if (!held) return;
      held = false;
      --server.inFlight;
      if (check) server.checkDrained();
    }
    ~InFlight() { release(); }
  };

  /// Answers a request that ends its connection (Framing.h: 400 framing, 413, 431), logs it, and closes.
  template <typename Stream>
  asio::awaitable<void> refuse(Stream& stream, const FramingError& error, const char* event) {
    Reply r;
    r.status = error.status;
    r.json = nlohmann::json{{"message", error.message}};
    service::logLine("warning", event,
                     {{"status", std::to_string(error.status)}, {"message", error.message}});
    co_await writeReply(stream, r, 11, false, false);
    co_await lingeringClose(stream);
  }

  /// One connection's requests. Every exception ends the connection here, never the server (servePlain and
  /// serveTls catch what escapes).
  template <typename Stream>
  asio::awaitable<void> serve(Stream& stream, beast::flat_buffer& buffer) {
    for (;;) {
      http::request_parser<http::empty_body> head;
      configureParser(head, opts.maxRequestSize);
      boost::system::error_code ec;
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(300));
      co_await http::async_read_header(stream, buffer, head, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) { // Beast also reports an announced length over the limit here (413)
        if (auto error = framingReply(ec, opts.maxRequestSize))
          co_await refuse(stream, *error, error->status == 413 ? "request_too_large" : "bad_request_framing");
        co_return;
      }
      if (auto error = checkFraming(head.get().base())) {
        co_await refuse(stream, *error, "bad_request_framing");
        co_return;
      }
      if (head.content_length() && *head.content_length() > opts.maxRequestSize) {
        co_await refuse(stream, *framingReply(http::error::body_limit, opts.maxRequestSize),
                        "request_too_large");
        co_return;
      }
      // In flight from its header on: a shutdown waits for a body still arriving (spooling can take a while).
      InFlight inFlightGuard(*this);
      // The body: in memory, or spooled to a temporary file (removed when this request is done).
      std::optional<http::request_parser<http::string_body>> text;
      std::optional<http::request_parser<http::file_body>> spooled;
      SpoolFiles spool;
      if (spoolable(head.get().base(), head.content_length())) {
        std::string path = spool.make();
        spooled.emplace(std::move(head));
        configureParser(*spooled, opts.maxRequestSize);
        if (path.empty())
          ec = boost::system::error_code(spool.lastErrno ? spool.lastErrno : EIO,
                                         boost::system::system_category());
        else
          spooled->get().body().open(path.c_str(), beast::file_mode::write, ec);
        if (!ec) {
          co_await http::async_read(stream, buffer, *spooled, asio::redirect_error(asio::use_awaitable, ec));
          spooled->get().body().close();
        }
        // The spool file could not be made or written (a full temp dir): the client gets 507 (no space) or
        // 503 naming the cause and the directory, the server goes on; a later upload succeeds once space
        // returns.
        if (ec &&
            (ec.category() == boost::system::system_category() ||
             ec.category() == boost::system::generic_category()) &&
            (ec.value() == ENOSPC || ec.value() == EDQUOT || ec.value() == EFBIG || ec.value() == EIO ||
             ec.value() == EROFS || ec.value() == EACCES)) {
          bool full = ec.value() == ENOSPC || ec.value() == EDQUOT;
          std::string message =
              "cannot spool the request body to " + SpoolFiles::dir().string() + ": " + ec.message();
          service::logLine("error", "request_spool_failed",
                           {{"status", full ? "507" : "503"}, {"message", message}});
          Reply r;
          r.status = full ? 507 : 503;
          r.json = nlohmann::json{{"message", message}};
          co_await writeReply(stream, r, 11, false, false);
          // The client may still be sending the rest of the body: drain it before closing, or the close
          // resets the connection and the client sees a broken pipe instead of this answer.
          co_await lingeringClose(stream);
          co_return;
        }
      } else {
        text.emplace(std::move(head));
        configureParser(*text, opts.maxRequestSize);
        co_await http::async_read(stream, buffer, *text, asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec) { // a body over the limit (413), a malformed chunk (400), or the peer went away
        if (auto error = framingReply(ec, opts.maxRequestSize))
          co_await refuse(stream, *error, error->status == 413 ? "request_too_large" : "bad_request_framing");
        co_return;
      }
      const http::request_header<>& raw = spooled ? spooled->get().base() : text->get().base();
      bool keepAlive = spooled ? spooled->get().keep_alive() : text->get().keep_alive();
      if (text &&
          isAgentConnect(text->get())) { // external agents: the connection becomes a relay (AgentRelay.h)
        inFlightGuard.release(); // a relay is a long-lived connection, not a request a shutdown waits for
        boost::system::error_code pec;
        auto endpoint = beast::get_lowest_layer(stream).socket().remote_endpoint(pec);
        std::string peer =
            pec ? std::string("?") : endpoint.address().to_string(); // no temporaries in co_await
        AgentClaim claim = co_await claimAgents(io, opts, text->get(), peer);
        if (claim.error)
          co_await writeReply(stream, *claim.error, text->get().version(), false, false);
        else
          co_await relayAgent(stream, buffer, *claim.scheduler, claim.standbyFrame);
        co_return;
      }
      auto started = std::chrono::steady_clock::now();
      Reply reply = co_await handle(raw, text ? &text->get().body() : nullptr, spool);
      // A streamed body still reads the database while it is written: a shutdown waits for it too.
      if (!reply.stream) inFlightGuard.release(/*check=*/false);
      std::string target(raw.target());
      service::logLine(reply.status >= 500 ? "error" : "info", "http_request",
                       {{"method", std::string(raw.method_string())},
                        {"path", target.substr(0, target.find('?'))},
                        {"status", std::to_string(reply.status)},
                        {"ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  std::chrono::steady_clock::now() - started)
                                                  .count())}});
      bool keep = keepAlive && !stopping;
      bool large = spooled || text->get().body().size() > kTrimAfterBody;
      bool usable = co_await writeReply(stream, reply, raw.version(), keep, raw.method() == http::verb::head);
      reply.stream.reset(); // an unfinished body's producer stops (PipedBody.h)
      inFlightGuard.release(/*check=*/false);
      checkDrained();
      if (large) {
        // A large request (a version, a file batch, a stat of thousands of files) leaves its memory free in
        // the allocator's per-thread arenas; handing it back keeps the server's peak near the largest single
        // request instead of the sum over the arenas a push's requests ran in (bench/README.md "push").
        text.reset();
        spooled.reset();
        co_await svc.blocking([] { return ::malloc_trim(0); });
      }
      if (!keep || !usable) co_return;
    }
  }

  asio::awaitable<Reply> handle(const http::request_header<>& raw, const std::string* body,
                                SpoolFiles& spool) {
    Request req;
    req.method = raw.method();
    req.headers = &raw;
    Target decoded;
    if (auto bad = decodeTarget(std::string_view(raw.target().data(), raw.target().size()), decoded))
      co_return errorReply(ErrorCode::BadRequest, *bad);
    std::string path = std::move(decoded.path);
    req.segments = std::move(decoded.segments);
    req.query = std::move(decoded.query);
    req.queryAll = std::move(decoded.queryAll);
    if (!req.segments.empty() && req.segments[0] == "console" &&
        (req.method == http::verb::get || req.method == http::verb::head))
      co_return console(req);

    const Route* route = nullptr;
    bool pathMatched = false;
    for (const Route& r : routes) {
      if (r.pattern.size() != req.segments.size()) continue;
      bool match = true;
      for (size_t i = 0; i < r.pattern.size() && match; ++i) {
        const std::string& p = r.pattern[i];
        if (!(p.size() > 2 && p.front() == '<' && p.back() == '>') && p != req.segments[i]) match = false;
      }
      if (!match) continue;
      pathMatched = true;
      if (r.method != req.method) continue;
      route = &r;
      break;
    }
    if (!route) {
      if (pathMatched)
        co_return errorReply(ErrorCode::MethodNotAllowed, std::string("method ") +
                                                              std::string(raw.method_string()) +
                                                              " is not allowed on " + path);
      co_return errorReply(ErrorCode::NotFound,
                           "no API endpoint at " + std::string(raw.method_string()) + " " + path);
    }
    for (size_t i = 0; i < route->pattern.size(); ++i) {
      const std::string& p = route->pattern[i];
      if (p.size() > 2 && p.front() == '<') req.params[p.substr(1, p.size() - 2)] = req.segments[i];
    }
    try {
      if (opts.auth && route->policy.scope != Scope::Open) {
        auto h = raw.find(http::field::authorization);
        req.caller = verifyBearer(h == raw.end() ? std::string() : std::string(h->value()), opts.jwtKeys);
        if (req.caller.jti) { // revocable token: one cached lookup (service::Service::kTokenCacheTtl)
          std::string jti = *req.caller.jti;
          service::Result usable = co_await svc.tokenUsable(jti);
          if (!usable.ok) throw ApiError{usable.code, usable.message};
          if (!usable.value.get<bool>())
            throw ApiError{ErrorCode::Unauthorized, "the bearer token " + jti + " was revoked or is unknown"};
        }
        authorize(*route, req); // client types and scope: Authz.cpp's table, before any handler runs
      }
      req.body = std::make_shared<nlohmann::json>(nlohmann::json::object());
      auto enc = raw.find(http::field::content_encoding);
      bool gzip = enc != raw.end() &&
                  (beast::iequals(enc->value(), "gzip") || beast::iequals(enc->value(), "deflate"));
      if (!spool.paths.empty()) {
        // A spooled put_version: inflated file to file when compressed, then parsed streaming by the service.
        req.bodyFile = spool.paths.front();
        if (gzip) {
          std::string out = spool.make();
          if (out.empty())
            throw ApiError{ErrorCode::Internal, "cannot create a temporary file for the request body"};
          std::string error;
          uint64_t limit = opts.maxRequestSize;
          bool ok = co_await svc.blocking([&] { return inflateFile(req.bodyFile, out, limit, error); });
          if (!ok)
            throw ApiError{error.find("exceeds") != std::string::npos ? ErrorCode::PayloadTooLarge
                                                                      : ErrorCode::BadRequest,
                           error};
          req.bodyFile = out;
        }
      } else if (body && !body->empty()) {
        const std::string* text = body;
        std::string inflated;
        if (gzip) {
          std::string error;
          if (!inflateBody(*body, inflated, opts.maxRequestSize, error))
            throw ApiError{error.find("exceeds") != std::string::npos ? ErrorCode::PayloadTooLarge
                                                                      : ErrorCode::BadRequest,
                           error};
          text = &inflated;
        }
        // Large bodies are parsed on the blocking pool, not on the io_context.
        nlohmann::json parsed;
        model::WideInteger wide;
        if (text->size() > (1u << 20))
          parsed = co_await svc.blocking([text, &wide] { return model::parseJson(*text, wide); });
        else
          parsed = model::parseJson(*text, wide);
        if (parsed.is_discarded())
          throw ApiError{ErrorCode::BadRequest, "the request body is not valid JSON"};
        if (!parsed.is_object())
          throw ApiError{ErrorCode::BadRequest, "the request body must be a JSON object"};
        if (!wide.text.empty()) throw ApiError{ErrorCode::BadRequest, wideIntegerMessage(parsed, wide)};
        if (auto nul = nulInJson(parsed)) throw ApiError{ErrorCode::BadRequest, *nul};
        *req.body = std::move(parsed);
      }
      co_return co_await route->handler(req);
    } catch (const ApiError& e) {
      co_return errorReply(e.code, e.message);
    } catch (const model::ParamError& e) {
      co_return errorReply(ErrorCode::BadRequest, e.message);
    } catch (const std::exception& e) {
      co_return errorReply(ErrorCode::Internal, std::string("internal error: ") + e.what());
    } catch (...) {
      co_return errorReply(ErrorCode::Internal, "internal error: an unknown exception");
    }
  }

  Reply console(const Request& req) {
    if (opts.consoleDir.empty())
      return errorReply(ErrorCode::NotFound, "the web console is not installed (server.console_dir)");
    std::filesystem::path p = opts.consoleDir;
    for (size_t i = 1; i < req.segments.size(); ++i) {
      if (req.segments[i] == ".." || req.segments[i].find('/') != std::string::npos)
        return errorReply(ErrorCode::NotFound, "not found");
      p /= req.segments[i];
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) p = std::filesystem::path(opts.consoleDir) / "index.html";
    std::ifstream in(p, std::ios::binary);
    if (!in)
      return errorReply(ErrorCode::NotFound, "the web console has no index.html in " + opts.consoleDir);
    std::ostringstream ss;
    ss << in.rdbuf();
    Reply r;
    r.raw = ss.str();
    r.contentType = contentTypeFor(p.string());
    return r;
  }
};

HttpServer::HttpServer(asio::io_context& io, service::Service& service, HttpOptions options)
    : impl_(std::make_unique<Impl>(io, service, std::move(options))) {
  addEnvironmentRoutes(impl_->routes, service);
  addVersionRoutes(impl_->routes, service);
  addResourceRoutes(impl_->routes, service);
  addActionRoutes(impl_->routes, service);
  addAuthRoutes(impl_->routes, impl_->opts, service);
  attachPolicies(impl_->routes); // a route without a policy stops the server here
}

HttpServer::~HttpServer() = default;

void HttpServer::enableCompiles(compile::CompileService& compiles) {
  addCompileRoutes(impl_->routes, impl_->svc, impl_->opts, compiles);
  attachPolicies(impl_->routes);
}

nlohmann::json HttpServer::routeTable() const { return describeRoutes(impl_->routes); }

llvm::Error HttpServer::start() {
  Impl& s = *impl_;
  removeStaleSpoolFiles();
  try {
    if (!s.opts.sslCertFile.empty() || !s.opts.sslKeyFile.empty()) {
      if (s.opts.sslCertFile.empty() || s.opts.sslKeyFile.empty())
        return model::fail(ErrorCode::BadRequest,
                           "[server] ssl_cert_file and ssl_key_file must be set together");
      s.tls.emplace(ssl::context::tls_server);
      s.tls->use_certificate_chain_file(s.opts.sslCertFile);
      s.tls->use_private_key_file(s.opts.sslKeyFile, ssl::context::pem);
    }
    tcp::endpoint ep{asio::ip::make_address(s.opts.bindAddress), static_cast<unsigned short>(s.opts.port)};
    s.acceptor.open(ep.protocol());
    s.acceptor.set_option(asio::socket_base::reuse_address(true));
    // Close-on-exec for any child a route's work starts (Asio opens sockets without it).
    ::fcntl(s.acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
    s.acceptor.bind(ep);
    s.acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& e) {
    return model::fail(ErrorCode::Internal, "cannot listen on " + s.opts.bindAddress + ":" +
                                                std::to_string(s.opts.port) + ": " + e.what());
  }
  asio::co_spawn(s.io, s.acceptLoop(), asio::detached);
  return llvm::Error::success();
}

void HttpServer::shutdown(std::function<void()> onDrained) {
  impl_->stopping = true;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  impl_->onDrained = std::move(onDrained);
  impl_->checkDrained();
}

int HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

} // namespace inm::api

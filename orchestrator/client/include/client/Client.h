// The orchestrator's HTTP client, used by `inmanta export` (push) and `inmanta-cli`. It speaks the
// reference's wire protocol (orchestrator.md §18): JSON bodies, gzip for bodies of 1 KiB or more, the
// environment in the `X-Inmanta-tid` header, a bearer token, success only on HTTP 200, errors as JSON objects
// with `message`. Boost.Beast on C++20 coroutines inside; a blocking API outside (the callers are
// command-line programs). Invariant: no call throws; every failure (connection, TLS, timeout, non-200 answer)
// is an llvm::Error whose text names the server (host:port) and, for an answer, its status and the server's
// `message`.
#pragma once

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace inm::config {
class Config;
}

namespace inm::client {

/// Where and how to reach a server: what `[compiler_rest_transport]` / `[cmdline_rest_transport]` hold.
struct Endpoint {
  std::string host = "localhost";
  uint16_t port = 8888;
  bool ssl = false;
  std::string caCertFile;  // verify the server against this CA bundle; empty = the system's store
  std::string token;       // bearer token; empty = none
  std::string environment; // sent as X-Inmanta-tid when a request asks for it
  std::chrono::seconds timeout{120};

  /// "host:port", for messages.
  std::string address() const { return host + ":" + std::to_string(port); }
};

/// Reads `section` (compiler_rest_transport or cmdline_rest_transport: host, port, ssl, ssl_ca_cert_file,
/// token, request_timeout) and `[config] environment`. A malformed port, boolean or timeout is an error
/// naming it.
llvm::Expected<Endpoint> endpointFromConfig(const config::Config& cfg, const std::string& section);

/// A query string parameter list, in order; values are percent-encoded when sent.
using Query = std::vector<std::pair<std::string, std::string>>;

/// One request. `path` is the path below the server root, e.g. "/api/v1/version/3"; build variable segments
/// with encodeSegment(). `body` is the JSON text (empty = no body).
struct Request {
  std::string method = "GET";
  std::string path;
  Query query;
  std::string body;
  bool tenant = true; // send X-Inmanta-tid (when the endpoint has an environment)
  /// `body` is already gzip-compressed JSON (sent as is with Content-Encoding: gzip): a caller that has time
  /// to spare before sending compresses it then (pushArtifact, while the file uploads run).
  bool gzipped = false;
};

/// An answer with status 200.
struct Response {
  unsigned status = 0;
  std::string body; // decoded (gunzipped) body text
  /// The body parsed as JSON (an empty body is null); a body that is not JSON is an error.
  llvm::Expected<nlohmann::json> json() const;
};

/// The blocking client. Keeps connections open between calls (HTTP/1.1 keep-alive) and reconnects when the
/// server closes them. Not thread-safe: one per thread.
class Client {
 public:
  explicit Client(Endpoint endpoint);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  Endpoint& endpoint() { return endpoint_; }

  /// Sends one request; a non-200 answer is an error carrying the server's message.
  llvm::Expected<Response> send(const Request& request);
  /// send() and parse the answer as JSON.
  llvm::Expected<nlohmann::json> call(const std::string& method, const std::string& path,
                                      const nlohmann::json* body = nullptr, const Query& query = {});
  /// Sends many independent requests over up to `parallel` connections at once; results in request order.
  /// The first failure is returned (the others are still completed).
  llvm::Error sendAll(const std::vector<Request>& requests, unsigned parallel);

 private:
  struct Impl;
  Endpoint endpoint_;
  std::unique_ptr<Impl> impl_;
};

/// The error for an answer other than 200: its status and the server's `message` (or the body's start).
class HttpError : public llvm::ErrorInfo<HttpError> {
 public:
  static char ID;
  HttpError(unsigned status, std::string message, std::string where)
      : status(status), message(std::move(message)), where(std::move(where)) {}
  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  unsigned status;
  std::string message; // the server's message
  std::string where;   // "GET /api/v1/... on host:port"
};

/// A consumed error: the HTTP status (0 when the server gave no answer) and the full text.
struct Failure {
  unsigned status = 0;
  std::string message; // the server's message, or the whole text when there was no answer
  std::string text;    // message plus where it happened
};
/// Consumes `err` (which must be a failure) into a Failure.
Failure takeFailure(llvm::Error err);

/// Percent-encodes one path segment with nothing kept but unreserved characters (A-Z a-z 0-9 - . _ ~), as the
/// reference client does (`/` -> %2F, `:` -> %3A).
std::string encodeSegment(const std::string& segment);
/// gzip (RFC 1952) of `data`, deflate level `level`.
std::string gzip(const std::string& data, int level = 6);
/// The inverse of gzip(); an error for corrupt input.
llvm::Expected<std::string> gunzip(const std::string& data);
/// Standard base64 with padding.
std::string base64(const std::string& data);

} // namespace inm::client

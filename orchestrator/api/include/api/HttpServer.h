// The orchestrator's HTTP API server: Beast HTTP/1.1 (TLS when a certificate is configured) with one
// coroutine per connection on the caller's io_context. It routes on the raw path split on '/' with each
// segment percent-decoded, reads bodies as JSON whatever their Content-Type (gzip accepted), answers 200 with
// `Content-Type: application/json` on success and a JSON {"message"} body on every error (orchestrator.md
// §18). Invariant: no request is answered before its body was checked against max_request_size (413
// otherwise).
#pragma once

#include "service/Service.h"

#include <boost/asio/io_context.hpp>
#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace inm::compile {
class CompileService;
}

namespace inm::api {

/// One `[auth_jwt_<id>]` section.
struct JwtKey {
  std::string id;
  std::string algorithm = "HS256";
  std::string key;                      ///< the HS256 secret
  std::vector<std::string> clientTypes; ///< client types this key may sign
  bool sign = false;                    ///< used to mint tokens
  int64_t expire = 0;                   ///< seconds, 0 = never
  std::string issuer = "https://localhost:8888/";
  std::string audience; ///< a token's `aud` must hold it (the server sets it to the issuer when unset)
};

/// [server] options of the HTTP layer.
struct HttpOptions {
  std::string bindAddress = "127.0.0.1";
  int port = 8888;
  uint64_t maxRequestSize = 512ull << 20; ///< bytes of a request body (after gzip on the wire)
  /// put_version bodies larger than this (bytes on the wire) are spooled to a temporary file and parsed
  /// streaming, so memory holds a batch of resources, not the version ([server] request_spool_size).
  uint64_t spoolRequestSize = 1ull << 20;
  std::string sslCertFile, sslKeyFile;
  std::string consoleDir; ///< empty = no console
  bool auth = false;
  std::vector<JwtKey> jwtKeys;
  std::string stateDir; ///< external agent relay: the schedulers' sockets (empty = off)
};

/// The Unix socket on which environment `env`'s scheduler accepts relayed external agents (docs/deploy.md).
std::string agentSocketPath(const std::string& stateDir, const std::string& env);

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, service::Service& service, HttpOptions options);
  ~HttpServer();
  /// Serves the compile endpoints (notify, compilereport, compilequeue, compiledata) from `compiles`, which
  /// must outlive the server; call before start().
  void enableCompiles(compile::CompileService& compiles);
  /// Binds and starts accepting; an error names the address.
  llvm::Error start();
  /// Stops accepting; `onDrained` runs on the io_context once no request is in flight.
  void shutdown(std::function<void()> onDrained);
  /// Every route with its client types and authorisation scope (docs/server.md "Authorisation").
  nlohmann::json routeTable() const;
  /// The bound port (useful with port 0).
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace inm::api

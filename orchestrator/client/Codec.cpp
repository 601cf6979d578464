// Byte-level helpers of the client (see include/client/Client.h): percent-encoding of path segments and query
// values, gzip via zlib, base64, and reading an Endpoint from the INI configuration. Pure functions, no I/O
// besides the configuration lookup.
#include "client/Client.h"
#include "config/Config.h"
#include "support/Base64.h"

#include <zlib.h>

namespace inm::client {

std::string encodeSegment(const std::string& segment) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(segment.size());
  for (unsigned char c : segment) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string gzip(const std::string& data, int level) {
  z_stream zs{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::string();
  std::string out;
  out.resize(deflateBound(&zs, uLong(data.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = uInt(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END ? out : std::string();
}

llvm::Expected<std::string> gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "zlib initialisation failed");
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = uInt(data.size());
  char buf[65536];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "corrupt gzip data in the server's answer");
    }
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc != Z_STREAM_END && (zs.avail_in > 0 || zs.avail_out == 0));
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "truncated gzip data in the server's answer");
  return out;
}

std::string base64(const std::string& data) { return support::base64Encode(data); }

llvm::Expected<Endpoint> endpointFromConfig(const config::Config& cfg, const std::string& section) {
  Endpoint ep;
  ep.host = cfg.getString(section, "host", ep.host);
  auto port = cfg.getInt(section, "port", ep.port);
  if (!port) return port.takeError();
  if (*port <= 0 || *port > 65535)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "[%s] port: %lld is not a TCP port",
                                   section.c_str(), (long long)*port);
  ep.port = uint16_t(*port);
  auto ssl = cfg.getBool(section, "ssl", false);
  if (!ssl) return ssl.takeError();
  ep.ssl = *ssl;
  ep.caCertFile = cfg.getString(section, "ssl_ca_cert_file", "");
  ep.token = cfg.getString(section, "token", "");
  auto timeout = cfg.getInt(section, "request_timeout", 120);
  if (!timeout) return timeout.takeError();
  if (*timeout <= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "[%s] request_timeout: must be positive",
                                   section.c_str());
  ep.timeout = std::chrono::seconds(*timeout);
  ep.environment = cfg.getString("config", "environment", "");
  return ep;
}

} // namespace inm::client

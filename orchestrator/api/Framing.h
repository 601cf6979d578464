// Private to api/: HTTP/1.1 request framing and request-target decoding, without sockets. HttpServer.cpp
// reads requests with Beast's parser configured by configureParser, then calls checkFraming on every head and
// framingReply on every parse error; the libFuzzer target test/fuzz/HttpFuzzer.cpp drives the same functions
// over a byte buffer (parseRequests). Invariant: a request whose length is ambiguous (Transfer-Encoding other
// than one `chunked`, Transfer-Encoding with Content-Length, a Content-Length that is not one decimal number,
// a malformed chunk) gets a 400 and ends its connection, so no byte after it is read as another request
// (request smuggling); an oversized header section gets a 431. Nothing here throws.
#pragma once

#include <boost/beast/http.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inm::api {

namespace http = boost::beast::http;

/// The most bytes of a request line plus header fields (a larger section is a 431); bounds every single
/// field too. Tornado's default (the reference server) is the same 64 KiB.
constexpr uint32_t kHeaderLimit = 64u << 10;

/// An answer that ends the connection: the status and the message of its JSON error body.
struct FramingError {
  int status = 400;
  std::string message;
};

/// Sets the header limit (kHeaderLimit) and the body limit on a request parser.
template <typename Parser>
void configureParser(Parser& p, uint64_t bodyLimit) {
  p.header_limit(kHeaderLimit);
  p.body_limit(bodyLimit);
}

/// The framing headers of a complete request head: at most one Transfer-Encoding field whose whole value is
/// `chunked` (HTTP/1.1 only), never with Content-Length; at most one Content-Length field of digits only.
/// nullopt when the head may be read on.
std::optional<FramingError> checkFraming(const http::request_header<>& head);

/// The answer for an error of Beast's parser or of reading: 400 for malformed syntax or framing, 413 for a
/// body over the limit, 431 for an oversized header section; nullopt for a connection that ended or timed
/// out (nothing is answered then).
std::optional<FramingError> framingReply(const boost::system::error_code& ec, uint64_t bodyLimit);

/// Whether `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool isUtf8(std::string_view s);

/// Percent-decodes one path segment or query component (`plus` turns '+' into ' ').
std::string percentDecode(std::string_view s, bool plus);

/// A request target split into percent-decoded path segments and query pairs.
struct Target {
  std::string path;                                 ///< the raw path (before '?')
  std::vector<std::string> segments;                ///< decoded; a trailing empty segment dropped
  std::map<std::string, std::string> query;         ///< decoded; later duplicates win
  std::multimap<std::string, std::string> queryAll; ///< every pair, repeated keys kept
};

/// Decodes an origin-form target ("/a/b?k=v"); a 400 message when it does not start with '/', or when a
/// decoded segment, key or value is not UTF-8 or holds a NUL byte (names the parameter).
std::optional<std::string> decodeTarget(std::string_view target, Target& out);

/// What parseRequests saw of one request.
struct ParsedRequest {
  const http::request<http::string_body>* request = nullptr; ///< set when the request was read whole
  std::optional<FramingError> error;                         ///< set when the connection ends with it
};

/// Parses `bytes` as the requests of one connection, as the server reads them: each head is checked
/// (checkFraming), then its body read; `onRequest` sees every complete request and, last, the error that
/// ends the connection (nothing after it is parsed). Returns the number of complete requests. For the fuzzer
/// and unit checks: the server reads the same way from its socket.
size_t parseRequests(std::string_view bytes, uint64_t bodyLimit,
                     const std::function<void(const ParsedRequest&)>& onRequest);

} // namespace inm::api

// Request framing and target decoding (see Framing.h): the checks HttpServer.cpp applies to every request
// Beast reads, and the same read loop over a byte buffer for the fuzzer.
#include "Framing.h"

#include "model/QueryParams.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>

namespace inm::api {

namespace {

std::string_view sv(boost::beast::string_view s) { return std::string_view(s.data(), s.size()); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool isHttpError(const boost::system::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

/// A printable rendering of a query key or value for a message (at most 64 bytes, controls escaped).
std::string shown(std::string_view s) { return model::printable(s, 64); }

/// A 400 message when a decoded target part is not acceptable text.
std::optional<std::string> checkText(std::string_view value, const std::string& what) {
  if (value.find('\0') != std::string_view::npos) return what + " holds a NUL byte";
  if (!isUtf8(value)) return what + " is not valid UTF-8: " + shown(value);
  return std::nullopt;
}

} // namespace

std::optional<FramingError> checkFraming(const http::request_header<>& head) {
  size_t te = head.count(http::field::transfer_encoding);
  size_t cl = head.count(http::field::content_length);
  if (te > 0) {
    if (te > 1)
      return FramingError{400, "the request repeats Transfer-Encoding (only one `chunked` is accepted)"};
    if (cl > 0)
      return FramingError{400, "the request has both Transfer-Encoding and Content-Length (its length is "
                               "ambiguous)"};
    auto value = trim(sv(head[http::field::transfer_encoding]));
    if (!boost::beast::iequals(boost::beast::string_view(value.data(), value.size()), "chunked"))
      return FramingError{400, "unsupported Transfer-Encoding '" + shown(value) +
                                   "' (only a single `chunked` is accepted)"};
    if (head.version() < 11)
      return FramingError{400, "Transfer-Encoding is not allowed in an HTTP/1.0 request"};
  }
  if (cl > 1) return FramingError{400, "the request repeats Content-Length"};
  if (cl == 1) {
    auto value = trim(sv(head[http::field::content_length]));
    if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos)
      return FramingError{400, "Content-Length must be one decimal number, got '" + shown(value) + "'"};
  }
  return std::nullopt;
}

std::optional<FramingError> framingReply(const boost::system::error_code& ec, uint64_t bodyLimit) {
  if (!ec || !isHttpError(ec)) return std::nullopt;
  switch (static_cast<http::error>(ec.value())) {
  case http::error::end_of_stream:
  case http::error::partial_message:
  case http::error::need_more:
  case http::error::unexpected_body:
  case http::error::need_buffer:
  case http::error::end_of_chunk: return std::nullopt; // the peer went away mid-request: nobody to answer
  case http::error::header_limit:
    return FramingError{431, "the request header section exceeds " + std::to_string(kHeaderLimit) + " bytes"};
  case http::error::body_limit:
    return FramingError{413, "the request body exceeds max_request_size (" + std::to_string(bodyLimit) +
                                 " bytes)"};
  case http::error::bad_chunk:
  case http::error::bad_chunk_extension:
    return FramingError{400, "malformed chunked request body: " + ec.message()};
  case http::error::bad_content_length:
  case http::error::bad_transfer_encoding:
    return FramingError{400,
                        "ambiguous request length: Transfer-Encoding and Content-Length conflict, repeat "
                        "or are malformed (" +
                            ec.message() + ")"};
  default: return FramingError{400, "malformed request: " + ec.message()};
  }
}

bool isUtf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += len;
  }
  return true;
}

std::string percentDecode(std::string_view s, bool plus) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += char(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else if (plus && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::optional<std::string> decodeTarget(std::string_view target, Target& out) {
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  out.path = std::string(path);
  if (path.empty() || path[0] != '/') return std::string("the request target must start with '/'");
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string seg = percentDecode(path.substr(i, j - i), false);
    if (auto bad = checkText(seg, "path segment " + std::to_string(out.segments.size() + 1))) return bad;
    out.segments.push_back(std::move(seg));
    i = j + 1;
  }
  if (!out.segments.empty() && out.segments.back().empty()) out.segments.pop_back();
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view qs = target.substr(q + 1);
  i = 0;
  while (i < qs.size()) {
    size_t j = qs.find('&', i);
    if (j == std::string_view::npos) j = qs.size();
    std::string_view kv = qs.substr(i, j - i);
    size_t e = kv.find('=');
    if (!kv.empty()) {
      std::string k = percentDecode(kv.substr(0, e), true);
      std::string v = e == std::string_view::npos ? "" : percentDecode(kv.substr(e + 1), true);
      if (auto bad = checkText(k, "a query parameter name")) return bad;
      if (auto bad = checkText(v, "query parameter '" + k + "'")) return bad;
      out.queryAll.emplace(k, v);
      out.query[k] = std::move(v);
    }
    i = j + 1;
  }
  return std::nullopt;
}

namespace {

/// Feeds `bytes` from `pos` to `parser` until `done(parser)`; at the end of the input (or when the parser
/// takes nothing more) it sees the end of the stream, as a read does when the peer closes. An error in `ec`.
template <typename Parser, typename Done>
void feed(Parser& parser, std::string_view bytes, size_t& pos, Done done, boost::system::error_code& ec) {
  while (!done(parser)) {
    size_t used = 0;
    if (pos < bytes.size()) {
      used = parser.put(boost::asio::buffer(bytes.data() + pos, bytes.size() - pos), ec);
      pos += used;
      if (ec == http::error::need_more) ec = {};
      if (ec) return;
    }
    if (used == 0) {
      parser.put_eof(ec);
      if (!ec && !done(parser)) ec = http::error::partial_message;
      return;
    }
  }
}

} // namespace

size_t parseRequests(std::string_view bytes, uint64_t bodyLimit,
                     const std::function<void(const ParsedRequest&)>& onRequest) {
  size_t pos = 0, complete = 0;
  auto fail = [&](const boost::system::error_code& ec) {
    ParsedRequest r;
    r.error = framingReply(ec, bodyLimit);
    onRequest(r);
    return complete;
  };
  while (pos < bytes.size()) {
    boost::system::error_code ec;
    http::request_parser<http::empty_body> head;
    configureParser(head, bodyLimit);
    feed(
        head, bytes, pos, [](auto& p) { return p.is_header_done(); }, ec);
    if (ec) return fail(ec);
    if (auto bad = checkFraming(head.get().base())) {
      ParsedRequest r;
      r.error = std::move(bad);
      onRequest(r);
      return complete;
    }
    if (head.content_length() && *head.content_length() > bodyLimit) return fail(http::error::body_limit);
    http::request_parser<http::string_body> whole(std::move(head));
    configureParser(whole, bodyLimit);
    feed(
        whole, bytes, pos, [](auto& p) { return p.is_done(); }, ec);
    if (ec) return fail(ec);
    ++complete;
    ParsedRequest r;
    r.request = &whole.get();
    onRequest(r);
    if (!whole.get().keep_alive()) return complete; // the server stops reading after such a request
  }
  return complete;
}

} // namespace inm::api

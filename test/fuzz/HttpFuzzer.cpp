// libFuzzer target for the server's request path without sockets: the bytes are one connection's input,
// read by api::parseRequests exactly as HttpServer.cpp reads a socket (Beast's parser with the server's
// limits, checkFraming on every head, framingReply on every error), then each complete request's target is
// decoded (api::decodeTarget) and its query pairs go through every decoder of model/QueryParams.h; the body
// goes through the JSON parser. Built with -DINM_FUZZ=ON and clang (test/fuzz/run.sh http).
// Invariant: any input returns normally. A crash, a sanitizer report, an exception other than ParamError, or
// a broken framing property (a request accepted with both Transfer-Encoding and Content-Length, anything read
// after a refused request, an integer that does not print back as it was read) aborts.
#include "Framing.h"
#include "model/QueryParams.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace inm;

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "http fuzzer: property broken: %s\n", what);
    std::abort();
  }
}

/// Every decoder over the query; ParamError is the expected refusal.
void decodeQuery(const api::Target& t) {
  const model::QueryPairs& q = t.queryAll;
  auto guarded = [](auto&& f) {
    try {
      f();
    } catch (const model::ParamError& e) {
      check(!e.message.empty(), "a ParamError without a message");
    }
  };
  for (const auto& kv : q) {
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    guarded([&] { (void)model::singleParam(q, k); });
    guarded([&] {
      int64_t x = model::parseInteger(v, k);
      // Round trip: the value prints back as the text without leading zeros (and "-0" as "0").
      std::string digits = v[0] == '-' ? v.substr(1) : v;
      size_t nz = digits.find_first_not_of('0');
      digits = nz == std::string::npos ? "0" : digits.substr(nz);
      std::string expect = (v[0] == '-' && digits != "0" ? "-" : "") + digits;
      check(std::to_string(x) == expect, "parseInteger does not round-trip");
    });
    guarded([&] { (void)model::parseBoolean(v, k); });
    guarded([&] { (void)model::timeBound(v, k); });
    if (model::isTimestamp(v)) check(model::timestampKey(v).size() == 29, "timestampKey of a timestamp");
  }
  guarded([&] { (void)model::limitParam(q, 20, 1000); });
  guarded([&] { (void)model::sortParam(q, {"resource_type", "agent", "status"}, {"resource_type", true}); });
  guarded([&] {
    auto f = model::filterParams(q, {"status", "agent"});
    model::checkFilterValues(f, "status", {"deployed", "failed"}, true);
  });
  guarded([&] { (void)model::cursorParams(q, true); });
  guarded([&] { (void)model::cursorParams(q, false); });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  bool ended = false;
  size_t seen = 0;
  size_t complete = api::parseRequests(bytes, 1u << 20, [&](const api::ParsedRequest& r) {
    check(!ended, "a request was read after the connection's last one");
    if (!r.request) {
      ended = true;
      if (r.error)
        check(r.error->status == 400 || r.error->status == 413 || r.error->status == 431,
              "an unexpected framing status");
      return;
    }
    ++seen;
    const auto& req = *r.request;
    size_t te = req.count(api::http::field::transfer_encoding);
    size_t cl = req.count(api::http::field::content_length);
    check(!(te && cl), "a request accepted with both Transfer-Encoding and Content-Length");
    check(te <= 1 && cl <= 1, "a request accepted with a repeated framing header");
    if (!req.keep_alive()) ended = true;
    api::Target t;
    auto bad = api::decodeTarget(std::string_view(req.target().data(), req.target().size()), t);
    if (!bad) {
      for (const auto& seg : t.segments) check(api::isUtf8(seg), "a decoded segment is not UTF-8");
      decodeQuery(t);
      // Percent-encoding every byte of a decoded segment decodes back to it.
      for (const auto& seg : t.segments) {
        std::string enc;
        for (unsigned char c : seg) {
          static const char* hex = "0123456789ABCDEF";
          enc += '%';
          enc += hex[c >> 4];
          enc += hex[c & 15];
        }
        check(api::percentDecode(enc, false) == seg, "percentDecode does not invert percent-encoding");
      }
    }
    nlohmann::json body = nlohmann::json::parse(req.body(), nullptr, false);
    (void)body;
  });
  check(complete == seen, "parseRequests' count differs from the requests it handed over");
  return 0;
}

// Content diffs for dry-run reports and desired-state diffs (see ContentDiffs.h). Contents are read through
// Service::getFile (base64 in its answer); an absent side (a file that does not exist yet, or a resource that
// is added or deleted) is the empty content.
#include "ContentDiffs.h"

#include "support/Base64.h"
#include "support/TextDiff.h"

namespace inm::api {
namespace {

constexpr size_t kMaxContentDiffs = 200; // per answer: each costs two file reads

bool isSha1(const nlohmann::json& v) {
  if (!v.is_string() || v.get_ref<const std::string&>().size() != 40) return false;
  for (char c : v.get_ref<const std::string&>())
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

/// The content of `hash` ("" for null), or nullopt when the store does not have it.
boost::asio::awaitable<std::optional<std::string>> content(service::Service& svc,
                                                           const nlohmann::json& hash) {
  if (hash.is_null()) co_return std::string();
  service::Result r = co_await svc.getFile(hash.get<std::string>());
  if (!r.ok || !r.value.is_string()) co_return std::nullopt;
  co_return support::base64Decode(r.value.get<std::string>());
}

} // namespace

boost::asio::awaitable<void> addContentDiffs(service::Service& svc, nlohmann::json& entries,
                                             const std::string& fromName, const std::string& toName) {
  if (!entries.is_array()) co_return;
  size_t done = 0;
  for (nlohmann::json& entry : entries) {
    if (!entry.is_object() || !entry.contains("attributes") || !entry["attributes"].is_object()) continue;
    auto it = entry["attributes"].find("hash");
    if (it == entry["attributes"].end() || !it->is_object()) continue;
    nlohmann::json& attr = *it;
    const nlohmann::json from = attr.value("from_value", nlohmann::json());
    const nlohmann::json to = attr.value("to_value", nlohmann::json());
    if ((!from.is_null() && !isSha1(from)) || (!to.is_null() && !isSha1(to)) || from == to) continue;
    if (++done > kMaxContentDiffs) {
      attr["diff"] = "content not shown: more than " + std::to_string(kMaxContentDiffs) +
                     " changed contents in this answer (GET /api/v1/file/<hash> reads each)\n";
      continue;
    }
    std::optional<std::string> a = co_await content(svc, from), b = co_await content(svc, to);
    if (!a || !b) {
      attr["diff"] = "content not shown: the server does not have the " + std::string(!a ? "old" : "new") +
                     " content (" + (!a ? from : to).get<std::string>() + ")\n";
      continue;
    }
    attr["diff"] = contentDiff(*a, *b, fromName, toName);
  }
}

} // namespace inm::api

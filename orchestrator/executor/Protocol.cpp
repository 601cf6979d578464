// Frame codec, request/result records and base64 of the executor protocol (include/executor/Protocol.h).
#include "executor/Protocol.h"

#include "support/Base64.h"
#include "support/JsonScan.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace inm::executor {

std::string encodeFrame(const Json& message) {
  return encodeFrameBody(message.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string encodeFrameBody(const std::string& body) {
  if (body.size() > kMaxFrameBytes)
    throw std::runtime_error("executor protocol: frame of " + std::to_string(body.size()) +
                             " bytes exceeds the limit");
  uint32_t n = static_cast<uint32_t>(body.size());
  std::string out;
  out.reserve(4 + body.size());
  out += static_cast<char>((n >> 24) & 0xff);
  out += static_cast<char>((n >> 16) & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  out += static_cast<char>(n & 0xff);
  out += body;
  return out;
}

namespace {
/// The end of the JSON value starting at `i` (no validation: the caller validates what it keeps), or npos;
/// the walking is support/JsonScan.h's.
size_t skipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  support::JsonCursor c(s.substr(i));
  std::string_view raw;
  if (!c.value(raw)) return std::string_view::npos;
  return i + raw.size();
}

/// The span [begin, end) of the array value of the top-level member `key` of the object `s`, if there is one.
std::optional<std::pair<size_t, size_t>> topLevelArray(std::string_view s, std::string_view key) {
  auto ws = [&](size_t i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
    return i;
  };
  size_t i = ws(0);
  if (i >= s.size() || s[i] != '{') return std::nullopt;
  i = ws(i + 1);
  while (i < s.size() && s[i] == '"') {
    size_t keyEnd = skipValue(s, i);
    if (keyEnd == std::string_view::npos) return std::nullopt;
    std::string_view name = s.substr(i + 1, keyEnd - i - 2);
    i = ws(keyEnd);
    if (i >= s.size() || s[i] != ':') return std::nullopt;
    i = ws(i + 1);
    size_t valueEnd = skipValue(s, i);
    if (valueEnd == std::string_view::npos) return std::nullopt;
    if (name == key && s[i] == '[') return std::make_pair(i, valueEnd);
    i = ws(valueEnd);
    if (i >= s.size() || s[i] != ',') return std::nullopt;
    i = ws(i + 1);
  }
  return std::nullopt;
}
} // namespace

std::optional<std::string_view> FrameDecoder::nextBody() {
  // The previous body is no longer referenced: compact the buffer now that it may be moved.
  if (offset_ > (1u << 20) && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  if (buffer_.size() - offset_ < 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  uint32_t n = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
  if (n > kMaxFrameBytes)
    throw std::runtime_error("executor protocol: incoming frame of " + std::to_string(n) +
                             " bytes exceeds the limit");
  if (buffer_.size() - offset_ - 4 < n) return std::nullopt;
  std::string_view body(buffer_.data() + offset_ + 4, n);
  offset_ += 4 + n;
  return body;
}

std::optional<Json> FrameDecoder::next(std::string* logsText) {
  auto body = nextBody();
  if (!body) return std::nullopt;
  return decodeFrameBody(*body, logsText);
}

Json decodeFrameBody(std::string_view body, std::string* logsText) {
  Json msg;
  std::optional<std::pair<size_t, size_t>> logs;
  if (logsText) logs = topLevelArray(body, "logs");
  if (logs && Json::accept(body.substr(logs->first, logs->second - logs->first))) {
    // Validated without building a tree; the rest of the frame (small) is parsed with "logs": [].
    logsText->assign(body.substr(logs->first, logs->second - logs->first));
    std::string rest;
    rest.reserve(body.size() - (logs->second - logs->first) + 2);
    rest.append(body.substr(0, logs->first)).append("[]").append(body.substr(logs->second));
    msg = Json::parse(rest, nullptr, false);
  } else {
    if (logsText) logsText->clear();
    msg = Json::parse(body.begin(), body.end(), nullptr, false);
  }
  if (msg.is_discarded() || !msg.is_object() || !msg.contains("type") || !msg["type"].is_string())
    throw std::runtime_error("executor protocol: a frame is not a JSON object with a string \"type\"");
  return msg;
}

bool decodeResultFrame(std::string_view s, ActionResult& out) {
  auto ws = [&](size_t i) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
    return i;
  };
  // A string value of printable ASCII without escapes, or nullopt.
  auto plain = [&](size_t begin, size_t end) -> std::optional<std::string_view> {
    if (end - begin < 2 || s[begin] != '"' || s[end - 1] != '"') return std::nullopt;
    std::string_view v = s.substr(begin + 1, end - begin - 2);
    for (char c : v)
      if (c == '\\' || c == '"' || static_cast<unsigned char>(c) < 0x20 ||
          static_cast<unsigned char>(c) >= 0x7f)
        return std::nullopt;
    return v;
  };
  // "changes" / "facts": an object; `{}` (what our executors send almost always) without parsing.
  auto object = [&](size_t begin, size_t end, Json& into) {
    std::string_view v = s.substr(begin, end - begin);
    if (v == "{}") {
      into = Json::object();
      return true;
    }
    Json j = Json::parse(v, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return false;
    into = std::move(j);
    return true;
  };
  bool typeSeen = false, actionSeen = false, statusSeen = false;
  // A repeated key is declined: the general decoder keeps the first "logs" as text, the last of the others.
  std::string_view seen[8]; // the keys ActionResult::toJson writes, each at most once
  size_t seenCount = 0;
  size_t i = ws(0);
  if (i >= s.size() || s[i] != '{') return false;
  i = ws(i + 1);
  while (i < s.size() && s[i] == '"') {
    size_t keyEnd = skipValue(s, i);
    if (keyEnd == std::string_view::npos) return false;
    auto key = plain(i, keyEnd);
    if (!key || seenCount == std::size(seen) || std::find(seen, seen + seenCount, *key) != seen + seenCount)
      return false;
    seen[seenCount++] = *key;
    i = ws(keyEnd);
    if (i >= s.size() || s[i] != ':') return false;
    i = ws(i + 1);
    size_t end = skipValue(s, i);
    if (end == std::string_view::npos || end == i) return false;
    if (*key == "logs") {
      std::string_view v = s.substr(i, end - i);
      if (s[i] != '[' || !Json::accept(v)) return false;
      out.logsText.assign(v);
    } else if (*key == "changes" || *key == "facts") {
      if (s[i] != '{' || !object(i, end, *key == "changes" ? out.changes : out.facts)) return false;
    } else {
      auto v = plain(i, end);
      if (!v) return false;
      if (*key == "type") {
        if (*v != "result") return false;
        typeSeen = true;
      } else if (*key == "action_id") {
        out.actionId.assign(*v);
        actionSeen = true;
      } else if (*key == "id") {
        out.resourceId.assign(*v);
      } else if (*key == "status") {
        out.status.assign(*v);
        statusSeen = true;
      } else if (*key == "change") {
        out.change.assign(*v);
      } else {
        return false; // not the shape ActionResult::toJson writes
      }
    }
    i = ws(end);
    if (i < s.size() && s[i] == ',') {
      i = ws(i + 1);
      continue;
    }
    if (i < s.size() && s[i] == '}') return ws(i + 1) == s.size() && typeSeen && actionSeen && statusSeen;
    return false;
  }
  return false;
}

namespace {
template <typename T>
T field(const Json& j, const char* name, const char* what) {
  auto it = j.find(name);
  if (it == j.end()) throw std::runtime_error(std::string(what) + ": missing field \"" + name + "\"");
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    throw std::runtime_error(std::string(what) + ": field \"" + name + "\" has the wrong type");
  }
}
} // namespace

Json DeployRequest::toJson() const {
  return Json{{"action_id", actionId},
              {"id", resourceId},
              {"attributes", attributes},
              {"reason", reason},
              {"dependencies", dependencies},
              {"dependency_changed", dependencyChanged},
              {"dry_run", dryRun}};
}

void DeployRequest::appendJson(std::string& out) const {
  if (!attributesText) {
    out += toJson().dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  Json rest{{"action_id", actionId},
            {"id", resourceId},
            {"reason", reason},
            {"dependencies", dependencies},
            {"dependency_changed", dependencyChanged},
            {"dry_run", dryRun}};
  std::string head = rest.dump(-1, ' ', false, Json::error_handler_t::replace);
  head.pop_back(); // the closing brace: "attributes" goes last
  out += head;
  out += ",\"attributes\":";
  out += *attributesText;
  out += '}';
}

DeployRequest DeployRequest::fromJson(const Json& j) {
  DeployRequest r;
  r.actionId = field<std::string>(j, "action_id", "deploy request");
  r.resourceId = field<std::string>(j, "id", "deploy request");
  r.attributes = j.value("attributes", Json::object());
  if (!r.attributes.is_object()) throw std::runtime_error("deploy request: \"attributes\" must be an object");
  r.reason = j.value("reason", std::string());
  if (j.contains("dependencies"))
    r.dependencies = field<std::map<std::string, std::string>>(j, "dependencies", "deploy request");
  r.dependencyChanged = j.value("dependency_changed", false);
  r.dryRun = j.value("dry_run", false);
  return r;
}

DeployRequest DeployRequest::fromJson(Json&& j) {
  if (!j.is_object()) throw std::runtime_error("deploy request: not a JSON object");
  Json attributes;
  if (j.contains("attributes")) attributes = std::move(j["attributes"]);
  j.erase("attributes");
  DeployRequest r = fromJson(static_cast<const Json&>(j));
  if (!attributes.is_null() && !attributes.is_object())
    throw std::runtime_error("deploy request: \"attributes\" must be an object");
  if (attributes.is_object()) r.attributes = std::move(attributes);
  return r;
}

Json ActionResult::toJson() const {
  Json all = logs;
  if (!logsText.empty()) { // the received lines first (rare path: the probe, tests)
    Json received = Json::parse(logsText, nullptr, false);
    if (received.is_array()) {
      for (const Json& l : logs) received.push_back(l);
      all = std::move(received);
    }
  }
  return Json{{"type", "result"}, {"action_id", actionId}, {"id", resourceId}, {"status", status},
              {"change", change}, {"changes", changes},    {"logs", all},      {"facts", facts}};
}

ActionResult ActionResult::fromJson(const Json& j) {
  ActionResult r;
  r.actionId = field<std::string>(j, "action_id", "result");
  r.resourceId = j.value("id", std::string());
  r.status = field<std::string>(j, "status", "result");
  r.change = j.value("change", std::string(model::spelling(model::Change::NoChange)));
  r.changes = j.value("changes", Json::object());
  r.logs = j.value("logs", Json::array());
  r.facts = j.value("facts", Json::object());
  return r;
}

ActionResult ActionResult::unavailable(const std::string& actionId, const std::string& resourceId,
                                       const std::string& message) {
  ActionResult r;
  r.actionId = actionId;
  r.resourceId = resourceId;
  r.status = model::spelling(model::DeployStatus::Unavailable);
  LogLine line{"ERROR", message, Json{{"resource_id", resourceId}}, isoNow()};
  r.logs.push_back(line.toJson());
  return r;
}

std::string base64Encode(const std::string& bytes) { return support::base64Encode(bytes); }

std::string base64Decode(const std::string& text) {
  std::string error;
  auto bytes = support::base64Decode(text, {}, &error);
  if (!bytes) throw std::runtime_error("base64: " + error);
  return std::move(*bytes);
}

} // namespace inm::executor

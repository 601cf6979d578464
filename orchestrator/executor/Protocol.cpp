// Frame codec, request/result records and base64 of the executor protocol (include/executor/Protocol.h).
#include "executor/Protocol.h"

#include <stdexcept>

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

std::optional<Json> FrameDecoder::next() {
  if (buffer_.size() - offset_ < 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  uint32_t n = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
  if (n > kMaxFrameBytes)
    throw std::runtime_error("executor protocol: incoming frame of " + std::to_string(n) +
                             " bytes exceeds the limit");
  if (buffer_.size() - offset_ - 4 < n) return std::nullopt;
  Json msg = Json::parse(buffer_.begin() + static_cast<long>(offset_ + 4),
                         buffer_.begin() + static_cast<long>(offset_ + 4 + n), nullptr, false);
  offset_ += 4 + n;
  if (offset_ > (1u << 20) && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  if (msg.is_discarded() || !msg.is_object() || !msg.contains("type") || !msg["type"].is_string())
    throw std::runtime_error("executor protocol: a frame is not a JSON object with a string \"type\"");
  return msg;
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
  return Json{{"type", "result"}, {"action_id", actionId}, {"id", resourceId}, {"status", status},
              {"change", change}, {"changes", changes},    {"logs", logs},     {"facts", facts}};
}

ActionResult ActionResult::fromJson(const Json& j) {
  ActionResult r;
  r.actionId = field<std::string>(j, "action_id", "result");
  r.resourceId = j.value("id", std::string());
  r.status = field<std::string>(j, "status", "result");
  r.change = j.value("change", std::string("nochange"));
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
  r.status = "unavailable";
  LogLine line{"ERROR", message, Json{{"resource_id", resourceId}}, isoNow()};
  r.logs.push_back(line.toJson());
  return r;
}

static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64Encode(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v =
        (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string base64Decode(const std::string& text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else if (c == '=')
      break;
    else
      throw std::runtime_error("base64: invalid character in encoded content");
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

} // namespace inm::executor

// Parameter decoding and reply helpers (see Request.h).
#include "Request.h"

#include <cmath>

namespace inm::api {

using model::ErrorCode;

std::string percentDecode(const std::string& s, bool plus) {
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

namespace {

bool isUuidText(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

} // namespace

std::string environmentOf(const Request& req) {
  auto it = req.headers->find("X-Inmanta-tid");
  if (it == req.headers->end() || it->value().empty())
    throw ApiError{ErrorCode::BadRequest, "this call needs the environment in the X-Inmanta-tid header"};
  std::string env(it->value());
  if (!isUuidText(env))
    throw ApiError{ErrorCode::BadRequest, "the X-Inmanta-tid header is not a uuid: " + env};
  for (char& c : env) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (req.caller.environment && *req.caller.environment != env)
    throw ApiError{ErrorCode::Forbidden,
                   "the token is scoped to environment " + *req.caller.environment + ", not " + env};
  return env;
}

std::optional<nlohmann::json> findParam(const Request& req, const std::string& name) {
  if (auto p = req.params.find(name); p != req.params.end()) return nlohmann::json(p->second);
  if (auto q = req.query.find(name); q != req.query.end()) return nlohmann::json(q->second);
  if (req.body && req.body->is_object()) {
    auto b = req.body->find(name);
    if (b != req.body->end() && !b->is_null()) return *b;
  }
  return std::nullopt;
}

std::optional<std::string> optStringParam(const Request& req, const std::string& name) {
  auto v = findParam(req, name);
  if (!v) return std::nullopt;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) return v->dump();
  throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be a string"};
}

std::string stringParam(const Request& req, const std::string& name) {
  auto v = optStringParam(req, name);
  if (!v) throw ApiError{ErrorCode::BadRequest, "'" + name + "' is required"};
  return *v;
}

namespace {

int64_t toInt(const nlohmann::json& v, const std::string& name) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()) return int64_t(v.get<double>());
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    try {
      size_t n = 0;
      long long x = std::stoll(s, &n);
      if (n == s.size()) return x;
    } catch (...) {
    }
  }
  throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be an integer, got " + v.dump()};
}

} // namespace

int64_t intParam(const Request& req, const std::string& name) {
  auto v = findParam(req, name);
  if (!v) throw ApiError{ErrorCode::BadRequest, "'" + name + "' is required"};
  int64_t x = toInt(*v, name);
  // A path parameter wins, but a body that repeats it with another value is a contradiction.
  if (req.params.count(name) && req.body && req.body->contains(name) && !(*req.body)[name].is_null() &&
      toInt((*req.body)[name], name) != x)
    throw ApiError{ErrorCode::BadRequest,
                   "'" + name + "' in the body (" + (*req.body)[name].dump() + ") differs from the path"};
  return x;
}

int64_t intParam(const Request& req, const std::string& name, int64_t fallback) {
  auto v = findParam(req, name);
  return v ? toInt(*v, name) : fallback;
}

bool boolParam(const Request& req, const std::string& name, bool fallback) {
  auto v = findParam(req, name);
  if (!v) return fallback;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_string()) {
    std::string s = v->get<std::string>();
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (s == "true" || s == "1" || s == "yes") return true;
    if (s == "false" || s == "0" || s == "no") return false;
  }
  if (v->is_number_integer()) return v->get<int64_t>() != 0;
  throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be a boolean, got " + v->dump()};
}

std::string uuidParam(const Request& req, const std::string& name) {
  std::string v = stringParam(req, name);
  if (!isUuidText(v)) throw ApiError{ErrorCode::BadRequest, "'" + name + "' is not a uuid: " + v};
  for (char& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
  return v;
}

nlohmann::json unwrap(service::Result r) {
  if (!r.ok) throw ApiError{r.code, r.message};
  return std::move(r.value);
}

Reply ok(nlohmann::json body) {
  Reply r;
  r.json = std::move(body);
  return r;
}

Reply okResult(service::Result r) {
  if (!r.ok) throw ApiError{r.code, r.message};
  if (r.text.empty()) return ok(std::move(r.value));
  Reply reply;
  reply.raw = std::move(r.text);
  reply.contentType = "application/json";
  return reply;
}

Reply okData(nlohmann::json value) { return ok(nlohmann::json{{"data", std::move(value)}}); }

Reply okPage(nlohmann::json list) {
  size_t n = list.size();
  return ok(nlohmann::json{{"data", std::move(list)},
                           {"links", nlohmann::json::object()},
                           {"metadata", {{"total", n}, {"before", 0}, {"after", 0}, {"page_size", n}}}});
}

std::vector<std::string> splitPattern(const std::string& pattern) {
  std::vector<std::string> out;
  size_t i = 1;
  while (i <= pattern.size()) {
    size_t j = pattern.find('/', i);
    if (j == std::string::npos) j = pattern.size();
    out.push_back(pattern.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

} // namespace inm::api

// Parameter decoding and reply helpers (see Request.h).
#include "Request.h"

#include "model/Ids.h"
#include "model/QueryParams.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace inm::api {

using model::ErrorCode;

namespace {

/// A JSON value quoted in a message (at most 80 characters, never throwing on bad UTF-8).
std::string shownJson(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 80) + "..." : s;
}

} // namespace

std::string environmentOf(const Request& req) {
  auto it = req.headers->find("X-Inmanta-tid");
  if (it == req.headers->end() || it->value().empty())
    throw ApiError{ErrorCode::BadRequest, "this call needs the environment in the X-Inmanta-tid header"};
  std::string env(it->value());
  if (!model::isUuid(env))
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
  throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be a string, got " + shownJson(*v)};
}

std::string stringParam(const Request& req, const std::string& name) {
  auto v = optStringParam(req, name);
  if (!v) throw ApiError{ErrorCode::BadRequest, "'" + name + "' is required"};
  return *v;
}

namespace {

int64_t toInt(const nlohmann::json& v, const std::string& name) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      throw ApiError{ErrorCode::BadRequest, "'" + name + "' is out of the 64-bit integer range: " + v.dump()};
    return int64_t(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)
      return int64_t(d);
  }
  if (v.is_string()) {
    try {
      return model::parseInteger(v.get_ref<const std::string&>(), name);
    } catch (const model::ParamError& e) {
      throw ApiError{ErrorCode::BadRequest, e.message};
    }
  }
  throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be an integer, got " + shownJson(v)};
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
                   "'" + name + "' in the body (" + shownJson((*req.body)[name]) + ") differs from the path"};
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
    try {
      return model::parseBoolean(v->get_ref<const std::string&>(), name);
    } catch (const model::ParamError& e) {
      throw ApiError{ErrorCode::BadRequest, e.message};
    }
  }
  if (v->is_number_integer() && (v->get<int64_t>() == 0 || v->get<int64_t>() == 1))
    return v->get<int64_t>() != 0;
  throw ApiError{ErrorCode::BadRequest, "'" + name + "' must be a boolean, got " + shownJson(*v)};
}

std::optional<std::string> nulInJson(const nlohmann::json& v, const std::string& path) {
  if (v.is_string()) {
    if (v.get_ref<const std::string&>().find('\0') != std::string::npos)
      return "the string at " + (path.empty() ? std::string("the top") : path) +
             " holds a NUL byte (\\u0000), which cannot be stored";
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string at = path.empty() ? it.key() : path + "." + it.key();
      if (it.key().find('\0') != std::string::npos)
        return "a key in " + (path.empty() ? std::string("the body") : path) +
               " holds a NUL byte (\\u0000), which cannot be stored";
      if (auto bad = nulInJson(it.value(), at)) return bad;
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      if (auto bad = nulInJson(v[i], path + "[" + std::to_string(i) + "]")) return bad;
  }
  return std::nullopt;
}

std::string uuidParam(const Request& req, const std::string& name) {
  std::string v = stringParam(req, name);
  if (!model::isUuid(v)) throw ApiError{ErrorCode::BadRequest, "'" + name + "' is not a uuid: " + v};
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
  if (!r.stream) return ok(std::move(r.value));
  Reply reply;
  reply.stream = std::move(r.stream);
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

Reply okListing(nlohmann::json rows, const model::SortOrder& sort, int64_t limit) {
  if (!rows.is_array()) rows = nlohmann::json::array();
  auto key = [&](const nlohmann::json& r) -> const nlohmann::json& {
    static const nlohmann::json none;
    auto it = r.is_object() ? r.find(sort.field) : r.end();
    return it == r.end() ? none : *it;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const nlohmann::json& a, const nlohmann::json& b) {
    const nlohmann::json& x = sort.ascending ? key(a) : key(b);
    const nlohmann::json& y = sort.ascending ? key(b) : key(a);
    if (x.is_number() && y.is_number()) return x.get<double>() < y.get<double>();
    if (x.is_string() && y.is_string())
      return x.get_ref<const std::string&>() < y.get_ref<const std::string&>();
    return x.type() < y.type();
  });
  size_t total = rows.size();
  if (rows.size() > size_t(limit)) rows.erase(rows.begin() + limit, rows.end());
  Reply r = okPage(std::move(rows));
  (*r.json)["metadata"]["total"] = total;
  (*r.json)["metadata"]["after"] = total - (*r.json)["data"].size();
  (*r.json)["metadata"]["page_size"] = limit;
  return r;
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

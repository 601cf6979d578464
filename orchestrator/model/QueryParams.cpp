// Strict query-parameter decoders (see QueryParams.h). No I/O, no dependency beyond the standard library,
// so the HTTP fuzzer compiles this file as it is.
#include "model/QueryParams.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace inm::model {

std::string printable(std::string_view s, size_t max) {
  std::string out;
  for (unsigned char c : s.substr(0, max)) {
    if (c < 0x20 || c >= 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

namespace {

/// A value quoted in a message: at most 80 bytes, control and non-ASCII bytes escaped.
std::string quoted(std::string_view s) { return "'" + printable(s, 80) + "'"; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out;
}

} // namespace

std::optional<std::string> singleParam(const QueryPairs& query, const std::string& name) {
  auto [b, e] = query.equal_range(name);
  if (b == e) return std::nullopt;
  for (auto it = std::next(b); it != e; ++it)
    if (it->second != b->second)
      throw ParamError{"'" + name + "' is given more than once with different values (" + quoted(b->second) +
                       ", " + quoted(it->second) + ")"};
  return b->second;
}

int64_t parseInteger(std::string_view text, const std::string& name) {
  std::string_view digits = text;
  bool negative = !digits.empty() && digits[0] == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    throw ParamError{"'" + name + "' must be an integer, got " + quoted(text)};
  // Accumulate as a negative number: its range holds INT64_MIN.
  int64_t v = 0;
  for (char c : digits) {
    int d = c - '0';
    if (v < (std::numeric_limits<int64_t>::min() + d) / 10)
      throw ParamError{"'" + name + "' is out of the 64-bit integer range, got " + quoted(text)};
    v = v * 10 - d;
  }
  if (!negative) {
    if (v == std::numeric_limits<int64_t>::min())
      throw ParamError{"'" + name + "' is out of the 64-bit integer range, got " + quoted(text)};
    v = -v;
  }
  return v;
}

bool parseBoolean(std::string_view text, const std::string& name) {
  std::string s = lower(text);
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  throw ParamError{"'" + name + "' must be a boolean (true, false, 1, 0), got " + quoted(text)};
}

int64_t limitParam(const QueryPairs& query, int64_t fallback, int64_t max) {
  auto text = singleParam(query, "limit");
  if (!text) return fallback;
  int64_t v = parseInteger(*text, "limit");
  if (v < 1 || v > max)
    throw ParamError{"'limit' must be between 1 and " + std::to_string(max) + ", got " + quoted(*text)};
  return v;
}

SortOrder sortParam(const QueryPairs& query, const std::vector<std::string>& fields, SortOrder fallback) {
  auto text = singleParam(query, "sort");
  if (!text) return fallback;
  size_t dot = text->rfind('.');
  std::string field = lower(std::string_view(*text).substr(0, dot));
  std::string order = dot == std::string::npos ? "" : lower(std::string_view(*text).substr(dot + 1));
  if (std::find(fields.begin(), fields.end(), field) == fields.end() || (order != "asc" && order != "desc"))
    throw ParamError{"'sort' must be <" + joined(fields) + ">.<asc|desc>, got " + quoted(*text)};
  return SortOrder{field, order == "asc"};
}

std::map<std::string, std::vector<std::string>> filterParams(const QueryPairs& query,
                                                             const std::vector<std::string>& allowed) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [k, v] : query) {
    if (k.rfind("filter.", 0) != 0) continue;
    std::string name = k.substr(7);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      throw ParamError{"unknown filter " + quoted(k) +
                       (allowed.empty() ? std::string(": this endpoint has no filters")
                                        : " (filters: " + joined(allowed) + ")")};
    if (!v.empty()) out[name].push_back(v);
  }
  return out;
}

void checkFilterValues(const std::map<std::string, std::vector<std::string>>& filters,
                       const std::string& name, const std::vector<std::string>& values, bool negatable) {
  auto it = filters.find(name);
  if (it == filters.end()) return;
  for (const std::string& v : it->second) {
    std::string_view x = v;
    if (negatable && !x.empty() && x[0] == '!') x.remove_prefix(1);
    if (std::find(values.begin(), values.end(), x) == values.end())
      throw ParamError{"'filter." + name + "' must be one of " + joined(values) + ", got " + quoted(v)};
  }
}

PageCursor cursorParams(const QueryPairs& query, bool allowed) {
  PageCursor c;
  c.start = singleParam(query, "start");
  c.end = singleParam(query, "end");
  c.firstId = singleParam(query, "first_id");
  c.lastId = singleParam(query, "last_id");
  if (!allowed) {
    for (const char* k : {"start", "end", "first_id", "last_id"})
      if (query.count(k))
        throw ParamError{std::string("'") + k + "' is not supported: this endpoint answers in one page"};
    return c;
  }
  if (c.forward() && c.backward())
    throw ParamError{
        "give either 'start'/'last_id' (next page) or 'end'/'first_id' (previous page), not both"};
  return c;
}

bool isTimestamp(std::string_view s) {
  if (s.size() < 10 || s.size() > 40) return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  if (s[4] != '-' || s[7] != '-') return false;
  if (s.size() == 10) return true;
  if (s.size() < 19 || (s[10] != 'T' && s[10] != ' ')) return false;
  for (size_t i : {11, 12, 14, 15, 17, 18})
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  if (s[13] != ':' || s[16] != ':') return false;
  size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i + 1 || j - i - 1 > 9) return false;
    i = j;
  }
  std::string_view zone = s.substr(i);
  if (zone.empty() || zone == "Z") return true;
  // +HH:MM, -HH:MM, +HHMM
  if ((zone[0] != '+' && zone[0] != '-') || (zone.size() != 6 && zone.size() != 5)) return false;
  for (size_t k = 1; k < zone.size(); ++k)
    if (!(std::isdigit(static_cast<unsigned char>(zone[k])) ||
          (k == 3 && zone.size() == 6 && zone[k] == ':')))
      return false;
  return true;
}

TimeBound timeBound(const std::string& text, const std::string& name) {
  TimeBound b{"eq", text};
  size_t colon = text.find(':');
  if (colon == 2) {
    std::string op = lower(std::string_view(text).substr(0, 2));
    if (op == "ge" || op == "gt" || op == "le" || op == "lt") {
      b.op = op;
      b.value = text.substr(3);
    }
  }
  if (!isTimestamp(b.value))
    throw ParamError{"'" + name + "' must be [ge:|gt:|le:|lt:]<ISO 8601 timestamp>, got " + quoted(text)};
  return b;
}

std::string timestampKey(std::string_view s) {
  std::string out = s.size() >= 10 ? std::string(s.substr(0, 10)) : std::string(s);
  out += 'T';
  out += s.size() >= 19 ? std::string(s.substr(11, 8)) : std::string("00:00:00");
  out += '.';
  std::string fraction;
  if (s.size() > 19 && s[19] == '.')
    for (size_t i = 20; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) fraction += s[i];
  fraction.resize(9, '0');
  return out + fraction.substr(0, 9);
}

} // namespace inm::model

// Strict decoders for the query parameters of the listing endpoints (docs/server.md "Value validation"):
// integers, booleans, limits, `sort=<field>.<asc|desc>`, `filter.<name>` keys, paging cursors and timestamp
// bounds. Pure functions over the decoded query pairs, used by api/ (the routes) and service/ (the listings)
// and fuzzed by test/fuzz/HttpFuzzer.cpp. Invariant: a value that is not exactly what the endpoint declares
// throws ParamError whose message names the parameter and quotes the value; nothing is silently dropped,
// clamped or defaulted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inm::model {

/// A query parameter that is malformed for its endpoint (a 400 whose message names it).
struct ParamError {
  std::string message;
};

using QueryPairs = std::multimap<std::string, std::string>;

/// The one value of `name`, if given; a repeated scalar parameter with differing values is an error.
std::optional<std::string> singleParam(const QueryPairs& query, const std::string& name);

/// A decimal integer: an optional '-' then digits, within int64 (ParamError naming `name` otherwise).
int64_t parseInteger(std::string_view text, const std::string& name);

/// A boolean as the reference's clients write it: true/false in any case, 1/0.
bool parseBoolean(std::string_view text, const std::string& name);

/// `limit` (default `fallback`) within [1, max].
int64_t limitParam(const QueryPairs& query, int64_t fallback, int64_t max);

/// A `sort` value: one of `fields`, '.', then asc or desc (case-insensitive, like the reference).
/// `s` for an error message: at most `max` bytes, control and non-ASCII bytes as \xNN, "..." when cut.
std::string printable(std::string_view s, size_t max);

struct SortOrder {
  std::string field;
  bool ascending = true;
};
SortOrder sortParam(const QueryPairs& query, const std::vector<std::string>& fields, SortOrder fallback);

/// Every `filter.<name>` pair, by name (repeated keys kept in order); a name not in `allowed` is an error
/// naming the allowed ones. Empty values are dropped (a cleared filter in a form).
std::map<std::string, std::vector<std::string>> filterParams(const QueryPairs& query,
                                                             const std::vector<std::string>& allowed);

/// Each value of filter `name` must be one of `values` (after an optional leading '!' when `negatable`).
void checkFilterValues(const std::map<std::string, std::vector<std::string>>& filters,
                       const std::string& name, const std::vector<std::string>& values,
                       bool negatable = false);

/// The paging cursor of a listing: `start`+`last_id` (the next page) or `end`+`first_id` (the previous one);
/// the two directions together are an error, and so are the parameters on an endpoint that does not page
/// (`allowed` false).
struct PageCursor {
  std::optional<std::string> start, end, firstId, lastId;
  bool forward() const { return start || lastId; }
  bool backward() const { return end || firstId; }
};
PageCursor cursorParams(const QueryPairs& query, bool allowed);

/// Whether `s` looks like the ISO 8601 date-times the API hands out (`2026-01-01T00:00:01.000000+00:00`,
/// also without fraction or offset, with ' ' for 'T').
bool isTimestamp(std::string_view s);

/// A timestamp filter value `[ge:|gt:|le:|lt:]<timestamp>` (no operator = equal).
struct TimeBound {
  std::string op; ///< ge, gt, le, lt or eq
  std::string value;
};
TimeBound timeBound(const std::string& text, const std::string& name);

/// The same instant text compared as the API writes timestamps: `2026-01-01T00:00:01[.ffffff]…`, the
/// date-time part normalised to `YYYY-MM-DDTHH:MM:SS.ffffff` (offsets are ignored: the API writes UTC).
std::string timestampKey(std::string_view s);

} // namespace inm::model

// JSON integers wider than 64 bits in request bodies. nlohmann reads an integer literal that fits neither
// int64 nor uint64 as a double, so a compiler int such as 123456789012345678901234567890 (exact in the
// language, docs/limits.md) would be stored as 1.2345678901234568e+29: a silently different value. The
// server refuses such a number with a 400 naming where it is (docs/limits.md "Integers on the server").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace inm::model {

/// Whether `raw`, the text of a number the JSON parser read as a double, is an integer literal (no fraction,
/// no exponent): one too wide for 64 bits.
bool isWideInteger(std::string_view raw);

/// Where a wide integer sits in a parsed document.
struct WideInteger {
  std::string text;    ///< the literal as written
  std::string path;    ///< e.g. resources[2].attributes.size ("" when at the top)
  std::string pointer; ///< the same as a JSON pointer, e.g. /resources/2/attributes/size
};

/// Parses `text` like nlohmann::json::parse(text, nullptr, false) (discarded on a syntax error), and
/// records in `wide` the first integer too wide for 64 bits (its value in the result is a double: the caller
/// refuses the document when `wide.text` is not empty).
nlohmann::json parseJson(const std::string& text, WideInteger& wide);

/// The 400's message for `wide`: names the resource (resources[i], with `resourceId` when known) and the
/// attribute when the path is inside a put_version resource, else the path.
std::string wideIntegerMessage(const WideInteger& wide, const std::string& resourceId = "");

} // namespace inm::model

namespace inm::model {

/// Rewrites for a jsonb column the float literals of `json` (a valid JSON text) that PostgreSQL would print
/// back as integers. jsonb keeps a number as `numeric`, whose display scale is the literal's fraction digits
/// minus its exponent, floored at 0: `1e+20`, `1.5e+300` and `2.5e1` come back as `100000000000000000000`,
/// `15000…0` and `25`, which a client parses as an int. Such a literal (an exponent at least its fraction
/// digits) becomes its plain digits plus `.0` (`100000000000000000000.0`: same value, scale 1, so jsonb
/// prints it with the `.0`). Literals jsonb keeps with a `.` (`2.5`, `1.0`, `1.5e-300`), integers, strings
/// and keys are left as they are. Returns false, `out` untouched, when nothing needs rewriting (the usual
/// case: no copy); else true with the whole rewritten text in `out`. docs/limits.md "Floats in jsonb".
bool keepFloatsInJsonb(std::string_view json, std::string& out);

/// Whether `a` and `b` are the same JSON value, kinds included: nlohmann's `==` (and jsonb's `=`) but a float
/// never equals an int, at any depth (`1.0` vs `1`, `1e16` vs `10000000000000000`); int64 and uint64 are
/// one kind. The desired-state diff uses it, so a float<->int change the attribute hash sees is shown too.
bool sameJson(const nlohmann::json& a, const nlohmann::json& b);

} // namespace inm::model

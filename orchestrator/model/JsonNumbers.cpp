// See JsonNumbers.h. The parse is nlohmann's own DOM builder behind a SAX filter that follows the path of
// the value being read.
#include "model/JsonNumbers.h"

#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace inm::model {

bool isWideInteger(std::string_view raw) {
  return !raw.empty() && raw.find_first_of(".eE") == std::string_view::npos;
}

namespace {

using Json = nlohmann::json;

class PathSax {
 public:
  PathSax(Json& result, WideInteger& wide) : dom_(result, false), wide_(wide) {}

  bool null() { return done(dom_.null()); }
  bool boolean(bool v) { return done(dom_.boolean(v)); }
  bool number_integer(Json::number_integer_t v) { return done(dom_.number_integer(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return done(dom_.number_unsigned(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& raw) {
    if (wide_.text.empty() && isWideInteger(raw)) {
      wide_.text = raw;
      render();
    }
    return done(dom_.number_float(v, raw));
  }
  bool string(Json::string_t& v) { return done(dom_.string(v)); }
  bool binary(Json::binary_t& v) { return done(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    segments_.push_back({false, 0, {}});
    return dom_.start_object(n);
  }
  bool key(Json::string_t& k) {
    segments_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() {
    segments_.pop_back();
    return done(dom_.end_object());
  }
  bool start_array(std::size_t n) {
    segments_.push_back({true, 0, {}});
    return dom_.start_array(n);
  }
  bool end_array() {
    segments_.pop_back();
    return done(dom_.end_array());
  }
  template <class Exception>
  bool parse_error(std::size_t pos, const std::string& token, const Exception& ex) {
    return dom_.parse_error(pos, token, ex);
  }

 private:
  struct Segment {
    bool array;
    size_t index; ///< arrays: the element being read
    std::string key;
  };
  /// After a complete value: the enclosing array moves on to its next element.
  bool done(bool ok) {
    if (!segments_.empty() && segments_.back().array) ++segments_.back().index;
    return ok;
  }
  void render() {
    for (const Segment& s : segments_) {
      if (s.array) {
        wide_.path += "[" + std::to_string(s.index) + "]";
        wide_.pointer += "/" + std::to_string(s.index);
      } else {
        if (!wide_.path.empty()) wide_.path += ".";
        wide_.path += s.key;
        wide_.pointer += "/";
        for (char c : s.key)
          wide_.pointer += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
      }
    }
  }
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  WideInteger& wide_;
  std::vector<Segment> segments_;
};

} // namespace

std::string wideIntegerMessage(const WideInteger& wide, const std::string& resourceId) {
  std::string where = wide.path.empty() ? std::string("the body") : wide.path;
  // resources[i].NAME… (a put_version resource's attributes are its fields; an "attributes" level is
  // skipped too).
  size_t close = wide.path.find("].");
  if (wide.path.rfind("resources[", 0) == 0 && close != std::string::npos) {
    std::string attribute = wide.path.substr(close + 2);
    if (attribute.rfind("attributes.", 0) == 0) attribute.erase(0, 11);
    where = wide.path.substr(0, close + 1) + (resourceId.empty() ? "" : " (" + resourceId + ")") +
            ", attribute '" + attribute + "'";
  }
  return where + ": the integer " + wide.text +
         " does not fit 64 bits; the server keeps integers exactly only up to 64 bits and refuses it rather "
         "than store a different value";
}

nlohmann::json parseJson(const std::string& text, WideInteger& wide) {
  Json result;
  PathSax sax(result, wide);
  if (!Json::sax_parse(text, &sax, Json::input_format_t::json, true)) return Json(Json::value_t::discarded);
  return result;
}

} // namespace inm::model

namespace inm::model {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// The longest integer part a rewrite writes: beyond any finite double (about 1.8e308), so a longer one is
/// left as written rather than expanded into a huge text.
constexpr size_t kMaxPlainDigits = 400;

/// If the number literal `lit` needs the rewrite, appends its plain form to `plain` and returns true.
bool plainFloat(std::string_view lit, std::string& plain) {
  size_t i = 0;
  bool negative = i < lit.size() && lit[i] == '-';
  if (negative) ++i;
  size_t intBegin = i;
  while (i < lit.size() && isDigit(lit[i])) ++i;
  std::string_view intDigits = lit.substr(intBegin, i - intBegin);
  std::string_view fracDigits;
  if (i < lit.size() && lit[i] == '.') {
    size_t f = ++i;
    while (i < lit.size() && isDigit(lit[i])) ++i;
    fracDigits = lit.substr(f, i - f);
  }
  if (i == lit.size() || (lit[i] != 'e' && lit[i] != 'E')) return false; // no exponent: jsonb keeps its text
  ++i;
  bool negativeExp = i < lit.size() && lit[i] == '-';
  if (i < lit.size() && (lit[i] == '-' || lit[i] == '+')) ++i;
  size_t exponent = 0;
  for (; i < lit.size(); ++i) {
    if (!isDigit(lit[i])) return false; // not a JSON number: left as written
    exponent = exponent * 10 + size_t(lit[i] - '0');
    if (exponent > kMaxPlainDigits) return false; // not a finite double: left as written
  }
  if (negativeExp || exponent < fracDigits.size()) return false; // a display scale of 1 or more: has a '.'
  size_t zeros = exponent - fracDigits.size();
  // The digits without leading zeros (JSON forbids them), then the exponent's zeros.
  std::string digits;
  digits.reserve(intDigits.size() + fracDigits.size() + zeros + 3);
  digits.append(intDigits).append(fracDigits);
  size_t lead = digits.find_first_not_of('0');
  if (lead == std::string::npos) {
    digits = "0";
  } else {
    digits.erase(0, lead);
    digits.append(zeros, '0');
  }
  if (digits.size() > kMaxPlainDigits) return false;
  if (negative) plain += '-';
  plain += digits;
  plain += ".0";
  return true;
}

/// Whether an 'e' or 'E' follows a digit somewhere in `json`: only then can a literal need the rewrite. 16
/// bytes a step with SSE2 (x86-64's baseline), so the usual text (no float with an exponent) costs little
/// more than reading it (a byte-by-byte loop took about 1.3 ns a byte on a loaded machine, this about 0.07).
bool hasDigitExponent(std::string_view json) {
  const auto* s = reinterpret_cast<const unsigned char*>(json.data());
  size_t n = json.size(), i = 1;
#if defined(__SSE2__)
  const __m128i lower = _mm_set1_epi8(0x20), e = _mm_set1_epi8('e'), zero = _mm_set1_epi8('0'),
                nine = _mm_set1_epi8(9);
  for (; i + 16 <= n; i += 16) {
    __m128i cur = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    __m128i prev = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i - 1));
    __m128i isE = _mm_cmpeq_epi8(_mm_or_si128(cur, lower), e);
    __m128i d = _mm_sub_epi8(prev, zero);
    __m128i isDigit = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d); // prev - '0' <= 9, unsigned
    if (_mm_movemask_epi8(_mm_and_si128(isE, isDigit)) != 0) return true;
  }
#endif
  for (; i < n; ++i)
    if ((s[i] | 0x20) == 'e' && isDigit(char(s[i - 1]))) return true;
  return false;
}

/// The index of the quote closing the string whose text starts at `from` (json.size() if none).
size_t closingQuote(std::string_view json, size_t from) {
  for (;;) {
    const void* q = std::memchr(json.data() + from, '"', json.size() - from);
    if (!q) return json.size();
    size_t at = size_t(static_cast<const char*>(q) - json.data());
    size_t backslashes = 0;
    while (at - backslashes > from && json[at - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return at;
    from = at + 1;
  }
}

} // namespace

bool keepFloatsInJsonb(std::string_view json, std::string& out) {
  if (!hasDigitExponent(json)) return false;
  size_t copied = 0; // json[0, copied) is already in `out` (once a rewrite began)
  bool rewrote = false;
  std::string plain;
  size_t n = json.size();
  for (size_t i = 0; i < n;) {
    char c = json[i];
    if (c == '"') { // a string or key: skipped whole to its closing quote (one not escaped)
      i = closingQuote(json, i + 1) + 1;
      continue;
    }
    if (c != '-' && !isDigit(c)) {
      ++i;
      continue;
    }
    size_t begin = i;
    bool exponent = false;
    for (++i; i < n; ++i) {
      char d = json[i];
      if (d == 'e' || d == 'E')
        exponent = true;
      else if (!isDigit(d) && d != '.' && d != '-' && d != '+')
        break;
    }
    if (!exponent) continue;
    plain.clear();
    if (!plainFloat(json.substr(begin, i - begin), plain)) continue;
    if (!rewrote) out.clear();
    rewrote = true;
    out.append(json.data() + copied, begin - copied);
    out += plain;
    copied = i;
  }
  if (!rewrote) return false;
  out.append(json.data() + copied, n - copied);
  return true;
}

bool sameJson(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number() && a.is_number_float() != b.is_number_float()) return false;
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    // Both are sorted maps of the same size: equal key sets iff the keys pair up in order.
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
      if (i.key() != j.key() || !sameJson(i.value(), j.value())) return false;
    return true;
  }
  return a == b;
}

} // namespace inm::model

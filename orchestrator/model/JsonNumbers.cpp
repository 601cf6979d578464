// See JsonNumbers.h. The parse is nlohmann's own DOM builder behind a SAX filter that follows the path of
// the value being read.
#include "model/JsonNumbers.h"

#include <vector>

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

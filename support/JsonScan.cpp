// The walks of support/JsonScan.h (the cursor itself is inline in the header: it is the hot loop of every
// caller).
#include "support/JsonScan.h"

#include <nlohmann/json.hpp>

namespace inm::support {

llvm::Error notAJson(std::string_view what, std::string_view kind) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%.*s is not a JSON %.*s", int(what.size()),
                                 what.data(), int(kind.size()), kind.data());
}

llvm::Error malformedJson(std::string_view what, const JsonCursor& c) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%.*s is malformed: %s", int(what.size()),
                                 what.data(), c.error().c_str());
}

llvm::Error forEachMember(std::string_view object, std::string_view what,
                          llvm::function_ref<llvm::Error(std::string_view, std::string_view)> member) {
  JsonCursor c(object);
  if (!c.accept('{')) return notAJson(what, "object");
  if (!c.accept('}')) {
    do {
      std::string_view key, raw;
      if (!c.string(key) || !c.expect(':') || !c.value(raw)) return malformedJson(what, c);
      if (llvm::Error e = member(key.substr(1, key.size() - 2), raw)) return e;
    } while (c.accept(','));
    if (!c.expect('}')) return malformedJson(what, c);
  }
  if (!c.atEnd()) return c.fail("text after the end"), malformedJson(what, c);
  return llvm::Error::success();
}

llvm::Error forEachElement(std::string_view array, std::string_view what,
                           llvm::function_ref<llvm::Error(size_t, std::string_view)> element) {
  JsonCursor c(array);
  if (!c.accept('[')) return notAJson(what, "array");
  if (!c.accept(']')) {
    size_t index = 0;
    do {
      std::string_view raw;
      if (!c.value(raw)) return malformedJson(what, c);
      if (llvm::Error e = element(index++, raw)) return e;
    } while (c.accept(','));
    if (!c.expect(']')) return malformedJson(what, c);
  }
  if (!c.atEnd()) return c.fail("text after the end"), malformedJson(what, c);
  return llvm::Error::success();
}

llvm::Expected<std::string> decodeString(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"')
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "expected a JSON string");
  if (raw.find('\\') == std::string_view::npos) return std::string(raw.substr(1, raw.size() - 2));
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_string()) return llvm::createStringError(llvm::inconvertibleErrorCode(), "malformed JSON string");
  return j.get<std::string>();
}

} // namespace inm::support

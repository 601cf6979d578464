// The artifact's streaming reader (ArtifactScan.h) on support/JsonScan.h: the top level is walked here rather
// than with forEachMember, so that `resources` is read once, element by element, instead of being skipped as
// one value first.
#include "artifact/ArtifactScan.h"

namespace inm::artifact {

llvm::Error scanArtifact(std::string_view text, const ArtifactVisitor& visitor) {
  constexpr std::string_view what = "the export artifact";
  bool sawResources = false;
  support::JsonCursor c(text);
  if (!c.accept('{')) return support::notAJson(what, "object");
  if (!c.accept('}')) {
    do {
      std::string_view key, raw;
      if (!c.string(key) || !c.expect(':')) return support::malformedJson(what, c);
      key = key.substr(1, key.size() - 2);
      if (key != "resources") {
        if (!c.value(raw)) return support::malformedJson(what, c);
        if (llvm::Error e = visitor.member(key, raw)) return e;
        continue;
      }
      sawResources = true;
      if (!c.expect('[')) return support::malformedJson(what, c);
      if (!c.accept(']')) {
        size_t index = 0;
        do {
          if (!c.value(raw)) return support::malformedJson(what, c);
          if (llvm::Error e = visitor.resource(index++, raw)) return e;
        } while (c.accept(','));
        if (!c.expect(']')) return support::malformedJson(what, c);
      }
    } while (c.accept(','));
    if (!c.expect('}')) return support::malformedJson(what, c);
  }
  if (!c.atEnd()) return c.fail("text after the end"), support::malformedJson(what, c);
  if (!sawResources)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the export artifact has no `resources` array");
  return llvm::Error::success();
}

} // namespace inm::artifact

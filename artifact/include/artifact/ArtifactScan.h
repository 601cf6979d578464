// The streaming reader of the artifact document (docs/artifact.md): one pass over the text that hands each
// top-level member and each element of `resources` to a callback as the raw JSON text it occupies, without
// building a tree of the document. Consumers parse only what they need (a resource object, the `files`
// entries they want) and copy the rest as bytes; this is how the client's push, readArtifact and the Python
// bridge's code materialisation read an artifact of 100k resources. Invariant: a raw value handed out is one
// complete JSON value as it appears in the text (whitespace trimmed); malformed text is an error naming the
// byte offset, and a callback's error stops the scan and is returned as it is.
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <cstddef>
#include <string_view>

namespace inm::artifact {

/// Calls `member(key, raw)` for each member of the JSON object `object` in document order; `key` is the text
/// between its quotes (escapes are not decoded: artifact keys are plain words, file keys are sha1 hex, ids
/// are compared as their JSON text). `what` names the object in errors ("the export artifact", "files", …).
llvm::Error forEachMember(std::string_view object, std::string_view what,
                          llvm::function_ref<llvm::Error(std::string_view key, std::string_view raw)> member);

/// Calls `element(index, raw)` for each element of the JSON array `array`.
llvm::Error forEachElement(std::string_view array, std::string_view what,
                           llvm::function_ref<llvm::Error(size_t index, std::string_view raw)> element);

/// What scanArtifact hands out.
struct ArtifactVisitor {
  /// A top-level member other than `resources`.
  llvm::function_ref<llvm::Error(std::string_view key, std::string_view raw)> member;
  /// One element of `resources` (an object's text, not validated beyond its brackets), in document order.
  llvm::function_ref<llvm::Error(size_t index, std::string_view raw)> resource;
};

/// Scans an artifact document once. Errors: malformed JSON at a byte offset, no `resources` array, or the
/// first error a callback returns.
llvm::Error scanArtifact(std::string_view text, const ArtifactVisitor& visitor);

/// The text of a JSON string token without its quotes, decoded (escapes applied); `raw` includes the quotes.
/// Strings without a backslash are returned without parsing.
llvm::Expected<std::string> decodeString(std::string_view raw);

} // namespace inm::artifact

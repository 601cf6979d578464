// The streaming reader of the artifact document (docs/artifact.md): one pass over the text that hands each
// top-level member and each element of `resources` to a callback as the raw JSON text it occupies, without
// building a tree of the document. Consumers parse only what they need (a resource object, the `files`
// entries they want) and copy the rest as bytes; this is how the client's push, readArtifact and the Python
// bridge's code materialisation read an artifact of 100k resources. Invariant: a raw value handed out is one
// complete JSON value as it appears in the text (whitespace trimmed); malformed text is an error naming the
// byte offset, and a callback's error stops the scan and is returned as it is. The JSON walking itself is
// support/JsonScan.h.
#pragma once

#include "support/JsonScan.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <cstddef>
#include <string_view>

namespace inm::artifact {

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

} // namespace inm::artifact

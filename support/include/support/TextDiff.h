// Human-readable differences between two file contents (support library), for dry-run reports, version
// compares and the CLI: a unified diff (`--- a`/`+++ b`, `@@ -l,n +l,n @@` hunks with 3 lines of context)
// for text, a one-line summary for binary content, and a note instead of a diff when the contents are too
// large or too different to show. Invariant: the work is bounded (at most kMaxDiffLines lines per side are
// compared and at most kMaxEditDistance changed lines searched), so a hostile pair of files cannot stall
// the server.
#pragma once

#include <cstddef>
#include <string>

namespace inm {

inline constexpr size_t kMaxDiffLines = 20000;     ///< lines per side that are compared
inline constexpr size_t kMaxEditDistance = 2000;   ///< changed lines beyond which only a summary is shown
inline constexpr size_t kMaxDiffOutputLines = 400; ///< lines of diff text shown before "… N more lines"

/// True when the content is not text: it holds a NUL byte or is not valid UTF-8.
bool looksBinary(const std::string& content);

/// The unified diff of `from` and `to` (named `fromName`/`toName` in the header lines), or for binary or
/// oversized content a one-line description such as "binary content differs: 1,024 bytes -> 2,048 bytes".
/// Equal contents give "".
std::string contentDiff(const std::string& from, const std::string& to, const std::string& fromName,
                        const std::string& toName);

} // namespace inm

// The diagnostics engine shared by every stage. A Diagnostic has a stable kind (DiagnosticKinds.def),
// the reference exception class derived from it, a message, a source range, an optional "reported in"
// statement text, "caused by" children (the reference's exception chaining) and notes.
// Rendering: a compiler-style line `file:line:col: error: msg [Class]` with the source line and a caret,
// followed at the end of a run by the reference-style trace (`Error: msg (reported in … (file:line))`,
// `caused by:` blocks) so users of the reference find the text they know. JSON mode emits one object each.
// Invariant: every error-severity report increments errorCount(); stages stop after a stage with errors.
#pragma once

#include "support/SourceManager.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>

#include <cassert>
#include <cstdint>
#include <string>
#include <vector>

namespace inm {

enum class Severity : uint8_t { Error, Warning, Note };

enum class DiagKind : uint16_t {
#define INM_DIAG(Kind, Sev, Class, Format) Kind,
#include "support/DiagnosticKinds.def"
  NumKinds
};

/// Static facts about a kind.
struct DiagKindInfo {
  const char* name; ///< e.g. "DoubleSet"
  Severity severity;
  const char* className; ///< reference exception class, e.g. "DoubleSetException" ("None" for notes)
  const char* format;    ///< fmt format string
};
const DiagKindInfo& diagKindInfo(DiagKind kind);

/// One reported problem, possibly with causes (rendered as "caused by:") and notes.
struct Diagnostic {
  DiagKind kind = DiagKind::NoteText; ///< always set by makeDiag or diagWithText
  Severity severity = Severity::Error;
  std::string message;
  SourceRange range;          ///< may be invalid (no location)
  std::string reportedIn;     ///< reference rendering of the statement, e.g. "t1.a = 3"; empty if none
  bool locWithColumn = false; ///< reference location shows line:col (declarations) or just line
  std::vector<Diagnostic> causes;
  std::vector<Diagnostic> notes;

  const char* className() const { return diagKindInfo(kind).className; }
  Diagnostic& note(Diagnostic n) {
    notes.push_back(std::move(n));
    return *this;
  }
  Diagnostic& causedBy(Diagnostic c) {
    causes.push_back(std::move(c));
    return *this;
  }
};

/// Builds a diagnostic from a kind's format and arguments.
template <typename... Args>
Diagnostic makeDiag(DiagKind kind, SourceRange range, Args&&... args) {
  Diagnostic d;
  d.kind = kind;
  d.severity = diagKindInfo(kind).severity;
  d.range = range;
  try {
    d.message = fmt::format(fmt::runtime(diagKindInfo(kind).format), std::forward<Args>(args)...);
  } catch (const fmt::format_error&) {
    assert(false && "diagnostic arguments do not match the kind's format");
    d.message = diagKindInfo(kind).format;
  }
  return d;
}

/// The text of `kind` with its format filled from `args`, for code that builds the message before it knows
/// where the diagnostic goes (an error returned through an out-parameter); pair it with diagWithText.
template <typename... Args>
std::string diagText(DiagKind kind, Args&&... args) {
  try {
    return fmt::format(fmt::runtime(diagKindInfo(kind).format), std::forward<Args>(args)...);
  } catch (const fmt::format_error&) {
    assert(false && "diagnostic arguments do not match the kind's format");
    return diagKindInfo(kind).format;
  }
}

/// A diagnostic of `kind` whose message was already made by diagText(kind, ...).
inline Diagnostic diagWithText(DiagKind kind, SourceRange range, std::string message) {
  Diagnostic d;
  d.kind = kind;
  d.severity = diagKindInfo(kind).severity;
  d.range = range;
  d.message = std::move(message);
  return d;
}

enum class DiagFormat : uint8_t { Text, Json };

/// Collects diagnostics; renders them on demand.
class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sm) : sm_(sm) {}

  /// Records a diagnostic (errors past the cap are counted but not kept).
  Diagnostic& report(Diagnostic d);
  template <typename... Args>
  Diagnostic& error(DiagKind kind, SourceRange range, Args&&... args) {
    return report(makeDiag(kind, range, std::forward<Args>(args)...));
  }

  unsigned errorCount() const { return errors_; }
  bool hasErrors() const { return errors_ != 0; }
  const std::vector<Diagnostic>& all() const { return diags_; }
  void setErrorCap(unsigned cap) { cap_ = cap; }
  /// Warnings are dropped when disabled (`--warnings=ignore`).
  void setWarningsEnabled(bool on) { warnings_ = on; }

  /// `file:line:col` (or `file:line` when withColumn is false) of a range, "" if invalid.
  std::string formatLoc(SourceRange r, bool withColumn) const;
  /// The reference's one-line rendering: `msg (reported in S (loc))` or `msg (loc)`.
  std::string referenceText(const Diagnostic& d) const;
  /// The reference's multi-line trace with "caused by:" blocks (MultiException as "error i:" blocks).
  std::string referenceTrace(const Diagnostic& d, unsigned indent = 0) const;

  /// Compiler-style rendering of every diagnostic (with source line and caret), or JSON lines.
  void render(llvm::raw_ostream& os, DiagFormat format, bool color = false) const;
  void renderOne(llvm::raw_ostream& os, const Diagnostic& d, bool color) const;
  std::string toJson(const Diagnostic& d) const;

  const SourceManager& sources() const { return sm_; }

 private:
  const SourceManager& sm_;
  std::vector<Diagnostic> diags_;
  unsigned errors_ = 0;
  unsigned cap_ = 50;
  bool warnings_ = true;
};

} // namespace inm

// Rendering of diagnostics in compiler style, reference-trace style and JSON; see Diagnostics.h.
#include "support/Diagnostics.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

namespace inm {

namespace {
const DiagKindInfo kInfos[] = {
#define INM_DIAG(Kind, Sev, Class, Format) {#Kind, Severity::Sev, #Class, Format},
#include "support/DiagnosticKinds.def"
};

const char* severityName(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "error";
}
} // namespace

const DiagKindInfo& diagKindInfo(DiagKind kind) { return kInfos[size_t(kind)]; }

Diagnostic& DiagnosticEngine::report(Diagnostic d) {
  static Diagnostic sink;
  if (d.severity == Severity::Warning && !warnings_) {
    sink = std::move(d);
    return sink;
  }
  if (d.severity == Severity::Error) {
    ++errors_;
    if (errors_ > cap_) {
      sink = std::move(d);
      return sink;
    }
  }
  diags_.push_back(std::move(d));
  return diags_.back();
}

std::string DiagnosticEngine::formatLoc(SourceRange r, bool withColumn) const {
  if (!r.valid()) return {};
  // Column 0: no column is known (locations in Python files): file:line.
  if (withColumn && r.col != 0) return fmt::format("{}:{}:{}", sm_.path(r.file).str(), r.line, r.col);
  return fmt::format("{}:{}", sm_.path(r.file).str(), r.line);
}

std::string DiagnosticEngine::referenceText(const Diagnostic& d) const {
  // The reference raises "is not complete" (UnsetException) without a statement: no location in its text.
  std::string loc = llvm::StringRef(d.className()) == "UnsetException" ? std::string()
                                                                       : formatLoc(d.range, d.locWithColumn);
  if (!d.reportedIn.empty()) return fmt::format("{} (reported in {} ({}))", d.message, d.reportedIn, loc);
  if (!loc.empty()) return fmt::format("{} ({})", d.message, loc);
  return d.message;
}

std::string DiagnosticEngine::referenceTrace(const Diagnostic& d, unsigned indent) const {
  std::string pad(indent, ' ');
  std::string out;
  if (d.kind == DiagKind::Multi) {
    out += pad + d.message + "\n";
    for (size_t i = 0; i < d.causes.size(); ++i) {
      out += pad + fmt::format("error {}:\n", i);
      out += referenceTrace(d.causes[i], indent + 2);
    }
    return out;
  }
  std::string text = referenceText(d);
  // Indent continuation lines of multi-line messages too.
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    out += pad + text.substr(start, nl == std::string::npos ? std::string::npos : nl - start) + "\n";
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  for (const Diagnostic& c : d.causes) {
    out += pad + "caused by:\n";
    out += referenceTrace(c, indent + 2);
  }
  return out;
}

void DiagnosticEngine::renderOne(llvm::raw_ostream& os, const Diagnostic& d, bool color) const {
  std::string loc = formatLoc(d.range, true);
  if (!loc.empty()) os << loc << ": ";
  os << severityName(d.severity) << ": " << d.message;
  const char* cls = d.className();
  if (llvm::StringRef(cls) != "None") os << " [" << cls << "]";
  os << "\n";
  if (d.range.valid()) {
    llvm::StringRef line = sm_.lineText(d.range.file, d.range.line);
    if (!line.empty()) {
      uint32_t col = d.range.col ? d.range.col : 1;
      // A very long line (a generated or hostile file) is shown as a window around the column.
      std::string prefix;
      if (line.size() > 240) {
        size_t from = col > 81 ? col - 81 : 0;
        if (from > line.size()) from = line.size() > 160 ? line.size() - 160 : 0;
        bool cut = from + 160 < line.size();
        line = line.substr(from, 160);
        if (from) {
          prefix = "...";
          col = uint32_t(col - from + prefix.size());
        }
        os << "  " << prefix << line << (cut ? "..." : "") << "\n  ";
        for (size_t i = 0; i < prefix.size(); ++i) os << ' ';
        for (uint32_t i = 1 + uint32_t(prefix.size()); i < col && i - prefix.size() <= line.size(); ++i)
          os << (line[i - prefix.size() - 1] == '\t' ? '\t' : ' ');
        os << "^\n";
        goto rendered;
      }
      os << "  " << line << "\n  ";
      for (uint32_t i = 1; i < col && i <= line.size(); ++i) os << (line[i - 1] == '\t' ? '\t' : ' ');
      uint32_t len = 1;
      if (d.range.endLine == d.range.line && d.range.endCol > col) len = d.range.endCol - col;
      os << '^';
      for (uint32_t i = 1; i < len && col + i <= line.size(); ++i) os << '~';
      os << "\n";
    }
  }
rendered:
  for (const Diagnostic& c : d.causes) {
    os << "  caused by: ";
    renderOne(os, c, color);
  }
  for (const Diagnostic& n : d.notes) renderOne(os, n, color);
}

static nlohmann::json toJsonValue(const DiagnosticEngine& eng, const Diagnostic& d) {
  nlohmann::json j;
  j["severity"] = severityName(d.severity);
  j["kind"] = diagKindInfo(d.kind).name;
  j["class"] = d.className();
  j["message"] = d.message;
  if (d.range.valid()) {
    // Absolute here (tools open it), while the text form keeps the reference's `./main.cf`.
    llvm::SmallString<256> file(eng.sources().path(d.range.file));
    llvm::sys::fs::make_absolute(file);
    llvm::sys::path::remove_dots(file); // "./" only: ".." may cross a symlink
    j["file"] = std::string(file.str());
    j["line"] = d.range.line;
    j["column"] = d.range.col;
    j["end_line"] = d.range.endLine;
    j["end_column"] = d.range.endCol;
  }
  if (!d.reportedIn.empty()) j["reported_in"] = d.reportedIn;
  if (!d.causes.empty()) {
    j["causes"] = nlohmann::json::array();
    for (const Diagnostic& c : d.causes) j["causes"].push_back(toJsonValue(eng, c));
  }
  if (!d.notes.empty()) {
    j["notes"] = nlohmann::json::array();
    for (const Diagnostic& n : d.notes) j["notes"].push_back(toJsonValue(eng, n));
  }
  return j;
}

std::string DiagnosticEngine::toJson(const Diagnostic& d) const { return toJsonValue(*this, d).dump(); }

void DiagnosticEngine::render(llvm::raw_ostream& os, DiagFormat format, bool color) const {
  for (const Diagnostic& d : diags_) {
    if (format == DiagFormat::Json)
      os << toJson(d) << "\n";
    else
      renderOne(os, d, color);
  }
  if (errors_ > cap_ && format == DiagFormat::Text)
    os << fmt::format("note: {} more errors not shown\n", errors_ - cap_);
}

} // namespace inm

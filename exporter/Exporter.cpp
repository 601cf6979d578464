// STUB — replaced by the artifact writer (issue #7).
#include "exporter/Exporter.h"
namespace inm::exporter {
ExportSummary exportModel(const runtime::Model&, DiagnosticEngine& diags, const ExportOptions&, llvm::raw_ostream& os) {
  os << "{}\n";
  return {};
}
} // namespace inm::exporter

// STUB — replaced by the static passes (issue #5).
#include "passes/Pipeline.h"
namespace inm::passes {
bool run(ir::Program&, DiagnosticEngine& diags) { return !diags.hasErrors(); }
} // namespace inm::passes

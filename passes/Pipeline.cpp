// The static pass pipeline (language.md §5.1 phase 3 "normalise"): runs the passes of Passes.h in
// order over a lowered Program and reports whether the model is free of static errors.
// Invariant: later passes run even after errors in earlier ones only when their inputs are complete
// (entity layout always runs, since every other pass reads it).
#include "passes/Pipeline.h"

#include "Passes.h"

namespace inm::passes {

bool run(ir::Program& program, DiagnosticEngine& diags) {
  layoutEntities(program, diags);
  checkDefaults(program, diags);
  resolveExpressions(program, diags);
  resolvePrecedence(program, diags);
  if (!diags.hasErrors()) warnShadowing(program, diags);
  return !diags.hasErrors();
}

} // namespace inm::passes

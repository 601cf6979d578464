// Private declarations of the individual static passes, run in this order by Pipeline.cpp:
// layoutEntities (ancestors, slots, defaults, indexes, implements, subtypes), checkDefaults (static
// validation of attribute defaults against primitive types), resolveExpressions (constructors, index
// lookups, calls, type hints, constructor checks), resolvePrecedence (project.yml policy), warnShadowing
// (nested variables that shadow an enclosing one; only on a model without static errors).
// Invariant: a pass only relies on the fields computed by the passes before it.
#pragma once

#include "ir/Lower.h"
#include "support/Diagnostics.h"

namespace inm::passes {

void layoutEntities(ir::Program& program, DiagnosticEngine& diags);
void checkDefaults(ir::Program& program, DiagnosticEngine& diags);
void resolveExpressions(ir::Program& program, DiagnosticEngine& diags);
void resolvePrecedence(ir::Program& program, DiagnosticEngine& diags);
/// VariableShadowWarning for variables of nested blocks that shadow an enclosing one (Shadowing.cpp).
void warnShadowing(const ir::Program& program, DiagnosticEngine& diags);

} // namespace inm::passes

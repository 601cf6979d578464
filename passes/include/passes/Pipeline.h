// Entry of the passes stage: the static passes over a lowered Program, in order (Pipeline.cpp lists
// them): inheritance and attribute layout, defaults check, indexes, implement resolution, expression
// name resolution (constructors, calls, index lookups, type hints), relation precedence policy.
#pragma once

#include "ir/Ir.h"
#include "support/Diagnostics.h"

namespace inm::passes {

/// Runs every pass; returns false if any reported an error.
bool run(ir::Program& program, DiagnosticEngine& diags);

} // namespace inm::passes

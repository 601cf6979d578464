// The nesting bound of a parsed file (docs/limits.md, "nesting"): every later walk over an Ast (lowering,
// name resolution, the evaluator, repr) recurses along the nesting of expressions and blocks, so a file whose
// Ast is deeper than Limits::maxNesting is rejected here, right after parsing, with one NestedTooDeep error
// at the first node past the limit. The check itself is iterative (an explicit work list), O(nodes).
#pragma once

#include "frontend/Ast.h"

namespace inm::frontend {

/// The first expression or statement deeper than `limit` (statement blocks and expression levels add up), or
/// an invalid range when the Ast is within it.
SourceRange findTooDeep(const Ast& ast, uint32_t limit);

} // namespace inm::frontend

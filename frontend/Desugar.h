// Private to the frontend: rewrites both parsers (ANTLR builder and fast path) share, so that they build
// node-for-node identical Asts (the differential tests compare ids, not only shapes).
#pragma once

#include "frontend/Ast.h"

namespace inm::frontend {

/// `m[k] is defined` → `(k in m) and (m[k] != null) and (m[k] != [])`, `lookup` being the MapLookup node.
/// Adds its nodes to `ast` in a fixed order and returns the outer `and`.
ExprId desugarMapIsDefined(Ast& ast, ExprId lookup, SourceRange r);

} // namespace inm::frontend

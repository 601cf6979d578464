// Private to the frontend: rewrites both parsers (ANTLR builder and fast path) share, so that they build
// node-for-node identical Asts (the differential tests compare ids, not only shapes).
#pragma once

#include "frontend/Ast.h"
#include "support/StringTable.h"

#include <llvm/ADT/StringRef.h>

#include <string>

namespace inm::frontend {

/// "a.b.c" → AttrRef(AttrRef(Name a, b), c), every node at `r` (f-string and `{{ }}` fields).
ExprId dottedRef(Ast& ast, StringTable& strings, llvm::StringRef text, SourceRange r);

/// True when a typedef constraint refers to `self` (or the typedef's own name) anywhere, or is a regex.
bool mentionsSelf(const Ast& ast, const StringTable& strings, ExprId id, StringId typedefName);

/// A plain string literal's node: String, or StringFormat with `{{ a.b }}` fields when it has placeholders
/// (`decoded` is the unescaped text, `original` the source text kept for messages).
ExprId stringLiteral(Ast& ast, StringTable& strings, const std::string& decoded, llvm::StringRef original,
                     SourceRange r);

/// `m[k] is defined` → `(k in m) and (m[k] != null) and (m[k] != [])`, `lookup` being the MapLookup node.
/// Adds its nodes to `ast` in a fixed order and returns the outer `and`.
ExprId desugarMapIsDefined(Ast& ast, ExprId lookup, SourceRange r);

} // namespace inm::frontend

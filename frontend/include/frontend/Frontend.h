// Entry points of the frontend stage: source text -> Ast. The ANTLR-generated parser is a private
// dependency of this library; syntax errors become ParserException-class diagnostics, never crashes.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace inm::frontend {

/// Parses one file already loaded into `sm`. On syntax errors, reports them to `diags` and returns an
/// Ast holding whatever was built (consumers must check diags.hasErrors()).
Ast parseFile(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags);

/// Writes a deterministic, indented dump of the tree (for `inmanta compile --dump-ast` golden tests).
void dumpAst(const Ast& ast, const StringTable& strings, const SourceManager& sm, llvm::raw_ostream& os);

/// Python's repr() of a string ('a', "it's", escapes for quotes, backslashes and control characters).
std::string pyStrRepr(llvm::StringRef s);

/// The reference compiler's rendering of an expression in error messages ("reported in …"):
/// `t1.a`, `3`, `'str'`, `(1 + 'hello')`, `std::print(u)`, `Construct(Test1)`, `Format('{{a}}')`,
/// `b['a']`, `List()`, `h1.files[[('name', 'f1')]]`, `Test[[('a', 'a')]]`, `Not(x)`, …
std::string reprExpr(const Ast& ast, ExprId id, const StringTable& strings);
/// An attribute's default value in "reported in" texts: the reference never folds a default's list literal
/// into a constant, so it stays `List()`; other defaults render as reprExpr does.
std::string reprDefault(const Ast& ast, ExprId id, const StringTable& strings);
/// The reference's pretty_print of an expression (typedef constraints, operator operands): `(self > 0)`,
/// `[x for x in l]`, `T(a=1)`, non-constant lists as `[a,b]`.
std::string prettyExpr(const Ast& ast, ExprId id, const StringTable& strings);
/// The same for a statement: `t1.a = 3`, `If`, `For`, an expression statement as its expression.
std::string reprStmt(const Ast& ast, StmtId id, const StringTable& strings);

} // namespace inm::frontend

// Entry points of the frontend stage: source text -> Ast. The ANTLR-generated parser is a private
// dependency of this library; syntax errors become ParserException-class diagnostics, never crashes.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string>

namespace inm::frontend {

/// Which parser reads a file. The driver sets it (driver/CompileArgs.cpp reads INM_PARSER for compatibility).
enum class ParserMode {
  Default,    // the hand-written fast path; on any doubt the ANTLR path parses the file and reports
  Antlr,      // the ANTLR path only
  FastStrict, // as Default, but a fast-path rejection of a file ANTLR accepts is an error (testing)
  FastCheck,  // both paths on every file; any difference of the Asts is an error (testing)
};

/// The mode named `name` ("", "antlr", "fast-strict", "fast-check"); nullopt for an unknown name.
std::optional<ParserMode> parserModeFromName(llvm::StringRef name);

struct ParseOptions {
  ParserMode mode = ParserMode::Default;
};

/// Parses one file already loaded into `sm`. On syntax errors, reports them to `diags` and returns an
/// Ast holding whatever was built (consumers must check diags.hasErrors()).
Ast parseFile(FileId file, const SourceManager& sm, StringTable& strings, DiagnosticEngine& diags,
              const ParseOptions& opts = {});

struct DumpOptions {
  /// Append every store, field and full range (the parser differential tests; env INM_DUMP_RANGES in the
  /// driver).
  bool ranges = false;
};

/// Writes a deterministic, indented dump of the tree (for `inmanta compile --dump-ast` golden tests).
void dumpAst(const Ast& ast, const StringTable& strings, const SourceManager& sm, llvm::raw_ostream& os,
             const DumpOptions& opts = {});

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
/// Whether the reference locates an expression with a column (`file:line:col`) or by line only: nodes built
/// from a name token (variable references) and f-strings carry one; a conditional expression takes its
/// condition's location; literals, operators, calls, constructors and attribute references have a line only.
bool locationHasColumn(const Ast& ast, ExprId id);

} // namespace inm::frontend

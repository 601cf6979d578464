// STUB — replaced by the ANTLR-based parser (issue #4).
#include "frontend/Frontend.h"
namespace inm::frontend {
Ast parseFile(FileId file, const SourceManager&, StringTable&, DiagnosticEngine& diags) {
  Ast ast;
  ast.file = file;
  diags.error(DiagKind::ParserError, SourceRange{}, "parser not built yet");
  return ast;
}
void dumpAst(const Ast&, const StringTable&, const SourceManager&, llvm::raw_ostream&) {}
} // namespace inm::frontend
namespace inm::frontend {
std::string reprExpr(const Ast&, ExprId, const StringTable&) { return "?"; }
std::string reprStmt(const Ast&, StmtId, const StringTable&) { return "?"; }
} // namespace inm::frontend

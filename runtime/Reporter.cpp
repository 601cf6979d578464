// Where evaluation errors go: report or capture, and placement at a node (see Reporter.h).
#include "Evaluator.h"

namespace inm::runtime {

std::string Reporter::reprNode(uint32_t file, uint32_t node, bool isStmt) const {
  if (node == kNone) return {};
  const frontend::Ast& ast = prog_.ast(file);
  return isStmt ? frontend::reprStmt(ast, StmtId{node}, *prog_.strings)
                : frontend::reprExpr(ast, ExprId{node}, *prog_.strings);
}

SourceRange Reporter::rangeOf(uint32_t file, uint32_t node, bool isStmt) const {
  if (node == kNone || file == kNone) return {};
  const frontend::Ast& ast = prog_.ast(file);
  return isStmt ? ast.stmts[StmtId{node}].range : ast.exprs[ExprId{node}].range;
}

Diagnostic Reporter::at(uint32_t file, uint32_t node, bool isStmt, Diagnostic d) const {
  d.range = rangeOf(file, node, isStmt);
  d.reportedIn = reprNode(file, node, isStmt);
  if (!isStmt && node != kNone && frontend::locationHasColumn(prog_.ast(file), ExprId{node}))
    d.locWithColumn = true;
  return d;
}

Status Reporter::report(Diagnostic d) {
  if (capture_) {
    capture_->push_back(std::move(d));
    return Status::Error;
  }
  if (!aborted_) diags_.report(std::move(d));
  aborted_ = true;
  return Status::Error;
}

} // namespace inm::runtime

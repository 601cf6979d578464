// See Nesting.h. The walk visits each statement and expression once, carrying the depth of its parent.
#include "Nesting.h"

#include <vector>

namespace inm::frontend {

namespace {

struct Item {
  bool isStmt;
  uint32_t id;
  uint32_t depth;
};

class DepthWalk {
 public:
  DepthWalk(const Ast& ast, uint32_t limit) : ast_(ast), limit_(limit) {}

  SourceRange run() {
    for (StmtId s : ast_.topLevel) push(true, s.index, 1);
    for (uint32_t i = 0; i < ast_.decls.size(); ++i) {
      const Decl& d = ast_.decls[DeclId{i}];
      for (uint32_t k = d.bodyBegin; k < d.bodyEnd; ++k) push(true, ast_.stmtLists[k].index, 1);
      if (d.expr.valid()) push(false, d.expr.index, 1);
      for (uint32_t k = d.annBegin; k < d.annEnd; ++k) push(false, ast_.exprLists[k].index, 1);
      for (uint32_t k = d.attrBegin; k < d.attrEnd; ++k)
        if (ast_.attrs[k].defaultValue.valid()) push(false, ast_.attrs[k].defaultValue.index, 1);
    }
    while (!work_.empty()) {
      Item it = work_.back();
      work_.pop_back();
      if (it.depth > limit_)
        return it.isStmt ? ast_.stmts[StmtId{it.id}].range : ast_.exprs[ExprId{it.id}].range;
      if (it.isStmt)
        stmtChildren(ast_.stmts[StmtId{it.id}], it.depth + 1);
      else
        exprChildren(ast_.exprs[ExprId{it.id}], it.depth + 1);
    }
    return SourceRange{};
  }

 private:
  void push(bool isStmt, uint32_t id, uint32_t depth) {
    if (id != UINT32_MAX) work_.push_back(Item{isStmt, id, depth});
  }
  void pushExpr(ExprId e, uint32_t depth) { push(false, e.index, depth); }

  void stmtChildren(const Stmt& s, uint32_t d) {
    pushExpr(s.target, d);
    pushExpr(s.value, d);
    for (uint32_t k = s.bodyBegin; k < s.bodyEnd; ++k) push(true, ast_.stmtLists[k].index, d);
    for (uint32_t k = s.elseBegin; k < s.elseEnd; ++k) push(true, ast_.stmtLists[k].index, d);
  }

  void exprChildren(const Expr& e, uint32_t d) {
    pushExpr(e.a, d);
    pushExpr(e.b, d);
    pushExpr(e.c, d);
    for (uint32_t k = e.begin; k < e.end && k < ast_.exprLists.size(); ++k) pushExpr(ast_.exprLists[k], d);
    for (uint32_t k = e.argBegin; k < e.argEnd; ++k) pushExpr(ast_.args[k].value, d);
    for (uint32_t k = e.loopBegin; k < e.loopEnd; ++k) pushExpr(ast_.loops[k].iterable, d);
    // Format parts, with the nested runs of f-string specs (each level one deeper).
    std::vector<std::pair<uint32_t, uint32_t>> runs{{e.partBegin, e.partEnd}};
    while (!runs.empty()) {
      auto [b, en] = runs.back();
      runs.pop_back();
      for (uint32_t k = b; k < en; ++k) {
        const FormatPart& p = ast_.formatParts[k];
        pushExpr(p.expr, d);
        if (p.specBegin != p.specEnd) runs.push_back({p.specBegin, p.specEnd});
      }
    }
  }

  const Ast& ast_;
  uint32_t limit_;
  std::vector<Item> work_;
};

} // namespace

SourceRange findTooDeep(const Ast& ast, uint32_t limit) { return DepthWalk(ast, limit).run(); }

} // namespace inm::frontend

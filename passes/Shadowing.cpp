// VariableShadowWarning: a static walk over every block (file top levels and implementation bodies) that
// warns when an `if`/`else` branch or a `for` body declares a variable (or loop variable) with the name of
// one declared in an enclosing block. The nested variable is a new one (spec 3.5/5.3); this only tells the
// user. A static pass (Passes.h), run last by the pipeline and only on a model without static errors.
// Invariant: one warning per shadowing declaration, in source order; never changes evaluation.
#include "Passes.h"

#include <fmt/format.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <vector>

namespace inm::passes {

namespace {

using frontend::Expr;
using frontend::ExprKind;
using frontend::Stmt;
using frontend::StmtId;

struct Declared {
  StringId name;
  SourceRange at;
};

class ShadowWalk {
 public:
  ShadowWalk(const frontend::Ast& ast, const StringTable& strings, DiagnosticEngine& diags)
      : ast_(ast), strings_(strings), diags_(diags) {}

  void block(const std::vector<StmtId>& stmts) {
    size_t outerEnd = visible_.size();
    for (StmtId sid : stmts) { // names declared directly in this block (first assignment counts)
      const Stmt& s = ast_.stmts[sid];
      if (s.kind != frontend::StmtKind::Assign || s.plusAssign) continue;
      const Expr& t = ast_.exprs[s.target];
      if (t.kind != ExprKind::Name || strings_.str(t.name).contains("::")) continue;
      int64_t prev = innermost(t.name);
      if (prev >= int64_t(outerEnd)) continue; // already declared in this block
      if (prev >= 0) warn(t.name, visible_[size_t(prev)].at, t.range);
      push(t.name, t.range);
    }
    for (StmtId sid : stmts) {
      const Stmt& s = ast_.stmts[sid];
      if (s.kind == frontend::StmtKind::If) {
        nested(s.bodyBegin, s.bodyEnd, StringId{}, {});
        nested(s.elseBegin, s.elseEnd, StringId{}, {});
      } else if (s.kind == frontend::StmtKind::For) {
        if (int64_t prev = innermost(s.var); prev >= 0) warn(s.var, visible_[size_t(prev)].at, s.varRange);
        nested(s.bodyBegin, s.bodyEnd, s.var, s.varRange);
      }
    }
    popTo(outerEnd);
  }

  void nested(uint32_t begin, uint32_t end, StringId loopVar, SourceRange at) {
    if (begin >= end) return;
    std::vector<StmtId> stmts(ast_.stmtLists.begin() + begin, ast_.stmtLists.begin() + end);
    size_t mark = visible_.size();
    if (loopVar.valid()) push(loopVar, at);
    block(stmts);
    popTo(mark);
  }

 private:
  // visible_ is a stack of declarations; byName_ maps a name to its positions in that stack (innermost last).
  int64_t innermost(StringId name) const {
    auto it = byName_.find(name.index);
    return it == byName_.end() || it->second.empty() ? -1 : int64_t(it->second.back());
  }
  void push(StringId name, SourceRange at) {
    byName_[name.index].push_back(uint32_t(visible_.size()));
    visible_.push_back({name, at});
  }
  void popTo(size_t mark) {
    while (visible_.size() > mark) {
      byName_[visible_.back().name.index].pop_back();
      visible_.pop_back();
    }
  }
  void warn(StringId name, SourceRange original, SourceRange shadow) {
    diags_.error(DiagKind::VariableShadow, shadow, strings_.str(name).str(),
                 diags_.formatLoc(original, false), diags_.formatLoc(shadow, false));
  }

  std::vector<Declared> visible_;
  llvm::DenseMap<uint32_t, llvm::SmallVector<uint32_t, 1>> byName_;
  const frontend::Ast& ast_;
  const StringTable& strings_;
  DiagnosticEngine& diags_;
};

} // namespace

void warnShadowing(const ir::Program& prog, DiagnosticEngine& diags) {
  assert(prog.strings && "a lowered program has its string table");
  const StringTable& strings = *prog.strings;
  for (uint32_t f = 0; f < prog.files.size(); ++f) {
    ShadowWalk(prog.ast(f), strings, diags).block(prog.ast(f).topLevel);
  }
  for (uint32_t i = 0; i < prog.impls.size(); ++i) {
    const ir::CodeRef& body = prog.impls[ir::ImplId{i}].body;
    if (!body.valid() || body.stmtBegin >= body.stmtEnd) continue;
    const frontend::Ast& ast = prog.ast(body.file);
    std::vector<StmtId> stmts(ast.stmtLists.begin() + body.stmtBegin, ast.stmtLists.begin() + body.stmtEnd);
    ShadowWalk(ast, strings, diags).block(stmts);
  }
}

} // namespace inm::passes

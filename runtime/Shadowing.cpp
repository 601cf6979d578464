// VariableShadowWarning: a static walk over every block (file top levels and implementation bodies) that warns
// when an `if`/`else` branch or a `for` body declares a variable (or loop variable) with the name of one
// declared in an enclosing block. The nested variable is a new one (spec 3.5/5.3); this only tells the user.
// Invariant: one warning per shadowing declaration, in source order; never changes evaluation.
#include "Evaluator.h"

#include <fmt/format.h>

namespace inm::runtime {

namespace {

struct Declared {
  StringId name;
  SourceRange at;
};

class ShadowWalk {
 public:
  ShadowWalk(const frontend::Ast& ast, const StringTable& strings, DiagnosticEngine& diags)
      : ast_(ast), strings_(strings), diags_(diags) {}

  void block(const std::vector<StmtId>& stmts, std::vector<Declared>& visible) {
    size_t outerEnd = visible.size();
    for (StmtId sid : stmts) {  // names declared directly in this block (first assignment counts)
      const Stmt& s = ast_.stmts[sid];
      if (s.kind != frontend::StmtKind::Assign || s.plusAssign) continue;
      const Expr& t = ast_.exprs[s.target];
      if (t.kind != ExprKind::Name || strings_.str(t.name).contains("::")) continue;
      bool mine = false;
      for (size_t i = outerEnd; i < visible.size() && !mine; ++i) mine = visible[i].name == t.name;
      if (mine) continue;
      if (const Declared* o = find(visible, outerEnd, t.name)) warn(t.name, o->at, t.range);
      visible.push_back({t.name, t.range});
    }
    for (StmtId sid : stmts) {
      const Stmt& s = ast_.stmts[sid];
      if (s.kind == frontend::StmtKind::If) {
        nested(s.bodyBegin, s.bodyEnd, visible, StringId{}, {});
        nested(s.elseBegin, s.elseEnd, visible, StringId{}, {});
      } else if (s.kind == frontend::StmtKind::For) {
        if (const Declared* o = find(visible, visible.size(), s.var)) warn(s.var, o->at, s.varRange);
        nested(s.bodyBegin, s.bodyEnd, visible, s.var, s.varRange);
      }
    }
    visible.resize(outerEnd);
  }

  void nested(uint32_t begin, uint32_t end, std::vector<Declared>& visible, StringId loopVar, SourceRange at) {
    if (begin >= end) return;
    std::vector<StmtId> stmts(ast_.stmtLists.begin() + begin, ast_.stmtLists.begin() + end);
    size_t mark = visible.size();
    if (loopVar.valid()) visible.push_back({loopVar, at});
    block(stmts, visible);
    visible.resize(mark);
  }

 private:
  static const Declared* find(const std::vector<Declared>& visible, size_t end, StringId name) {
    for (size_t i = end; i-- > 0;)
      if (visible[i].name == name) return &visible[i];
    return nullptr;
  }
  void warn(StringId name, SourceRange original, SourceRange shadow) {
    diags_.error(DiagKind::VariableShadow, shadow,
                 fmt::format("Variable `{}` shadowed: originally declared at {}, shadowed at {}",
                             strings_.str(name).str(), diags_.formatLoc(original, false),
                             diags_.formatLoc(shadow, false)));
  }

  const frontend::Ast& ast_;
  const StringTable& strings_;
  DiagnosticEngine& diags_;
};

} // namespace

void Evaluator::warnShadowing() {
  for (uint32_t f = 0; f < prog_.files.size(); ++f) {
    std::vector<Declared> visible;
    ShadowWalk(prog_.ast(f), strings_, diags_).block(prog_.ast(f).topLevel, visible);
  }
  for (uint32_t i = 0; i < prog_.impls.size(); ++i) {
    const ir::CodeRef& body = prog_.impls[ir::ImplId{i}].body;
    if (!body.valid() || body.stmtBegin >= body.stmtEnd) continue;
    const frontend::Ast& ast = prog_.ast(body.file);
    std::vector<StmtId> stmts(ast.stmtLists.begin() + body.stmtBegin, ast.stmtLists.begin() + body.stmtEnd);
    std::vector<Declared> visible;
    ShadowWalk(ast, strings_, diags_).block(stmts, visible);
  }
}

} // namespace inm::runtime

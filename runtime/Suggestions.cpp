// "Did you mean" notes of the runtime's not-found errors (unknown attribute, variable, namespace, type): the
// error keeps the reference's text and gets a DidYouMean note naming the nearest name in scope
// (support/Suggest.h). Invariant: only the error path runs this code; a successful lookup never pays for it.
#include "Evaluator.h"
#include "ir/Lower.h"
#include "support/Suggest.h"

namespace inm::runtime {

Status Evaluator::failRead(Ctx& ctx, ExprId self, uint32_t consumer, DiagKind kind, std::string message,
                           const std::string& suggestion) {
  Diagnostic d = diagWithText(kind, SourceRange{}, std::move(message));
  addDidYouMean(d, suggestion);
  if (consumer != kNone) return failDiag(diagAt(ctx.file, consumer, false, std::move(d)));
  if (ctx.reportStmt != kNone) return failDiag(diagAt(ctx.file, ctx.reportStmt, true, std::move(d)));
  return failDiag(diagAt(ctx.file, self.index, false, std::move(d)));
}

Status Evaluator::failAttrMissing(Ctx& ctx, uint32_t node, bool isStmt, DiagKind kind, ir::EntityId ent,
                                  llvm::StringRef name) {
  Diagnostic d = makeDiag(kind, SourceRange{}, name.str(), prog_.entities[ent].fullName);
  addDidYouMean(d, ir::suggestAttribute(prog_, ent, name));
  return failDiag(diagAt(ctx.file, node, isStmt, std::move(d)));
}

std::string Evaluator::nearVariable(Ctx& ctx, llvm::StringRef name) {
  if (!name.contains("::")) {
    Suggester near(name);
    scopes_.offerVisibleNames(ctx.scope, near);
    return near.best();
  }
  auto [nsName, var] = name.rsplit("::");
  const ir::Namespace& cur = prog_.namespaces[prog_.files[ctx.file].ns];
  StringId nsId = strings_.lookup(nsName);
  auto it = nsId.valid() ? cur.visible.find(nsId.index) : cur.visible.end();
  if (it == cur.visible.end()) { // the namespace is not visible: a near visible one
    Suggester near(nsName);
    for (const auto& visible : cur.visible) near.add(strings_.str(StringId{visible.first}));
    return near.best();
  }
  uint32_t nsFile = prog_.namespaces[it->second].file;
  if (nsFile == UINT32_MAX) return {};
  Suggester near(var);
  scopes_.offerVisibleNames(scopes_.ns(nsFile), near);
  std::string best = near.best();
  return best.empty() ? best : nsName.str() + "::" + best;
}

Status Evaluator::failVarMissing(Ctx& ctx, uint32_t node, bool isStmt, DiagKind kind, std::string text,
                                 llvm::StringRef name) {
  Diagnostic d = diagWithText(kind, SourceRange{}, std::move(text));
  addDidYouMean(d, nearVariable(ctx, name));
  return failDiag(diagAt(ctx.file, node, isStmt, std::move(d)));
}

Status Evaluator::failTypeNotFound(Ctx& ctx, const Expr& e, ExprId id) {
  llvm::StringRef name = strings_.str(e.name);
  Diagnostic d = makeDiag(DiagKind::TypeNotFound, SourceRange{}, name.str(),
                          prog_.namespaces[prog_.files[ctx.file].ns].name);
  unsigned kinds = e.kind == frontend::ExprKind::Call
                       ? ir::typeKindBit(ir::TypeKind::Plugin) | ir::typeKindBit(ir::TypeKind::Primitive)
                       : ir::typeKindBit(ir::TypeKind::Entity);
  addDidYouMean(d, ir::suggestType(prog_, prog_.files[ctx.file].ns, name, kinds));
  return failDiag(diagAt(ctx.file, id.index, false, std::move(d)));
}

} // namespace inm::runtime

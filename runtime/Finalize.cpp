// End of evaluation (language spec §5.8): index lookups that never matched, instances without a selected
// implementation, attributes never set and relations below their lower bound are collected; one error is
// reported as is, several as a MultiException; statements still blocked without any of these errors give
// "not all statements executed".
#include "Evaluator.h"

#include <fmt/format.h>

#include <algorithm>

namespace inm::runtime {

void Evaluator::finalize() {
  std::vector<Diagnostic> errors;

  // 1. index lookups that never matched
  llvm::DenseSet<uint32_t> reported; // unit indexes
  for (const IndexTables::PendingLookup& p : indexes_.pending()) {
    if (units_[p.unit].done || !reported.insert(p.unit.index).second) continue;
    errors.push_back(diagAt(
        p.file, p.node, false,
        makeDiag(DiagKind::IndexNoMatch, SourceRange{}, prog_.entities[p.entity].fullName, p.keyText)));
  }

  // 2. every instance: an implementation, every attribute complete
  for (uint32_t i = 0; i < model_.instances().size(); ++i) {
    InstanceId id{i};
    const Instance& inst = model_.instance(id);
    const ir::Entity& e = prog_.entities[inst.entity];
    if (!instHasImpl_[i]) {
      Diagnostic d = makeDiag(DiagKind::NoImplementationSelected, inst.createdAt, strings_.str(e.name).str());
      d.reportedIn = describeInst(id);
      errors.push_back(std::move(d));
    }
    for (uint32_t s = 0; s < e.slots.size(); ++s) {
      SlotId sid = attrSid(id, s);
      SlotMeta& m = slots_.meta(sid);
      const ir::Attribute& a = prog_.attrs[e.slots[s]];
      if (m.kind == SlotKind::Single) {
        if (m.state == kSet) continue;
        std::string attrLoc = diags_.formatLoc(a.range, true);
        errors.push_back(
            makeDiag(DiagKind::Unset, inst.createdAt, describeInst(id), strings_.str(a.name).str(), attrLoc));
        continue;
      }
      size_t n = slots_.valueCount(sid);
      if (n < a.mult.low) {
        std::string attrLoc = diags_.formatLoc(a.range, true);
        errors.push_back(makeDiag(DiagKind::UnsetTooFew, inst.createdAt, describeInst(id),
                                  strings_.str(a.name).str(), attrLoc, a.mult.low, n));
        continue;
      }
      m.state = kFrozen;
    }
  }
  // 3. relation annotations are evaluated now (names resolved statically by passes); an unknown one is an
  // error.
  llvm::DenseSet<uint64_t, PairKeyInfo> seenAnnotation; // both ends share their annotations
  for (uint32_t ai = 0; ai < prog_.attrs.size(); ++ai) {
    const ir::Attribute& a = prog_.attrs[ir::AttrId{ai}];
    for (const ir::CodeRef& c : a.annotations) {
      if (!c.valid() || !seenAnnotation.insert(pairKey(c.file, c.expr.index)).second) continue;
      Ctx actx;
      actx.file = c.file;
      actx.ast = &prog_.ast(c.file);
      actx.scope = scopes_.ns(c.file);
      Value v;
      if (eval(actx, c.expr, v) == Status::Ok && v.isUnknown()) {
        Diagnostic d = makeDiag(DiagKind::RelationAnnotationUnknown, a.range);
        errors.push_back(std::move(d));
      }
      if (aborted()) return;
    }
  }

  std::stable_sort(errors.begin(), errors.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.range.file.index != b.range.file.index) return a.range.file.index < b.range.file.index;
    return a.range.line < b.range.line;
  });
  if (errors.size() == 1) {
    failDiag(std::move(errors.front()));
    return;
  }
  if (errors.size() > 1) {
    Diagnostic multi = makeDiag(DiagKind::Multi, SourceRange{}, errors.size());
    for (Diagnostic& d : errors) multi.causedBy(std::move(d));
    failDiag(std::move(multi));
    return;
  }
  // 4. statements that never ran to the end
  for (uint32_t u = 0; u < units_.size(); ++u) {
    const Unit& un = units_[UnitId{u}];
    if (un.done) continue;
    bool isStmt = un.kind == UnitKind::Stmt;
    bool forwardStmt = un.kind == UnitKind::Forward && !un.originIsExpr;
    Diagnostic d = diagAt(un.file, un.kind == UnitKind::AttrAssign || un.originIsExpr ? un.origin : un.node,
                          isStmt || forwardStmt, makeDiag(DiagKind::NotAllExecuted, SourceRange{}, ""));
    d.message = diagText(DiagKind::NotAllExecuted, d.reportedIn); // the statement's text, known once placed
    failDiag(std::move(d));
    return;
  }
}

} // namespace inm::runtime

// Variable scopes: creation with their declared variables, and name lookup (see ScopeTable.h).
#include "Evaluator.h"
#include "support/Suggest.h"

#include <llvm/ADT/DenseSet.h>

#include <algorithm>

namespace inm::runtime {

ScopeTable::ScopeTable(const ir::Program& prog, const Model& model, SlotStore& slots)
    : prog_(prog), model_(model), slots_(slots) {
  selfName_ = prog.strings->lookup("self");
}

void ScopeTable::initNamespaces() {
  nsScope_.resize(prog_.files.size());
  for (uint32_t f = 0; f < prog_.files.size(); ++f) nsScope_[f] = newScope(ScopeId{}, f, kNone, kNone, kNone);
}

const std::vector<StringId>& ScopeTable::declaredNames(uint32_t file, uint32_t begin, uint32_t end) {
  uint64_t key = pairKey(file, begin) ^ (uint64_t(end) << 48);
  auto it = declared_.find(key);
  if (it != declared_.end()) return it->second;
  std::vector<StringId> names;
  llvm::DenseSet<uint32_t> seen; // names in first-assignment order, each once (a linear find was O(n^2))
  const frontend::Ast& ast = prog_.ast(file);
  auto consider = [&](StmtId sid) {
    const Stmt& s = ast.stmts[sid];
    if (s.kind != frontend::StmtKind::Assign || s.plusAssign) return;
    const Expr& t = ast.exprs[s.target];
    if (t.kind != ExprKind::Name) return;
    if (prog_.strings->str(t.name).contains("::")) return;
    if (seen.insert(t.name.index).second) names.push_back(t.name);
  };
  if (begin == kNone) {
    for (StmtId s : ast.topLevel) consider(s);
  } else {
    for (uint32_t i = begin; i < end; ++i) consider(ast.stmtLists[i]);
  }
  return declared_.try_emplace(key, std::move(names)).first->second;
}

ScopeId ScopeTable::newScope(ScopeId parent, uint32_t file, uint32_t instance, uint32_t begin, uint32_t end,
                             StringId loopVar) {
  if (instance != kNone && !loopVar.valid() && (begin == end || declaredNames(file, begin, end).empty()))
    return newEmptyScope(parent, file, instance);
  Scope sc;
  sc.parent = parent;
  sc.instance = instance;
  sc.file = file;
  sc.varBegin = uint32_t(scopeVars_.size());
  if (loopVar.valid()) scopeVars_.emplace_back(loopVar, slots_.newSlot(SlotKind::Var, kNone, loopVar.index));
  if (begin != end || begin == kNone) {
    const std::vector<StringId>& names = declaredNames(file, begin, end);
    for (StringId n : names) {
      if (loopVar.valid() && n == loopVar) continue;
      scopeVars_.emplace_back(n, slots_.newSlot(SlotKind::Var, kNone, n.index));
    }
  }
  sc.varEnd = uint32_t(scopeVars_.size());
  scopes_.push_back(sc);
  ScopeId id{uint32_t(scopes_.size() - 1)};
  if (sc.varEnd - sc.varBegin > kScanVars)
    for (uint32_t i = sc.varBegin; i < sc.varEnd; ++i)
      manyVars_.try_emplace(pairKey(id.index, scopeVars_[i].first.index), scopeVars_[i].second);
  return id;
}

ScopeId ScopeTable::newEmptyScope(ScopeId parent, uint32_t file, uint32_t instance) {
  // A scope without variables is never written after its creation, so the implementation bodies and
  // implement conditions of one instance share it (100k bench project: 468k -> 250k scopes).
  if (instance != kNone) {
    if (instance >= instScope_.size())
      instScope_.resize(std::max<size_t>(instance + 1, instScope_.size() * 2));
    ScopeId last = instScope_[instance];
    if (last.valid() && scopes_[last.index].parent == parent && scopes_[last.index].file == file) return last;
  }
  Scope sc;
  sc.parent = parent;
  sc.instance = instance;
  sc.file = file;
  sc.varBegin = sc.varEnd = uint32_t(scopeVars_.size());
  scopes_.push_back(sc);
  ScopeId id{uint32_t(scopes_.size() - 1)};
  if (instance != kNone) instScope_[instance] = id;
  return id;
}

ScopeId ScopeTable::staticScope(uint32_t file, const Value& self) {
  if (staticScope_.empty()) staticScope_.resize(prog_.files.size());
  if (!staticScope_[file].valid()) {
    Scope sc;
    sc.file = file;
    sc.isStatic = true;
    sc.instance = uint32_t(staticSelf_.size());
    staticSelf_.emplace_back();
    sc.varBegin = sc.varEnd = uint32_t(scopeVars_.size());
    scopes_.push_back(sc);
    staticScope_[file] = ScopeId{uint32_t(scopes_.size() - 1)};
  }
  staticSelf_[scopes_[staticScope_[file].index].instance] = self;
  return staticScope_[file];
}

SlotId ScopeTable::ownVar(ScopeId id, StringId name) const {
  const Scope& sc = scopes_[id.index];
  if (sc.varEnd - sc.varBegin > kScanVars) {
    auto it = manyVars_.find(pairKey(id.index, name.index));
    return it == manyVars_.end() ? SlotId{} : it->second;
  }
  SlotId sid;
  for (uint32_t i = sc.varBegin; i < sc.varEnd; ++i)
    if (scopeVars_[i].first == name) sid = scopeVars_[i].second;
  return sid;
}

SlotId ScopeTable::lookupVar(ScopeId scope, StringId name, Value* selfOut, bool* isSelf) const {
  *isSelf = false;
  for (ScopeId s = scope; s.valid(); s = scopes_[s.index].parent) {
    const Scope& sc = scopes_[s.index];
    if (sc.varEnd - sc.varBegin > kScanVars) {
      auto it = manyVars_.find(pairKey(s.index, name.index));
      if (it != manyVars_.end()) return it->second;
    } else {
      for (uint32_t i = sc.varBegin; i < sc.varEnd; ++i)
        if (scopeVars_[i].first == name) return scopeVars_[i].second;
    }
    if (sc.isStatic) {
      if (name == selfName_) {
        *isSelf = true;
        *selfOut = staticSelf_[sc.instance];
      }
      return SlotId{};
    }
    if (sc.instance != kNone) {
      if (name == selfName_) {
        *isSelf = true;
        *selfOut = Value::instance(InstanceId{sc.instance});
        return SlotId{};
      }
      int slot = prog_.slotOf(model_.entityOf(InstanceId{sc.instance}), name);
      if (slot >= 0) return slots_.attrSid(InstanceId{sc.instance}, uint32_t(slot));
    }
  }
  return SlotId{};
}

void ScopeTable::offerVisibleNames(ScopeId scope, Suggester& near) const {
  const StringTable& strings = *prog_.strings;
  for (ScopeId s = scope; s.valid(); s = scopes_[s.index].parent) {
    const Scope& sc = scopes_[s.index];
    for (uint32_t i = sc.varBegin; i < sc.varEnd; ++i) near.add(strings.str(scopeVars_[i].first));
    if (sc.isStatic) {
      near.add("self");
      return;
    }
    if (sc.instance != kNone) {
      near.add("self");
      for (ir::AttrId a : prog_.entities[model_.entityOf(InstanceId{sc.instance})].slots)
        near.add(strings.str(prog_.attrs[a].name));
    }
  }
}

} // namespace inm::runtime

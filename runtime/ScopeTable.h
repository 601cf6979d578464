// Private to the runtime: the variable scopes of one evaluation (language spec §5.1) — one namespace scope
// per file, block scopes of if/for bodies and comprehensions, implementation scopes that see an instance's
// attributes, and the static scopes of typedef constraints. Each scope owns a run of (name, slot) pairs
// whose slots live in the SlotStore. Included from Evaluator.h after the Scope definition.
// Invariant: a scope's variables are created with it (every name its block assigns), so lookups never add.
#pragma once

#include "ir/Ir.h"
#include "runtime/Model.h"
#include "support/ChunkedVector.h"
#include "support/PairKey.h"

#include <llvm/ADT/DenseMap.h>

#include <vector>

namespace inm {
class Suggester;
}

namespace inm::runtime {

class SlotStore;

class ScopeTable {
 public:
  ScopeTable(const ir::Program& prog, const Model& model, SlotStore& slots);

  /// One top-level scope per file (with its declared variables).
  void initNamespaces();
  ScopeId ns(uint32_t file) const { return nsScope_[file]; }

  /// A scope for the statements [begin, end) of `file`'s statement lists (kNone/kNone: the top level), with
  /// a slot per name they assign and one for `loopVar`. `instance` (raw index, or kNone) makes the instance's
  /// attributes visible.
  ScopeId newScope(ScopeId parent, uint32_t file, uint32_t instance, uint32_t begin, uint32_t end,
                   StringId loopVar = StringId{});
  /// A scope without variables of its own (implement conditions, implementation bodies that assign no
  /// variable); one per (instance, parent, file) is shared.
  ScopeId newEmptyScope(ScopeId parent, uint32_t file, uint32_t instance);
  /// The reusable static scope of `file` for typedef constraints, with `self` bound to `self`.
  ScopeId staticScope(uint32_t file, const Value& self);

  const Scope& operator[](ScopeId id) const { return scopes_[id.index]; }
  /// The first variable of a scope: the loop variable of a for / comprehension scope.
  SlotId firstVar(ScopeId id) const { return scopeVars_[scopes_[id.index].varBegin].second; }
  /// The variable `name` declared in `id` itself (no parents); invalid when none.
  SlotId ownVar(ScopeId id, StringId name) const;
  /// Finds the slot of variable `name` visible from `scope`; invalid if none. `*selfOut` set for `self`.
  SlotId lookupVar(ScopeId scope, StringId name, Value* selfOut, bool* isSelf) const;
  /// Offers every variable name visible from `scope` (and `self`, attributes of an implementation's
  /// instance) to `near`, for "did you mean" notes.
  void offerVisibleNames(ScopeId scope, Suggester& near) const;
  /// The names a statement run assigns (its block-local variables), cached.
  const std::vector<StringId>& declaredNames(uint32_t file, uint32_t begin, uint32_t end);

  uint32_t size() const { return uint32_t(scopes_.size()); }
  size_t varCount() const { return scopeVars_.size(); }
  /// Frees every table (the run is over).
  void release() {
    scopes_.clear();
    scopeVars_ = {};
    declared_ = decltype(declared_)();
    instScope_ = {};
    manyVars_ = decltype(manyVars_)();
  }

 private:
  const ir::Program& prog_;
  const Model& model_;
  SlotStore& slots_;
  StringId selfName_;
  ChunkedVector<Scope> scopes_;
  std::vector<std::pair<StringId, SlotId>> scopeVars_; // Scope::varBegin..varEnd: (name, slot)
  std::vector<ScopeId> nsScope_;                       // file index -> top-level scope
  llvm::DenseMap<uint64_t, std::vector<StringId>, PairKeyInfo>
      declared_;                     // (file, stmtBegin) -> assigned names
  std::vector<ScopeId> staticScope_; // file -> reusable scope for typedef constraints
  std::vector<Value> staticSelf_;    // static scopes' `self` (indexed by Scope::instance)
  std::vector<ScopeId> instScope_;   // instance index -> its last variable-less scope (newEmptyScope)
  // The variables of scopes with more than kScanVars of them, by (scope, name): a model's top level can
  // declare thousands (the 100k bench project: 2.5k), and scanning them for every name read was 4 % of its
  // compile. The names of one scope are distinct, so the first match of a scan is the only one.
  static constexpr uint32_t kScanVars = 16;
  llvm::DenseMap<uint64_t, SlotId, PairKeyInfo> manyVars_;
};

} // namespace inm::runtime

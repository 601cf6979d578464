// Private to the runtime: the entity indexes of one evaluation (language spec §5.6) — for every index, the
// instance registered under each key — and the index lookups waiting for a key that is not there yet.
// Keys are built by Evaluator::indexKey; waiters are keyed "index|key".
// Invariant: a key, once registered, keeps its first instance; the waiters of a key are handed out once.
#pragma once

#include "ir/Ir.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Allocator.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace inm::runtime {

class IndexTables {
 public:
  /// An index lookup that blocked on a key (reported at the end if its unit never finished).
  struct PendingLookup {
    ir::EntityId entity;
    uint32_t index;
    std::string key;
    std::string keyText;
    UnitId unit;
    uint32_t file;
    uint32_t node;
  };

  void init(size_t indexCount) { tables_ = std::make_unique<Table[]>(indexCount); }
  /// The instance registered under `key` in index `index`; invalid when none.
  InstanceId find(uint32_t index, llvm::StringRef key) const {
    auto it = tables_[index].find(key);
    return it == tables_[index].end() ? InstanceId{} : InstanceId{it->second};
  }
  /// Registers `inst` under `key` (kept if the key is taken).
  void add(uint32_t index, llvm::StringRef key, InstanceId inst) {
    tables_[index].try_emplace(key, inst.index);
  }
  /// Registers `inst` and appends the units waiting for that key to `woken` (in waiting order).
  void addAndWake(uint32_t index, llvm::StringRef key, InstanceId inst, llvm::SmallVectorImpl<UnitId>& woken);
  /// Unit `p.unit` waits until `waitKey` ("index|key") is registered.
  void waitFor(const std::string& waitKey, PendingLookup p);
  const std::vector<PendingLookup>& pending() const { return pendingLookups_; }

  void release() {
    tables_.reset();
    lookupWaiters_ = {};
    pendingLookups_ = {};
  }

 private:
  // Entries (key text + instance) come from one bump allocator per index instead of one malloc each: 235k
  // keys on the 100k bench project, ~2 MiB of malloc headers and rounding.
  using Table = llvm::StringMap<uint32_t, llvm::BumpPtrAllocator>;
  std::unique_ptr<Table[]> tables_; // IndexId -> key -> instance index (raw: packed)
  std::unordered_multimap<std::string, UnitId> lookupWaiters_; // "index|key" -> unit
  std::vector<PendingLookup> pendingLookups_;
};

} // namespace inm::runtime

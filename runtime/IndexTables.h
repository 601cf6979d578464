// Private to the runtime: the entity indexes of one evaluation (language spec §5.6) — for every index, the
// instance registered under each key — and the index lookups waiting for a key that is not there yet.
// A key is the index attributes' values in declaration order; two keys are equal when every value is of the
// same kind with the same content (a float with an integral value as that int's digits, other floats, big
// ints, lists and dicts by their repr). Each table is open addressing over a 64-bit hash of the key with the
// key's values stored beside the instance: no key text is built or compared on the constructor path.
// Invariant: a key, once registered, keeps its first instance; the waiters of a key are handed out once.
#pragma once

#include "ir/Ir.h"
#include "runtime/Model.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>

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
    std::string keyText;
    UnitId unit;
    uint32_t file;
    uint32_t node;
  };

  /// One table per index of `prog`; `model` renders the rare key values compared by their repr.
  void init(const ir::Program& prog, const Model& model);
  /// The instance registered under `key` in index `index`; invalid when none.
  InstanceId find(uint32_t index, llvm::ArrayRef<Value> key) const;
  /// Registers `inst` under `key` (kept if the key is taken).
  void add(uint32_t index, llvm::ArrayRef<Value> key, InstanceId inst) {
    insert(index, key, hash(key), inst);
  }
  /// Registers `inst` and appends the units waiting for that key to `woken` (in waiting order).
  void addAndWake(uint32_t index, llvm::ArrayRef<Value> key, InstanceId inst,
                  llvm::SmallVectorImpl<UnitId>& woken);
  /// Unit `p.unit` waits until `key` is registered in index `p.index`.
  void waitFor(llvm::ArrayRef<Value> key, PendingLookup p);
  const std::vector<PendingLookup>& pending() const { return pendingLookups_; }

  void release() {
    tables_.reset();
    lookupWaiters_ = {};
    pendingLookups_ = {};
  }

 private:
  struct Table {
    uint32_t arity = 0;
    uint32_t mask = 0; // buckets.size() - 1 (a power of two), 0 while empty
    // (low 32 bits of the key hash) << 32 | (entry + 1), 0 = empty; linear probing, at most half full. The
    // hash bits in the bucket skip most foreign entries without touching them.
    std::vector<uint64_t> buckets;
    std::vector<uint32_t> insts; // entry -> instance index (raw: packed)
    std::vector<Value> keys;     // entry e's key: [e * arity, (e + 1) * arity)
  };
  uint64_t hash(llvm::ArrayRef<Value> key) const;
  bool sameKey(llvm::ArrayRef<Value> a, llvm::ArrayRef<Value> b) const;
  /// The repr-based text of a key value of a rare kind (float, big int, list, dict).
  std::string keyText(const Value& v) const;
  void insert(uint32_t index, llvm::ArrayRef<Value> key, uint64_t hash64, InstanceId inst);
  static void grow(Table& t);
  /// The waiter key of (index, key hash).
  static uint64_t waitKey(uint32_t index, uint64_t h) {
    return h ^ (uint64_t(index) * 0x9e3779b97f4a7c15ULL);
  }

  const Model* model_ = nullptr;
  std::unique_ptr<Table[]> tables_; // IndexId -> table
  // (index, key hash) -> unit, in waiting order; a waiter woken by another key with the same hash (2^-64)
  // simply looks again and waits again.
  std::unordered_multimap<uint64_t, UnitId> lookupWaiters_;
  std::vector<PendingLookup> pendingLookups_;
};

} // namespace inm::runtime

// Private to the runtime: the units of work of one evaluation (language spec §5.3) — their storage and
// recycling, the run queue, the memo table of side-effecting sub-results (a blocked unit is re-run from the
// start) and the eager promises a unit holds. Included from Evaluator.h after the Unit definition.
// Invariant: a unit is in the run queue at most once (Unit::queued); a recycled unit id was never handed
// to a waiter list (Unit::waited) nor holds eager promises.
#pragma once

#include "runtime/Model.h"
#include "support/ChunkedVector.h"

#include <deque>
#include <vector>

namespace inm::runtime {

class UnitQueue {
 public:
  UnitId newUnit(UnitKind kind, ScopeId scope, uint32_t file, uint32_t node);
  Unit& operator[](UnitId id) { return units_[id.index]; }
  const Unit& operator[](UnitId id) const { return units_[id.index]; }
  uint32_t size() const { return uint32_t(units_.size()); }

  void enqueue(UnitId id) {
    Unit& u = units_[id.index];
    if (u.queued || u.done) return;
    u.queued = true;
    runQueue_.push_back(id);
  }
  bool hasQueued() const { return !runQueue_.empty(); }
  UnitId pop() {
    UnitId u = runQueue_.front();
    runQueue_.pop_front();
    return u;
  }
  /// The storage of `id` is reused by a later newUnit (nobody holds its id).
  void recycle(UnitId id) { freeUnits_.push_back(id); }

  /// A memoised sub-result of `unit` under `key` (node and iteration); false when none.
  bool memoGet(UnitId unit, uint64_t key, Value& out);
  void memoPut(UnitId unit, uint64_t key, const Value& v);
  /// A finished unit never reads its memo again: its table is recycled.
  void dropMemo(UnitId unit);
  size_t memoCount() const { return memos_.size(); }

  /// The slots `unit` holds eager promises on (created on first use).
  std::vector<SlotId>& eagerSlots(UnitId unit);
  /// Takes the eager promises `unit` holds (empty when none).
  std::vector<SlotId> takeEager(UnitId unit);

  void release() { units_.clear(); }

 private:
  ChunkedVector<Unit> units_;
  std::vector<UnitId> freeUnits_;   // finished units nobody refers to: reused by newUnit
  std::vector<uint32_t> freeMemos_; // memos_ entries of finished units (cleared, capacity kept)
  std::deque<UnitId> runQueue_;
  std::vector<std::vector<std::pair<uint64_t, Value>>> memos_; // Unit::memo -> (key, value)
  std::vector<std::vector<SlotId>> eagers_;                    // Unit::eager -> slots
};

} // namespace inm::runtime

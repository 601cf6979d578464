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
    runQueue_.push_back(id.index);
  }
  /// Queues the statements [begin, end) of `file`'s statement lists, to run one after the other in `scope`.
  /// Their units are created only when they come out of the queue (pop): the order is the same as queueing a
  /// unit per statement, but a block waiting in the queue costs 16 bytes instead of 48 per statement (100k
  /// bench project: 300k queued statements at once).
  void enqueueBlock(ScopeId scope, uint32_t file, uint32_t begin, uint32_t end) {
    if (begin == end) return;
    uint32_t b;
    if (!freeBlocks_.empty()) {
      b = freeBlocks_.back();
      freeBlocks_.pop_back();
      blocks_[b] = Block{scope, file, begin, end};
    } else {
      b = uint32_t(blocks_.size());
      blocks_.push_back(Block{scope, file, begin, end});
    }
    runQueue_.push_back(kBlockBit | b);
  }
  bool hasQueued() const { return !runQueue_.empty(); }
  /// The next unit to run; for a queued block, a new unit for its next statement (`nodeOf(file, i)`: the
  /// StmtId index of statement-list entry i).
  template <typename NodeOf>
  UnitId pop(NodeOf nodeOf) {
    uint32_t e = runQueue_.front();
    if (!(e & kBlockBit)) {
      runQueue_.pop_front();
      return UnitId{e};
    }
    Block b = blocks_[e & ~kBlockBit];
    if (++blocks_[e & ~kBlockBit].next == b.end) {
      runQueue_.pop_front();
      freeBlocks_.push_back(e & ~kBlockBit);
    }
    UnitId u = newUnit(UnitKind::Stmt, b.scope, b.file, nodeOf(b.file, b.next));
    (*this)[u].queued = true;
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
  /// Takes the eager promises `unit` holds (empty when none) when it finishes: its entry is reused by the
  /// next unit that takes eager promises, and the unit holds none from then on (it may be recycled).
  std::vector<SlotId> takeEager(UnitId unit);

  /// Frees every table (the run is over).
  void release() {
    units_.clear();
    freeUnits_ = {};
    freeMemos_ = {};
    runQueue_ = {};
    blocks_ = {};
    freeBlocks_ = {};
    memos_ = {};
    eagers_ = {};
    freeEagers_ = {};
  }

 private:
  struct Block {
    ScopeId scope;
    uint32_t file;
    uint32_t next; // the next statement-list entry to run
    uint32_t end;
  };
  static constexpr uint32_t kBlockBit = 1u << 31; // runQueue_ entry: an index into blocks_, else a UnitId

  ChunkedVector<Unit> units_;
  std::vector<UnitId> freeUnits_;   // finished units nobody refers to: reused by newUnit
  std::vector<uint32_t> freeMemos_; // memos_ entries of finished units (cleared, capacity kept)
  std::deque<uint32_t> runQueue_;   // UnitId index, or kBlockBit | index into blocks_
  std::vector<Block> blocks_;
  std::vector<uint32_t> freeBlocks_;
  std::vector<std::vector<std::pair<uint64_t, Value>>> memos_; // Unit::memo -> (key, value)
  std::vector<std::vector<SlotId>> eagers_;                    // Unit::eager -> slots
  std::vector<uint32_t> freeEagers_;                           // eagers_ entries of finished units (empty)
};

} // namespace inm::runtime

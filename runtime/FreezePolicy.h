// Private to the runtime: which multi-valued slot (list or optional relation) to freeze when no unit can
// run (language spec §5.4): first a slot that could be complete (no outstanding providers) and is waited
// on, policy relations after the others in precedence order; then, in a deadlock, the lowest waited-on
// slot; then slots nobody waits on; last, any slot still open in creation order. The policy only picks:
// the Evaluator freezes what it picks (which wakes units).
// Invariant: every open list/optional slot is at or after forceCursor_; a slot is in freezeQueue_ at most
// once (SlotMeta::queued) and in zeroWaiters_ at most once (SlotMeta::inZero).
#pragma once

#include "ir/Ir.h"

#include <llvm/ADT/SmallVector.h>

#include <deque>
#include <queue>
#include <vector>

namespace inm::runtime {

class SlotStore;

class FreezePolicy {
 public:
  explicit FreezePolicy(const ir::Program& prog) : prog_(prog) {}

  /// Queues `sid` as a freeze candidate when it could be complete now.
  void maybeQueue(SlotStore& slots, SlotId sid);
  /// `sid` (open, multi-valued) gained its first waiter that counts as potential.
  void firstWaiter(SlotStore& slots, SlotId sid);
  /// A slot parked without waiters gained one or lost its last promise: rescan the parked slots.
  void zeroChanged() { zeroDirty_ = true; }
  /// Appends the slots to freeze now, in order; false when nothing is left to freeze.
  bool pick(SlotStore& slots, std::vector<SlotId>& out);
  /// Frees the queues (the run is over).
  void release() {
    freezeQueue_ = {};
    zeroWaiters_ = {};
    waitedOn_[0] = {};
    waitedOn_[1] = {};
  }

 private:
  const ir::Program& prog_;
  std::deque<SlotId> freezeQueue_;
  std::vector<SlotId> zeroWaiters_;
  uint32_t forceCursor_ = 0; // slots before this one are frozen or not relations (last-resort freezing)
  // Deadlock candidates (multi slots someone waits on), lowest sid first; [0] non-policy, [1] policy slots.
  // Lazy: entries that were frozen or lost their waiters are dropped when they reach the top.
  std::priority_queue<SlotId, std::vector<SlotId>, std::greater<SlotId>> waitedOn_[2];
  bool zeroDirty_ = false; // a parked zero-waiter slot gained a waiter or lost its last promise
};

} // namespace inm::runtime

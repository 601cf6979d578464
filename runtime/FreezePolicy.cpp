// The freeze order for multi-valued slots when no unit can run (see FreezePolicy.h).
#include "Evaluator.h"

#include <algorithm>

namespace inm::runtime {

void FreezePolicy::maybeQueue(SlotStore& slots, SlotId sid) {
  SlotMeta& m = slots.meta(sid);
  if (m.kind != SlotKind::List && m.kind != SlotKind::Optional) return;
  if (m.state == kFrozen || m.queued || m.promises > 0) return;
  if (m.lowBound) {
    const ir::Attribute& a = prog_.attrs[slots.attrOf(sid, prog_)];
    if (slots.valueCount(sid) < a.mult.low) return;
  }
  m.queued = true;
  freezeQueue_.push_back(sid);
}

void FreezePolicy::firstWaiter(SlotStore& slots, SlotId sid) {
  SlotMeta& m = slots.meta(sid);
  waitedOn_[m.policy ? 1 : 0].push(sid);
  if (m.inZero) zeroDirty_ = true;
}

bool FreezePolicy::pick(SlotStore& slots, std::vector<SlotId>& out) {
  for (int round = 0; round < 2; ++round) {
    // (a) slots that could be complete, in queue order; policy slots only after all others
    std::vector<SlotId> deferred;
    while (!freezeQueue_.empty()) {
      SlotId sid = freezeQueue_.front();
      freezeQueue_.pop_front();
      SlotMeta& m = slots.meta(sid);
      m.queued = false;
      if (m.state == kFrozen || m.promises > 0) continue;
      if (slots.potential(sid) == 0) {
        if (!m.inZero) {
          m.inZero = true;
          zeroWaiters_.push_back(sid);
        }
        continue;
      }
      if (m.policy) {
        deferred.push_back(sid);
        continue;
      }
      for (SlotId d : deferred) {
        slots.meta(d).queued = true;
        freezeQueue_.push_front(d);
      }
      out.push_back(sid);
      return true;
    }
    if (!deferred.empty()) {
      // Freeze the policy slot that comes first in the policy order.
      auto rank = [&](SlotId sid) {
        ir::AttrId attr = slots.attrOf(sid, prog_);
        for (size_t i = 0; i < prog_.precedence.size(); ++i)
          if (prog_.precedence[i].before == attr) return int(i) * 2;
        for (size_t i = 0; i < prog_.precedence.size(); ++i)
          if (prog_.precedence[i].after == attr) return int(i) * 2 + 1;
        return 1 << 30;
      };
      std::stable_sort(deferred.begin(), deferred.end(),
                       [&](SlotId a, SlotId b) { return rank(a) < rank(b); });
      for (size_t i = 1; i < deferred.size(); ++i) {
        slots.meta(deferred[i]).queued = true;
        freezeQueue_.push_back(deferred[i]);
      }
      out.push_back(deferred[0]);
      return true;
    }
    // (b) zero-waiters that gained waiters go back to the queue
    // Only rescanned when a parked slot changed since the last scan (the list can hold every relation).
    bool moved = false;
    if (zeroDirty_) {
      zeroDirty_ = false;
      std::vector<SlotId> keep;
      for (SlotId sid : zeroWaiters_) {
        SlotMeta& m = slots.meta(sid);
        if (m.state == kFrozen) {
          m.inZero = false;
          continue;
        }
        if (slots.potential(sid) > 0 && m.promises == 0) {
          m.inZero = false;
          if (!m.queued) {
            m.queued = true;
            freezeQueue_.push_back(sid);
          }
          moved = true;
        } else {
          keep.push_back(sid);
        }
      }
      zeroWaiters_.swap(keep);
    }
    if (!moved) break;
  }
  // (c) deadlock: a slot someone waits on that still has providers; non-policy first, creation order
  SlotId best;
  for (int pass = 0; pass < 2 && !best.valid(); ++pass) {
    auto& heap = waitedOn_[pass];
    while (!heap.empty()) {
      SlotId sid = heap.top();
      if (slots.meta(sid).state == kFrozen || slots.potential(sid) == 0) {
        heap.pop(); // re-pushed by firstWaiter if it gains a waiter again
        continue;
      }
      best = sid;
      break;
    }
  }
  if (best.valid()) {
    out.push_back(best);
    return true;
  }
  // (d) nothing depends on the rest: freeze all zero-waiters, last in first (freezing one only wakes units,
  // so the others' states are as read here)
  // Filtered in place and handed over as `out` (this list can hold every relation end: a copy would add
  // ~5 MiB at the evaluation's peak on the 100k bench project).
  std::vector<SlotId> zs;
  zs.swap(zeroWaiters_);
  std::reverse(zs.begin(), zs.end());
  size_t kept = 0;
  for (SlotId sid : zs) {
    const SlotMeta& m = slots.meta(sid);
    if (m.state == kFrozen) continue;
    if (m.promises > 0) {
      zeroWaiters_.push_back(sid);
      continue;
    }
    zs[kept++] = sid;
  }
  zs.resize(kept);
  if (!zs.empty()) {
    if (out.empty())
      out.swap(zs);
    else
      out.insert(out.end(), zs.begin(), zs.end());
    return true;
  }
  // (e) still stuck: only slots held open by gradual forwarders (relation-to-relation cycles) or by
  // statements that can never run remain. Everything runnable has run, so their contents are final.
  // Slot numbers are in creation order, so the first open relation slot is found by walking them (no list of
  // every relation slot: ~1M on the 100k bench project).
  auto open = [&](uint32_t i) {
    const SlotMeta& m = slots.meta(SlotId{i});
    return (m.kind == SlotKind::List || m.kind == SlotKind::Optional) && m.state != kFrozen;
  };
  while (forceCursor_ < slots.size() && !open(forceCursor_)) ++forceCursor_;
  if (forceCursor_ < slots.size()) {
    out.push_back(SlotId{forceCursor_});
    return true;
  }
  return false;
}

} // namespace inm::runtime

// Units of work: storage and recycling, the run queue, memos and eager promises (see UnitQueue.h).
#include "Evaluator.h"

namespace inm::runtime {

UnitId UnitQueue::newUnit(UnitKind kind, ScopeId scope, uint32_t file, uint32_t node) {
  Unit u;
  u.kind = kind;
  u.scope = scope;
  u.file = file;
  u.node = node;
  if (!freeUnits_.empty()) {
    UnitId id = freeUnits_.back();
    freeUnits_.pop_back();
    units_[id.index] = u;
    return id;
  }
  units_.push_back(u);
  return UnitId{uint32_t(units_.size() - 1)};
}

bool UnitQueue::memoGet(UnitId unit, uint64_t key, Value& out) {
  Unit& u = units_[unit.index];
  if (u.memo == kNone) return false;
  for (auto& [k, v] : memos_[u.memo])
    if (k == key) {
      out = v;
      return true;
    }
  return false;
}

void UnitQueue::memoPut(UnitId unit, uint64_t key, const Value& v) {
  Unit& u = units_[unit.index];
  if (u.memo == kNone) {
    if (!freeMemos_.empty()) {
      u.memo = freeMemos_.back();
      freeMemos_.pop_back();
    } else {
      u.memo = uint32_t(memos_.size());
      memos_.emplace_back();
    }
  }
  memos_[u.memo].emplace_back(key, v);
}

void UnitQueue::dropMemo(UnitId unit) {
  Unit& u = units_[unit.index];
  if (u.memo == kNone) return;
  memos_[u.memo].clear();
  freeMemos_.push_back(u.memo);
  u.memo = kNone;
}

std::vector<SlotId>& UnitQueue::eagerSlots(UnitId unit) {
  Unit& u = units_[unit.index];
  if (u.eager == kNone) {
    if (!freeEagers_.empty()) {
      u.eager = freeEagers_.back();
      freeEagers_.pop_back();
    } else {
      u.eager = uint32_t(eagers_.size());
      eagers_.emplace_back();
    }
  }
  return eagers_[u.eager];
}

std::vector<SlotId> UnitQueue::takeEager(UnitId unit) {
  std::vector<SlotId> held;
  Unit& u = units_[unit.index];
  if (u.eager != kNone) {
    held.swap(eagers_[u.eager]);
    freeEagers_.push_back(u.eager);
    u.eager = kNone;
  }
  return held;
}

} // namespace inm::runtime

// Result slots: creation, readiness, reading and set-location interning (see SlotStore.h).
#include "Evaluator.h"

#include <algorithm>

namespace inm::runtime {

InstanceId SlotStore::ownerOf(SlotId sid) const {
  auto it = std::upper_bound(instBase_.begin(), instBase_.end(), sid.index);
  assert(it != instBase_.begin() && "a slot created before any instance is a variable");
  return InstanceId{uint32_t(it - instBase_.begin() - 1)};
}

SlotExt& SlotStore::newExt(SlotId sid) {
  SlotMeta& m = meta_[sid.index];
  uint32_t e = uint32_t(exts_.size());
  if (e < SlotMeta::kExtOverflow) {
    m.extRef = e;
  } else {
    m.extRef = SlotMeta::kExtOverflow;
    overflowExt_[sid.index] = e;
  }
  exts_.emplace_back();
  return exts_[e];
}

Value SlotStore::read(SlotId sid, Model& model) {
  const SlotMeta& m = meta_[sid.index];
  if (m.kind == SlotKind::Var || m.kind == SlotKind::Single) return vals_[sid.index];
  const CompactVec<Value>& xs = items(sid);
  if (m.kind == SlotKind::Optional) return xs.empty() ? Value::null() : xs[0];
  return model.arena().list(xs);
}

uint32_t SlotStore::internSetLoc(const SourceRange& at) {
  // One 64-bit key when the position fits (file < 2^19, line < 2^28, col < 2^16); others are stored
  // uninterned.
  bool fits = at.file.index < (1u << 19) && at.line < (1u << 28) && at.col < (1u << 16);
  uint64_t key = (uint64_t(at.file.index) << 44) | (uint64_t(at.line) << 16) | at.col;
  // Mixed (a bijection) before it meets DenseMap's hash for integers (x * 37), which only looks at the low
  // bits: unmixed, every position of one column would share a bucket chain.
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ULL;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebULL;
  key ^= key >> 31;
  fits = fits && key < ~uint64_t(0) - 1; // DenseMap's empty and tombstone keys
  if (fits) {
    // A direct-mapped cache of recent positions first: the statements of implementations set slots from the
    // same few positions for every instance, and the map's buckets (240k positions on the 100k bench project)
    // are a cache miss each.
    RecentLoc& recent = recentLocs_[key & (kRecentLocs - 1)];
    if (recent.key == key) return recent.index;
    auto [it, added] = setLocIndex_.try_emplace(key, uint32_t(setLocs_.size()));
    if (added) setLocs_.push_back(PackedLoc{at.file.index, at.line, at.col});
    recent = RecentLoc{key, it->second};
    return it->second;
  }
  setLocs_.push_back(PackedLoc{at.file.index, at.line, at.col});
  return uint32_t(setLocs_.size() - 1);
}

} // namespace inm::runtime

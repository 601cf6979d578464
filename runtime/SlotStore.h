// Private to the runtime: the result slots of one evaluation (language spec §5.2). Every variable and
// attribute is a slot; a slot holds its value (vals), its state and bookkeeping (meta), and, only when it
// needs them, list contents, waiters and subscribers (ext). Instances own a contiguous run of slots.
// Included from Evaluator.h after the SlotMeta/SlotExt definitions, which stay there.
// Invariant: SlotIds are dense and never reused; a slot's ext, once created, belongs to it for the run.
#pragma once

#include "runtime/Model.h"
#include "support/ChunkedVector.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <vector>

namespace inm::runtime {

class SlotStore {
 public:
  SlotId newSlot(SlotKind kind, uint32_t owner, uint32_t attr);
  SlotMeta& meta(SlotId sid) { return meta_[sid.index]; }
  const SlotMeta& meta(SlotId sid) const { return meta_[sid.index]; }
  /// The stored value of a single / variable slot (lists and optionals keep theirs in the ext).
  Value& value(SlotId sid) { return vals_[sid.index]; }
  /// The slot's ext, created on first use.
  SlotExt& ext(SlotId sid);
  /// The slot's ext, or null when it has none yet (never creates one).
  SlotExt* extIf(SlotId sid) {
    return meta_[sid.index].ext == kNone ? nullptr : &exts_[meta_[sid.index].ext];
  }
  /// Values a list / optional slot holds so far (0 without an ext).
  size_t valueCount(SlotId sid) const {
    uint32_t e = meta_[sid.index].ext;
    return e == kNone ? 0 : exts_[e].values.size();
  }
  /// Waiters that count as progress potential (0 without an ext).
  uint32_t potential(SlotId sid) const {
    uint32_t e = meta_[sid.index].ext;
    return e == kNone ? 0 : exts_[e].potential;
  }
  bool ready(SlotId sid) const;         // set (single/var) or frozen (multi)
  Value read(SlotId sid, Model& model); // list slots: a List of the values

  /// Starts the slot run of a new instance; its slots are the next ones created.
  void beginInstance() { instBase_.push_back(uint32_t(meta_.size())); }
  SlotId attrSid(InstanceId inst, uint32_t slot) const { return SlotId{instBase_[inst.index] + slot}; }
  uint32_t size() const { return uint32_t(meta_.size()); }
  size_t extCount() const { return exts_.size(); }
  const SlotExt& extAt(size_t i) const { return exts_[i]; }

  /// Where a single slot was set (kNone: unknown).
  uint32_t internSetLoc(const SourceRange& at);
  PackedLoc setLoc(uint32_t index) const { return index == kNone ? PackedLoc{} : setLocs_[index]; }

  /// Hands the values to the model (an instance's attributes start at its instance base).
  ChunkedVector<Value> takeValues() { return std::move(vals_); }
  /// Drops the tables (see EvalOptions::skipTeardown); keeps nothing the model needs.
  void release() {
    meta_.clear();
    vals_.clear();
    exts_.clear();
  }

 private:
  ChunkedVector<Value> vals_;
  ChunkedVector<SlotMeta> meta_;
  ChunkedVector<SlotExt> exts_;
  std::vector<uint32_t> instBase_; // instance index -> first slot index (raw: packed table)

  // Locations slots were set at, interned: millions of slots are set from a few hundred source positions, so
  // a 4-byte index in SlotMeta instead of the 12-byte location keeps every slot 8 bytes smaller.
  std::vector<PackedLoc> setLocs_;
  llvm::DenseMap<uint64_t, uint32_t> setLocIndex_;
  uint64_t lastSetLocKey_ = ~uint64_t(0);
  uint32_t lastSetLoc_ = kNone;
};

} // namespace inm::runtime

// Private to the runtime: the result slots of one evaluation (language spec §5.2). Every variable and
// attribute is a slot; a slot holds its value (vals), its state and bookkeeping (meta), and, only when it
// needs them, waiters and subscribers (ext). A list / optional relation end keeps its contents so far in its
// value cell (a CompactVec in the 16 bytes a Value takes) until the model is built, when settleCell()
// replaces them by the final value. Instances own a contiguous run of slots. Included from Evaluator.h after
// the SlotMeta/SlotExt definitions, which stay there. Invariant: SlotIds are dense and never reused; a slot's
// ext, once created, belongs to it for the run.
#pragma once

#include "runtime/Model.h"
#include "support/ChunkedVector.h"
#include "support/CompactVec.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <memory>
#include <new>
#include <vector>

namespace inm::runtime {

static_assert(sizeof(CompactVec<Value>) == sizeof(Value) && alignof(CompactVec<Value>) <= alignof(Value),
              "a relation end's contents live in its value cell");

class SlotStore {
 public:
  SlotId newSlot(SlotKind kind, uint32_t owner, uint32_t attr) {
    SlotId sid{uint32_t(meta_.size())};
    SlotMeta m;
    m.kind = kind;
    if (kind == SlotKind::Var || kind == SlotKind::Single) m.setAt = kNone;
    // Owner and attribute are recovered by ownerOf() / attrOf(); variables are named by their scope.
    (void)owner;
    (void)attr;
    meta_.push_back(m);
    Value& cell = vals_.emplace_back();
    if (kind == SlotKind::List || kind == SlotKind::Optional)
      ::new (static_cast<void*>(&cell)) CompactVec<Value>();
    return sid;
  }
  SlotMeta& meta(SlotId sid) { return meta_[sid.index]; }
  const SlotMeta& meta(SlotId sid) const { return meta_[sid.index]; }
  /// The stored value of a single / variable slot (lists and optionals keep their contents in items()).
  Value& value(SlotId sid) {
    assert(!isMulti(sid) && "a relation end's cell holds its items");
    return vals_[sid.index];
  }
  /// The values a list / optional slot holds so far (in its value cell, see the file comment).
  CompactVec<Value>& items(SlotId sid) {
    assert(isMulti(sid) && "only list / optional slots hold items");
    return cellItems(vals_[sid.index]);
  }
  /// The items held in the value cell of a list / optional slot (also once the model has adopted the cells).
  static CompactVec<Value>& cellItems(Value& cell) {
    return *std::launder(reinterpret_cast<CompactVec<Value>*>(&cell));
  }
  const CompactVec<Value>& items(SlotId sid) const {
    assert(isMulti(sid) && "only list / optional slots hold items");
    return *std::launder(reinterpret_cast<const CompactVec<Value>*>(&vals_[sid.index]));
  }
  /// Replaces the items in the value cell of a list / optional slot by its final value: a List of them, or
  /// for an optional the one value or null; `set` false leaves null. Building the model: the cell is read as
  /// a Value from then on.
  static void settleCell(Value& cell, SlotKind kind, bool set, Model& model) {
    CompactVec<Value>& xs = cellItems(cell);
    Value v;
    if (set) v = kind == SlotKind::Optional ? (xs.empty() ? Value::null() : xs[0]) : model.arena().list(xs);
    xs.~CompactVec();
    ::new (static_cast<void*>(&cell)) Value(v);
  }
  /// The index of the slot's ext in exts_, kNone when it has none.
  uint32_t extIndex(SlotId sid) const {
    uint32_t e = meta_[sid.index].extRef;
    if (e == SlotMeta::kNoExt) return kNone;
    return e == SlotMeta::kExtOverflow ? overflowExt_.find(sid.index)->second : e;
  }
  /// The slot's ext, created on first use.
  SlotExt& ext(SlotId sid) {
    uint32_t e = extIndex(sid);
    return e != kNone ? exts_[e] : newExt(sid);
  }
  /// The slot's ext, or null when it has none yet (never creates one).
  SlotExt* extIf(SlotId sid) {
    uint32_t e = extIndex(sid);
    return e == kNone ? nullptr : &exts_[e];
  }
  const SlotExt* extIf(SlotId sid) const {
    uint32_t e = extIndex(sid);
    return e == kNone ? nullptr : &exts_[e];
  }
  /// Values a list / optional slot holds so far.
  size_t valueCount(SlotId sid) const { return items(sid).size(); }
  /// Waiters that count as progress potential (0 without an ext).
  uint32_t potential(SlotId sid) const {
    uint32_t e = extIndex(sid);
    return e == kNone ? 0 : exts_[e].potential;
  }
  /// Set (single/var) or frozen (multi).
  bool ready(SlotId sid) const {
    const SlotMeta& m = meta_[sid.index];
    if (m.kind == SlotKind::Var || m.kind == SlotKind::Single) return m.state == kSet;
    return m.state == kFrozen;
  }
  Value read(SlotId sid, Model& model); // list slots: a List of the values

  /// Starts the slot run of a new instance of `e`; its slots are the next ones created.
  void beginInstance(ir::EntityId e) {
    instBase_.push_back(uint32_t(meta_.size()));
    instEntity_.push_back(e);
  }
  /// The instance an attribute slot belongs to (a binary search: SlotMeta does not store it).
  InstanceId ownerOf(SlotId sid) const;
  /// The attribute an instance slot holds (see ownerOf).
  ir::AttrId attrOf(SlotId sid, const ir::Program& prog) const {
    InstanceId owner = ownerOf(sid);
    return prog.entities[instEntity_[owner.index]].slots[sid.index - instBase_[owner.index]];
  }
  SlotId attrSid(InstanceId inst, uint32_t slot) const { return SlotId{instBase_[inst.index] + slot}; }
  uint32_t size() const { return uint32_t(meta_.size()); }
  size_t extCount() const { return exts_.size(); }
  const SlotExt& extAt(size_t i) const { return exts_[i]; }

  /// Where a single slot was set (kNone: unknown).
  uint32_t internSetLoc(const SourceRange& at);
  PackedLoc setLoc(uint32_t index) const { return index == kNone ? PackedLoc{} : setLocs_[index]; }

  /// Hands the value cells to the model (an instance's attributes start at its instance base); the caller
  /// settles every list / optional cell there (settleCell).
  ChunkedVector<Value> takeValues() { return std::move(vals_); }
  /// Drops the tables (see EvalOptions::skipTeardown); keeps nothing the model needs.
  void release() {
    meta_.clear();
    vals_.clear();
    exts_.clear();
    overflowExt_ = decltype(overflowExt_)();
    instBase_ = {};
    instEntity_ = {};
    setLocs_ = {};
    setLocIndex_ = decltype(setLocIndex_)();
  }

 private:
  SlotExt& newExt(SlotId sid);
  bool isMulti(SlotId sid) const {
    SlotKind k = meta_[sid.index].kind;
    return k == SlotKind::List || k == SlotKind::Optional;
  }

  ChunkedVector<Value> vals_;
  ChunkedVector<SlotMeta> meta_;
  ChunkedVector<SlotExt> exts_;
  llvm::DenseMap<uint32_t, uint32_t> overflowExt_; // slot -> ext index past SlotMeta's 24 bits (> 16M exts)
  std::vector<uint32_t> instBase_;                 // instance index -> first slot index (raw: packed table)
  std::vector<ir::EntityId> instEntity_;           // instance index -> entity (attrOf)

  // Locations slots were set at, interned: millions of slots are set from a few hundred source positions, so
  // a 4-byte index in SlotMeta instead of the 12-byte location keeps every slot 8 bytes smaller.
  std::vector<PackedLoc> setLocs_;
  llvm::DenseMap<uint64_t, uint32_t> setLocIndex_;
  struct RecentLoc {
    uint64_t key = ~uint64_t(0); // never a stored key (DenseMap's empty key)
    uint32_t index = kNone;
  };
  static constexpr size_t kRecentLocs = 2048;
  std::unique_ptr<RecentLoc[]> recentLocs_ = std::make_unique<RecentLoc[]>(kRecentLocs);
};

} // namespace inm::runtime

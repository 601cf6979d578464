// The scheduler state machine's id -> slot index (Scheduler.h, issue #30 "Scheduler memory"): an
// open-addressing hash table of slot numbers whose keys are the ids the owner's records already hold, so a
// resource id is stored once (in its record) instead of again as a map key with its own node. Each table
// entry is 8 bytes (slot number and 32 bits of the id's hash, compared before the id itself); the table is
// at most half full. Invariant: entries are only added (a slot is never removed or renumbered), and
// `keyOf(k)` returns the id of slot k for every slot inserted so far, unchanged since its insertion.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace inm::scheduler {

class IdIndex {
 public:
  /// The slot whose id is `id`, if any. `keyOf(slot)` must return that slot's id (a string_view-able value).
  template <class KeyOf>
  std::optional<uint32_t> find(std::string_view id, const KeyOf& keyOf) const {
    if (table_.empty()) return std::nullopt;
    const uint64_t h = hashOf(id);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.slot == kEmpty) return std::nullopt;
      if (e.tag == tag && std::string_view(keyOf(e.slot)) == id) return e.slot;
    }
  }
  /// Adds `slot` under `id` (the caller checked with find that `id` is not there yet).
  template <class KeyOf>
  void insert(std::string_view id, uint32_t slot, const KeyOf& keyOf) {
    if ((count_ + 1) * 2 > table_.size()) grow(keyOf);
    place(hashOf(id), slot);
    ++count_;
  }
  /// Room for `n` ids without a rehash.
  template <class KeyOf>
  void reserve(size_t n, const KeyOf& keyOf) {
    if (n * 2 > table_.size()) rehash(n * 2, keyOf);
  }
  size_t size() const { return count_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Entry {
    uint32_t slot = kEmpty;
    uint32_t tag = 0;
  };
  static uint64_t hashOf(std::string_view id) {
    // std::hash of a string_view is a 64-bit murmur-style hash in libstdc++; spread it once more so that the
    // low bits (the bucket) and the high bits (the tag) are independent.
    uint64_t h = std::hash<std::string_view>{}(id);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
  }
  void place(uint64_t h, uint32_t slot) {
    size_t i = h & mask_;
    while (table_[i].slot != kEmpty) i = (i + 1) & mask_;
    table_[i] = Entry{slot, static_cast<uint32_t>(h >> 32)};
  }
  template <class KeyOf>
  void grow(const KeyOf& keyOf) {
    rehash(table_.empty() ? 64 : table_.size() * 2, keyOf);
  }
  template <class KeyOf>
  void rehash(size_t want, const KeyOf& keyOf) {
    size_t n = 64;
    while (n < want) n *= 2;
    std::vector<Entry> old;
    old.swap(table_);
    table_.assign(n, Entry{});
    mask_ = n - 1;
    for (const Entry& e : old)
      if (e.slot != kEmpty) place(hashOf(std::string_view(keyOf(e.slot))), e.slot);
  }

  std::vector<Entry> table_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

} // namespace inm::scheduler

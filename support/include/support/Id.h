// Typed 32-bit IDs and the stores that own the nodes they name. Every stage's product (AST, IR, model)
// keeps its nodes in Stores and links them by ID, so copies are cheap and kinds cannot be mixed up.
// Invariant: an Id is only ever looked up in the Store that produced it (asserted in debug builds).
#pragma once

#include <cassert>
#include <cstdint>
#include <functional>
#include <vector>

namespace inm {

/// A typed index into a Store; `kNone` marks "no node".
template <typename Tag>
struct Id {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t index = kNone;
  constexpr Id() = default;
  constexpr explicit Id(uint32_t i) : index(i) {}
  constexpr bool valid() const { return index != kNone; }
  constexpr explicit operator bool() const { return valid(); }
  friend constexpr bool operator==(const Id&, const Id&) = default;
  friend constexpr auto operator<=>(const Id&, const Id&) = default;
};

/// A contiguous run [begin, end) of IDs in one store (e.g. the statements of a block).
template <typename IdT>
struct IdRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
  IdT operator[](uint32_t i) const { return IdT{begin + i}; }
  struct Iter {
    uint32_t i;
    IdT operator*() const { return IdT{i}; }
    Iter& operator++() {
      ++i;
      return *this;
    }
    bool operator!=(const Iter& o) const { return i != o.i; }
  };
  Iter begin_() const { return {begin}; }
  friend Iter begin(const IdRange& r) { return {r.begin}; }
  friend Iter end(const IdRange& r) { return {r.end}; }
};

/// Owns nodes of one kind; hands out IDs in insertion order.
template <typename IdT, typename T>
class Store {
 public:
  IdT add(T v) {
    items_.push_back(std::move(v));
    return IdT{uint32_t(items_.size() - 1)};
  }
  const T& get(IdT id) const {
    assert(id.index < items_.size() && "foreign or invalid id");
    return items_[id.index];
  }
  T& get(IdT id) {
    assert(id.index < items_.size() && "foreign or invalid id");
    return items_[id.index];
  }
  const T& operator[](IdT id) const { return get(id); }
  T& operator[](IdT id) { return get(id); }
  uint32_t size() const { return uint32_t(items_.size()); }
  void reserve(size_t n) { items_.reserve(n); }
  IdRange<IdT> all() const { return {0, size()}; }
  const std::vector<T>& items() const { return items_; }

 private:
  std::vector<T> items_;
};

} // namespace inm

template <typename Tag>
struct std::hash<inm::Id<Tag>> {
  size_t operator()(inm::Id<Tag> id) const noexcept { return std::hash<uint32_t>{}(id.index); }
};

// An append-only array stored in fixed-size chunks: elements never move once added, so growing it neither
// copies the contents nor touches twice the memory (a doubling std::vector of millions of slots did both),
// and references to elements stay valid across push_back. Indexing costs a shift and a mask. Invariant: chunk
// k holds elements [k << Bits, (k + 1) << Bits); every chunk but the last is full.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace inm {

template <typename T, unsigned Bits = 15>
class ChunkedVector {
 public:
  static constexpr size_t kChunk = size_t(1) << Bits;

  ChunkedVector() = default;
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;
  ChunkedVector(ChunkedVector&& o) noexcept : chunks_(std::move(o.chunks_)), size_(o.size_) {
    o.chunks_.clear();
    o.size_ = 0;
  }
  ChunkedVector& operator=(ChunkedVector&& o) noexcept {
    if (this != &o) {
      clear();
      chunks_ = std::move(o.chunks_);
      size_ = o.size_;
      o.chunks_.clear();
      o.size_ = 0;
    }
    return *this;
  }
  ~ChunkedVector() { clear(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T& operator[](size_t i) {
    assert(i < size_ && "index past the end");
    return chunks_[i >> Bits][i & (kChunk - 1)];
  }
  const T& operator[](size_t i) const {
    assert(i < size_ && "index past the end");
    return chunks_[i >> Bits][i & (kChunk - 1)];
  }
  T& back() { return (*this)[size_ - 1]; }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    size_t off = size_ & (kChunk - 1);
    if (off == 0 && (size_ >> Bits) == chunks_.size())
      chunks_.push_back(static_cast<T*>(::operator new(sizeof(T) * kChunk, std::align_val_t(alignof(T)))));
    T* p = chunks_[size_ >> Bits] + off;
    ::new (static_cast<void*>(p)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }

  void clear() {
    for (size_t i = 0; i < size_; ++i) (*this)[i].~T();
    for (T* c : chunks_) ::operator delete(c, std::align_val_t(alignof(T)));
    chunks_.clear();
    size_ = 0;
  }

 private:
  std::vector<T*> chunks_;
  size_t size_ = 0;
};

} // namespace inm

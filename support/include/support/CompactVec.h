// A growable array of trivially copyable elements in 16 bytes (pointer, 32-bit size, 32-bit capacity)
// instead of std::vector's 24: the evaluator keeps three per slot extension (contents, waiters,
// subscribers), 284k extensions on the 100k bench project, most of them with one or two short lists.
// Grows by doubling like std::vector; an empty CompactVec owns no memory. Invariant: size <= capacity <
// 2^32, and data is null exactly when capacity is 0.
#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace inm {

template <typename T>
class CompactVec {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "elements are moved with memcpy and never destroyed");

 public:
  CompactVec() = default;
  CompactVec(const CompactVec&) = delete;
  CompactVec& operator=(const CompactVec&) = delete;
  CompactVec(CompactVec&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) {
    o.data_ = nullptr;
    o.size_ = o.cap_ = 0;
  }
  CompactVec& operator=(CompactVec&& o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  ~CompactVec() { std::free(data_); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  T& operator[](size_t i) {
    assert(i < size_ && "index past the end");
    return data_[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_ && "index past the end");
    return data_[i];
  }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator llvm::ArrayRef<T>() const { return llvm::ArrayRef<T>(data_, size_); }

  void push_back(const T& v) {
    if (size_ == cap_) grow();
    data_[size_++] = v;
  }
  /// Drops the elements, keeps the memory.
  void clear() { size_ = 0; }
  /// Drops the elements and frees the memory.
  void reset() {
    std::free(data_);
    data_ = nullptr;
    size_ = cap_ = 0;
  }
  void swap(CompactVec& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }

 private:
  void grow() {
    size_t cap = cap_ ? size_t(cap_) * 2 : 1;
    if (cap > UINT32_MAX) { // the capacity would not fit its 32 bits: reported as memory exhaustion
      if (std::new_handler handler = std::get_new_handler()) handler();
      throw std::bad_alloc();
    }
    void* p;
    // As operator new does: on failure the new-handler (the driver's out-of-memory report) runs, or throws.
    while (!(p = std::realloc(static_cast<void*>(data_), cap * sizeof(T)))) {
      std::new_handler handler = std::get_new_handler();
      if (!handler) throw std::bad_alloc();
      handler();
    }
    data_ = static_cast<T*>(p);
    cap_ = uint32_t(cap);
  }

  T* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t cap_ = 0;
};

} // namespace inm

// Deterministic JSON text for the artifact: strings (escaped, always valid UTF-8: ill-formed bytes become
// U+FFFD), numbers (integers exactly, floats in Python repr form), and runtime values (dict keys sorted by
// bytes, Unknown as the reference's "<<undefined>>"). Private to the exporter stage.
// Invariant: the same value always produces the same bytes; output is valid JSON (NaN/inf become null).
#pragma once

#include "runtime/Value.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <memory>

namespace inm::exporter {

/// The text the reference puts in a field whose value is unknown.
inline constexpr const char* kUndefinedText = "<<undefined>>";

void writeJsonString(llvm::raw_ostream& os, llvm::StringRef s);
void writeJsonDouble(llvm::raw_ostream& os, double d);
/// Writes a runtime value; instances must have been rejected before (they are written as null).
void writeJsonValue(llvm::raw_ostream& os, const runtime::Value& v);

/// A growable byte buffer that large texts are rendered into without a virtual call per piece (the artifact
/// writer's chunks). Appending never shrinks it; clear() keeps the storage for the next chunk.
class TextBuffer {
 public:
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  llvm::StringRef str() const { return {data_.get(), size_}; }
  void append(llvm::StringRef s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    size_ += s.size();
  }
  void append(char c) {
    *room(1) = c;
    ++size_;
  }
  /// Space for at least `n` more bytes at the end; commit() what was written there.
  char* room(size_t n) {
    if (capacity_ - size_ < n) grow(n);
    return data_.get() + size_;
  }
  void commit(size_t n) { size_ += n; }

 private:
  void grow(size_t n);
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

/// The same bytes as writeJsonString / writeJsonValue, appended to a buffer.
void appendJsonString(TextBuffer& out, llvm::StringRef s);
/// A JSON string's contents without the quotes (for a string written in pieces).
void appendJsonStringBody(TextBuffer& out, llvm::StringRef s);
void appendJsonValue(TextBuffer& out, const runtime::Value& v);

/// True if `v` is or contains an entity instance (not representable in a resource).
bool containsInstance(const runtime::Value& v);

} // namespace inm::exporter

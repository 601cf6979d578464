// Input helpers of the streamed put_version (ServiceVersions.cpp): the spooled request body read in chunks
// for the JSON parser, and the hashed id set of the requires-closure check. Both keep the work per resource
// small and the memory independent of the version's size.
#pragma once

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/xxhash.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fcntl.h>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace inm::service {

/// A spooled request body read in 1 MiB chunks, for nlohmann's parser through FileChunks::Iter: the
/// library's iterator adapter then reads a character inline, where its std::istream adapter made a call per
/// character (a tenth of put_version's parse time at 100k resources).
class FileChunks {
 public:
  explicit FileChunks(const std::string& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), buf_(size_t(1) << 20) {
    if (fd_ >= 0) refill();
  }
  ~FileChunks() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileChunks(const FileChunks&) = delete;
  FileChunks& operator=(const FileChunks&) = delete;
  bool ok() const { return fd_ >= 0 && !readError_; }

  /// An input iterator over the file's bytes; the default-constructed one is the end.
  class Iter {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    Iter() = default;
    explicit Iter(FileChunks* src) : src_(src && src->pos_ < src->len_ ? src : nullptr) {}
    const char& operator*() const { return src_->buf_[src_->pos_]; }
    Iter& operator++() {
      if (++src_->pos_ == src_->len_ && !src_->refill()) src_ = nullptr;
      return *this;
    }
    bool operator==(const Iter& o) const { return src_ == o.src_; }
    bool operator!=(const Iter& o) const { return src_ != o.src_; }

   private:
    FileChunks* src_ = nullptr;
  };
  Iter begin() { return Iter(this); }
  Iter end() { return Iter(); }

 private:
  /// The next chunk; false at the end of the file or on a read error (then ok() is false).
  bool refill() {
    pos_ = len_ = 0;
    for (;;) {
      ssize_t n = ::read(fd_, buf_.data(), buf_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) readError_ = true;
      len_ = n > 0 ? size_t(n) : 0;
      return len_ > 0;
    }
  }
  int fd_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  bool readError_ = false;
};

/// A set of strings held as 64-bit hashes (8 bytes each, where a string set holds the ids themselves): the
/// streamed put_version's closure check keeps the server's memory flat in the version size. A collision could
/// hide one open `requires` (odds ~n²/2^64); every open one it does see is named exactly in SQL by the store.
class HashedSet {
 public:
  void insert(llvm::StringRef s) { set_.insert(key(s)); }
  void erase(llvm::StringRef s) { set_.erase(key(s)); }
  bool contains(llvm::StringRef s) const { return set_.count(key(s)) != 0; }
  bool empty() const { return set_.empty(); }

 private:
  /// DenseSet reserves the two largest values as its empty and tombstone markers.
  static uint64_t key(llvm::StringRef s) {
    uint64_t h = llvm::xxHash64(s);
    return h >= ~uint64_t(1) ? h - 2 : h;
  }
  llvm::DenseSet<uint64_t> set_;
};

} // namespace inm::service

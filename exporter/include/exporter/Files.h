// The artifact's files set: contents addressed by their sha1 (File's `hash` field points here), plus the
// byte-level helpers the artifact needs (sha1 hex, UTF-8 check, base64). Filled by mappers during export,
// written last in the artifact. Invariant: key == sha1hex(content) for every entry; sorted() is in ascending
// hash order (deterministic output).
#pragma once

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/StringSaver.h>

#include <string>
#include <utility>
#include <vector>

namespace inm::exporter {

/// Lower-case hex sha1 of the bytes of `data` (40 characters).
std::string sha1Hex(llvm::StringRef data);
/// True if `data` is well-formed UTF-8 (what the artifact can carry as a JSON string).
bool isValidUtf8(llvm::StringRef data);
/// Standard base64 (RFC 4648, with padding).
std::string base64Encode(llvm::StringRef data);

/// Content-addressed file contents of one export.
class FileStore {
 public:
  FileStore() : saver_(alloc_) {}
  /// Adds `content` (copied) and returns its sha1 hex; adding the same bytes twice stores them once.
  std::string add(llvm::StringRef content);
  size_t size() const { return byHash_.size(); }
  /// Adds every file of `other` not already here (contents copied; no hashing).
  void absorb(const FileStore& other);
  /// The content stored under `hash`; empty when there is none.
  llvm::StringRef content(llvm::StringRef hash) const {
    auto it = byHash_.find(hash);
    return it == byHash_.end() ? llvm::StringRef() : it->second;
  }
  /// (hash, content) pairs ascending by hash (the artifact's order).
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> sorted() const;

 private:
  llvm::BumpPtrAllocator alloc_;
  llvm::StringSaver saver_;
  llvm::StringMap<llvm::StringRef> byHash_; ///< hash -> content (in alloc_)
};

} // namespace inm::exporter

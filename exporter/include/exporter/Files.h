// The artifact's files set: contents addressed by their sha1 (File's `hash` field points here), plus the
// byte-level helpers the artifact needs (sha1 hex, UTF-8 check, base64). Filled by mappers during export,
// written last in the artifact. Invariant: key == sha1hex(content) for every entry; iteration is in
// ascending hash order (deterministic output).
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/StringSaver.h>

#include <map>
#include <string>

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
  size_t size() const { return files_.size(); }
  /// Adds every file of `other` not already here (contents copied; no hashing).
  void absorb(const FileStore& other);
  /// hash -> content, ascending by hash.
  const std::map<std::string, llvm::StringRef>& files() const { return files_; }

 private:
  llvm::BumpPtrAllocator alloc_;
  llvm::StringSaver saver_;
  std::map<std::string, llvm::StringRef> files_;
};

} // namespace inm::exporter

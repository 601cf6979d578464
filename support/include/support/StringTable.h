// Interned strings shared by every compiler stage. Names (identifiers, qualified names, literals) are
// interned once during parsing; later stages compare StringIds instead of text.
// Invariant: equal text <=> equal StringId; the StringRef of an id stays valid for the table's lifetime.
#pragma once

#include "support/Id.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Allocator.h>
#include <llvm/Support/StringSaver.h>

#include <vector>

namespace inm {

using StringId = Id<struct StringTag>;

/// Interns strings; move-only, owned by the compilation session.
class StringTable {
 public:
  StringTable() : saver_(alloc_) { intern(""); }
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  /// Returns the id of `s`, adding it on first sight.
  StringId intern(llvm::StringRef s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    llvm::StringRef saved = saver_.save(s);
    StringId id{uint32_t(strings_.size())};
    strings_.push_back(saved);
    ids_.try_emplace(saved, id);
    return id;
  }
  /// Returns the id of `s` if it was interned, else an invalid id.
  StringId lookup(llvm::StringRef s) const {
    auto it = ids_.find(s);
    return it == ids_.end() ? StringId{} : it->second;
  }
  /// The text of an interned id.
  llvm::StringRef str(StringId id) const {
    assert(id.index < strings_.size() && "foreign string id");
    return strings_[id.index];
  }
  llvm::StringRef operator[](StringId id) const { return str(id); }
  /// The empty string's id (always 0).
  static constexpr StringId empty() { return StringId{0}; }

 private:
  llvm::BumpPtrAllocator alloc_;
  llvm::StringSaver saver_;
  std::vector<llvm::StringRef> strings_;
  llvm::DenseMap<llvm::StringRef, StringId> ids_;
};

} // namespace inm

// The artifact file of `inmanta export -j FILE` (private to driver/): written into a temporary file beside
// the target and swapped in only when complete, so a failed or interrupted export never leaves a torn
// artifact and never touches an existing one. Invariant: after commit() or discard() no temporary file is
// left.
#pragma once

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <string>
#include <unistd.h>

namespace inm::driver {

/// Writes the artifact atomically: into a temporary file in the target's folder, renamed over the target only
/// when everything was written. A failed export leaves an existing file as it was. A target that exists and
/// is not a regular file (a device such as /dev/full or /dev/stdout, a pipe) is written directly.
class ArtifactFile {
 public:
  explicit ArtifactFile(std::string target) : target_(std::move(target)) {}
  /// Opens the stream; an error text on failure.
  std::string open() {
    namespace fs = llvm::sys::fs;
    fs::file_status st;
    bool exists = !fs::status(target_, st);
    if (exists && st.type() == fs::file_type::directory_file) return target_ + " is a directory";
    direct_ = exists && st.type() != fs::file_type::regular_file;
    std::error_code ec;
    if (direct_) {
      out_ = std::make_unique<llvm::raw_fd_ostream>(target_, ec);
      return ec ? "cannot write " + target_ + ": " + ec.message() : "";
    }
    llvm::SmallString<256> model(llvm::sys::path::parent_path(target_));
    llvm::sys::path::append(model, "." + llvm::sys::path::filename(target_).str() + ".tmp-%%%%%%");
    int fd = -1;
    llvm::SmallString<256> tmp;
    if ((ec = fs::createUniqueFile(model, fd, tmp, fs::OF_None, 0644)))
      return "cannot write " + target_ + ": creating a temporary file in its folder: " + ec.message();
    tmp_ = std::string(tmp.str());
    out_ = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
    return "";
  }
  llvm::raw_fd_ostream& stream() { return *out_; }
  /// Flushes, closes and renames; an error text on failure (the temporary file is then removed).
  std::string commit() {
    out_->close();
    if (out_->has_error()) {
      std::string msg = "cannot write " + target_ + ": " + out_->error().message();
      out_->clear_error();
      discard();
      return msg;
    }
    if (direct_) return "";
    if (exchangeWithTarget()) return "";
    if (std::error_code ec = llvm::sys::fs::rename(tmp_, target_)) {
      discard();
      return "cannot write " + target_ + ": " + ec.message();
    }
    tmp_.clear();
    return "";
  }
  /// Replacing an existing file with rename() makes ext4 (auto_da_alloc) allocate and start writing back
  /// every block of the new file inside the rename: ~20 ms of waiting for a 38 MB artifact. Swapping the two
  /// names atomically (RENAME_EXCHANGE) and removing the old file under the temporary name leaves the same
  /// result without that flush. False when the swap is not possible (no target yet, a file system without
  /// it): the caller then renames.
  bool exchangeWithTarget() {
    if (renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) return false;
    ::unlink(tmp_.c_str()); // now the old artifact; a leftover would only be a hidden stale file
    tmp_.clear();
    return true;
  }
  /// Drops the temporary file (the target is untouched).
  void discard() {
    if (out_) {
      out_->close();
      out_->clear_error();
    }
    if (!tmp_.empty()) llvm::sys::fs::remove(tmp_);
    tmp_.clear();
  }

 private:
  std::string target_, tmp_;
  bool direct_ = false;
  std::unique_ptr<llvm::raw_fd_ostream> out_;
};

} // namespace inm::driver

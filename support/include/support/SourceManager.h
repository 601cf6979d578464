// Owns the text of every source file of a compilation and maps positions to lines. Every diagnostic and
// every AST/IR node points into it through a SourceRange.
// Invariant: a FileId stays valid (and its buffer unchanged) for the manager's lifetime.
#pragma once

#include "support/Id.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cassert>
#include <memory>
#include <string>
#include <vector>

namespace inm {

using FileId = Id<struct FileTag>;

/// A location: file plus 1-based line and column (columns count code points, as the reference does).
struct SourceLoc {
  FileId file;
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return file.valid(); }
};

/// A span from `begin` to `end` (end is inclusive of the last character's column + 1).
struct SourceRange {
  FileId file;
  uint32_t line = 0, col = 0, endLine = 0, endCol = 0;
  bool valid() const { return file.valid(); }
  SourceLoc begin() const { return {file, line, col}; }
  static SourceRange at(SourceLoc l) { return {l.file, l.line, l.col, l.line, l.col + 1}; }
};

/// File buffers and their line tables.
class SourceManager {
 public:
  /// Reads a file from disk (normalising \r\n to \n). Errors name the path. `display`, when given, is the
  /// name locations print instead of `path` (e.g. `./main.cf`); it must name the same file from the cwd.
  llvm::Expected<FileId> loadFile(llvm::StringRef path, llvm::StringRef display = {});
  /// Adds an in-memory buffer under a display name (tests, fuzzing, stdin).
  FileId addBuffer(std::string name, std::string text);

  llvm::StringRef path(FileId id) const {
    assert(id.index < files_.size() && "foreign or invalid file id");
    return files_[id.index].path;
  }
  llvm::StringRef text(FileId id) const {
    assert(id.index < files_.size() && "foreign or invalid file id");
    return files_[id.index].text;
  }
  /// The text of 1-based line `line` without its newline ("" if out of range).
  llvm::StringRef lineText(FileId id, uint32_t line) const;
  uint32_t fileCount() const { return uint32_t(files_.size()); }

 private:
  struct File {
    std::string path;
    std::string text;
    mutable std::vector<uint32_t> lineStarts; // computed on first use
  };
  void computeLines(const File& f) const;
  std::vector<File> files_;
};

} // namespace inm

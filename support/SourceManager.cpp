// File loading and line tables for diagnostics; see SourceManager.h.
#include "support/SourceManager.h"

#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>

namespace inm {

llvm::Expected<FileId> SourceManager::loadFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return llvm::createStringError(buf.getError(), "cannot read %s: %s", path.str().c_str(),
                                   buf.getError().message().c_str());
  std::string text;
  llvm::StringRef raw = (*buf)->getBuffer();
  text.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;
    text.push_back(raw[i] == '\r' ? '\n' : raw[i]);
  }
  return addBuffer(path.str(), std::move(text));
}

FileId SourceManager::addBuffer(std::string name, std::string text) {
  files_.push_back(File{std::move(name), std::move(text), {}});
  return FileId{uint32_t(files_.size() - 1)};
}

void SourceManager::computeLines(const File& f) const {
  if (!f.lineStarts.empty()) return;
  f.lineStarts.push_back(0);
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.lineStarts.push_back(i + 1);
}

llvm::StringRef SourceManager::lineText(FileId id, uint32_t line) const {
  if (!id.valid() || id.index >= files_.size()) return {};
  const File& f = files_[id.index];
  computeLines(f);
  if (line == 0 || line > f.lineStarts.size()) return {};
  uint32_t b = f.lineStarts[line - 1];
  uint32_t e = line < f.lineStarts.size() ? f.lineStarts[line] - 1 : uint32_t(f.text.size());
  return llvm::StringRef(f.text).slice(b, e);
}

} // namespace inm

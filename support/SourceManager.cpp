// File loading and line tables for diagnostics; see SourceManager.h. A source file is opened without blocking
// and checked before any byte is read: only a regular file of at most limits().maxSourceBytes is read (a
// FIFO, a device such as /dev/zero, a directory or an oversized file is refused at once, naming the file),
// and the read itself stops at the limit should the file grow meanwhile.
#include "support/SourceManager.h"

#include "support/Limits.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace inm {

namespace {

const char* fileKind(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

llvm::Error tooBig(llvm::StringRef path, uint64_t size, uint64_t limit, bool atLeast) {
  return llvm::createStringError(
      std::make_error_code(std::errc::file_too_large),
      "cannot read %s: it has %s%llu bytes, more than the source-size limit of %llu "
      "bytes (--max-source-bytes, INM_MAX_SOURCE_BYTES)",
      path.str().c_str(), atLeast ? "at least " : "", static_cast<unsigned long long>(size),
      static_cast<unsigned long long>(limit));
}

} // namespace

llvm::Expected<FileId> SourceManager::loadFile(llvm::StringRef path, llvm::StringRef display) {
  auto fail = [&](int err, const std::string& why) {
    return llvm::createStringError(std::error_code(err, std::generic_category()), "cannot read %s: %s",
                                   path.str().c_str(), why.c_str());
  };
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(errno, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail(errno, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                std::string("it is ") + fileKind(st.st_mode) + ", not a regular file");
  const uint64_t limit = limits().maxSourceBytes;
  if (static_cast<uint64_t>(st.st_size) > limit) return tooBig(path, st.st_size, limit, false);
  std::string raw;
  raw.resize(static_cast<size_t>(st.st_size) + 1); // one byte more: a file that grew is noticed
  size_t got = 0;
  for (;;) {
    if (got == raw.size()) {
      if (raw.size() > limit) return tooBig(path, raw.size(), limit, true);
      raw.resize(std::min<uint64_t>(limit + 1, raw.size() * 2 + 4096));
    }
    ssize_t n = ::read(fd, raw.data() + got, raw.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno, std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  raw.resize(got);
  std::string text;
  text.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;
    text.push_back(raw[i] == '\r' ? '\n' : raw[i]);
  }
  return addBuffer(display.empty() ? path.str() : display.str(), std::move(text));
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

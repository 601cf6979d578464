// Unit tests for support/SourceManager.h: line tables (1-based, last line without newline, out of range)
// and loading from disk with \r\n and lone \r normalised to \n, so that columns and carets in diagnostics
// are the same whatever line endings a project uses.
#include "support/SourceManager.h"

#include "support/Limits.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

namespace inm {
namespace {

TEST(SourceManagerTest, LineTextOfBuffer) {
  SourceManager sm;
  FileId f = sm.addBuffer("mem.cf", "first\nsecond\n\nlast");
  EXPECT_EQ(sm.path(f), "mem.cf");
  EXPECT_EQ(sm.lineText(f, 1), "first");
  EXPECT_EQ(sm.lineText(f, 2), "second");
  EXPECT_EQ(sm.lineText(f, 3), "");
  EXPECT_EQ(sm.lineText(f, 4), "last");
  EXPECT_EQ(sm.lineText(f, 0), "");
  EXPECT_EQ(sm.lineText(f, 5), "");
}

TEST(SourceManagerTest, TrailingNewline) {
  SourceManager sm;
  FileId f = sm.addBuffer("t.cf", "a = 1\n");
  EXPECT_EQ(sm.lineText(f, 1), "a = 1");
  EXPECT_EQ(sm.lineText(f, 2), "");
}

TEST(SourceManagerTest, InvalidFileIdIsEmpty) {
  SourceManager sm;
  EXPECT_EQ(sm.lineText(FileId{}, 1), "");
  EXPECT_EQ(sm.lineText(FileId{7}, 1), "");
}

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/inm_sm_testXXXXXX";
    int fd = mkstemp(name);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << content;
    if (fd >= 0) close(fd);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SourceManagerTest, LoadNormalisesCrLf) {
  TempFile tmp("x = 1\r\ny = \"a\"\r\n\r\nz = 3");
  SourceManager sm;
  auto f = sm.loadFile(tmp.path());
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  EXPECT_EQ(sm.text(*f), "x = 1\ny = \"a\"\n\nz = 3");
  EXPECT_EQ(sm.lineText(*f, 1), "x = 1");
  EXPECT_EQ(sm.lineText(*f, 2), "y = \"a\"");
  EXPECT_EQ(sm.lineText(*f, 3), "");
  EXPECT_EQ(sm.lineText(*f, 4), "z = 3");
}

TEST(SourceManagerTest, LoadNormalisesLoneCr) {
  TempFile tmp("a\rb\n");
  SourceManager sm;
  auto f = sm.loadFile(tmp.path());
  ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
  EXPECT_EQ(sm.lineText(*f, 1), "a");
  EXPECT_EQ(sm.lineText(*f, 2), "b");
}

TEST(SourceManagerTest, MissingFileNamesPath) {
  SourceManager sm;
  auto f = sm.loadFile("/nonexistent/dir/main.cf");
  ASSERT_FALSE(bool(f));
  std::string msg = llvm::toString(f.takeError());
  EXPECT_NE(msg.find("/nonexistent/dir/main.cf"), std::string::npos) << msg;
  EXPECT_EQ(sm.fileCount(), 0u);
}

TEST(SourceManagerTest, RefusesNonRegularAndOversizedFiles) {
  SourceManager sm;
  std::string fifo = ::testing::TempDir() + "/inm_sm_fifo_" + std::to_string(::getpid()) + ".cf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = sm.loadFile(fifo); // no writer: must not block
  ::unlink(fifo.c_str());
  ASSERT_FALSE(bool(f));
  std::string msg = llvm::toString(f.takeError());
  EXPECT_NE(msg.find(fifo + ": it is a FIFO (named pipe), not a regular file"), std::string::npos) << msg;
  auto z = sm.loadFile("/dev/zero");
  ASSERT_FALSE(bool(z));
  msg = llvm::toString(z.takeError());
  EXPECT_NE(msg.find("/dev/zero: it is a character device"), std::string::npos) << msg;

  TempFile tmp("x = 1\n");
  uint64_t saved = limits().maxSourceBytes;
  mutableLimits().maxSourceBytes = 3;
  auto big = sm.loadFile(tmp.path());
  mutableLimits().maxSourceBytes = saved;
  ASSERT_FALSE(bool(big));
  msg = llvm::toString(big.takeError());
  EXPECT_NE(msg.find("it has 6 bytes, more than the source-size limit of 3 bytes"), std::string::npos) << msg;
  TempFile empty("");
  auto e = sm.loadFile(empty.path());
  ASSERT_TRUE(bool(e)) << llvm::toString(e.takeError());
  EXPECT_EQ(sm.text(*e), "");
}

} // namespace
} // namespace inm

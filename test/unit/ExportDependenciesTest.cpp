// Unit tests for exporter/Dependencies.h and exporter/Files.h: std's dir_before_file rule (string-prefix
// quirk included), graph normalisation, cycle detection (deterministic, non-recursive), sha1 hex, UTF-8
// detection, base64 and the content-addressed file store. Plain data only: no model needed.
#include "exporter/Dependencies.h"
#include "exporter/Files.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace inm::exporter {
namespace {

using Edges = std::vector<std::pair<uint32_t, uint32_t>>;

Edges sorted(Edges e) {
  std::sort(e.begin(), e.end());
  return e;
}

TEST(ExportDependenciesTest, FileRequiresParentDirectory) {
  std::vector<PathResource> rs = {
      {1, true, "/tmp/app"},
      {1, false, "/tmp/app/a.txt"},
      {1, true, "/tmp"},
  };
  Edges e;
  dirBeforeFile(rs, e);
  // a.txt requires /tmp/app and /tmp; /tmp/app requires /tmp; nobody requires itself.
  EXPECT_EQ(sorted(e), (Edges{{0, 2}, {1, 0}, {1, 2}}));
}

TEST(ExportDependenciesTest, PlainStringPrefixQuirk) {
  std::vector<PathResource> rs = {{7, true, "/app"}, {7, false, "/app2/x"}, {7, false, "/ap"}};
  Edges e;
  dirBeforeFile(rs, e);
  EXPECT_EQ(sorted(e), (Edges{{1, 0}})); // "/app2/x" starts with "/app"; "/ap" does not
}

TEST(ExportDependenciesTest, OnlySameHost) {
  std::vector<PathResource> rs = {{1, true, "/d"}, {2, false, "/d/f"}, {2, true, "/d/g"}};
  Edges e;
  dirBeforeFile(rs, e);
  EXPECT_TRUE(e.empty());
}

TEST(ExportDependenciesTest, EqualPathAndEmptyPath) {
  // A File with exactly a Directory's path requires it (different resources); an empty directory path is
  // a prefix of everything on the host.
  std::vector<PathResource> rs = {{1, true, "/same"}, {1, false, "/same"}, {1, true, ""}};
  Edges e;
  dirBeforeFile(rs, e);
  EXPECT_EQ(sorted(e), (Edges{{0, 2}, {1, 0}, {1, 2}}));
}

TEST(ExportDependenciesTest, FilesNeverTargets) {
  std::vector<PathResource> rs = {{1, false, "/a"}, {1, false, "/a/b"}};
  Edges e;
  dirBeforeFile(rs, e);
  EXPECT_TRUE(e.empty());
}

TEST(ExportDependenciesTest, NormalizeSortsAndDedups) {
  Graph g = {{3, 1, 3, 2}, {}, {0, 0}};
  normalizeGraph(g);
  EXPECT_EQ(g[0], (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(g[2], (std::vector<uint32_t>{0}));
}

TEST(ExportDependenciesTest, NoCycleInDag) {
  Graph g = {{1, 2}, {2}, {}};
  EXPECT_TRUE(findCycles(g).empty());
}

TEST(ExportDependenciesTest, CycleFromSmallestNode) {
  // 2 -> 3 -> 1 -> 2 : reported starting at 1, in edge order.
  Graph g = {{}, {2}, {3}, {1}};
  auto cycles = findCycles(g);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (std::vector<uint32_t>{1, 2, 3}));
}

TEST(ExportDependenciesTest, SelfLoopAndTwoComponents) {
  Graph g = {{0}, {2}, {1}, {4}, {}};
  normalizeGraph(g);
  auto cycles = findCycles(g);
  ASSERT_EQ(cycles.size(), 2u);
  EXPECT_EQ(cycles[0], (std::vector<uint32_t>{0}));
  EXPECT_EQ(cycles[1], (std::vector<uint32_t>{1, 2}));
}

TEST(ExportDependenciesTest, ShortestCycleInsideComponent) {
  // 0 -> 1 -> 2 -> 3 -> 0 and a shortcut 1 -> 0: the reported cycle is 0 -> 1.
  Graph g = {{1}, {0, 2}, {3}, {0}};
  normalizeGraph(g);
  auto cycles = findCycles(g);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (std::vector<uint32_t>{0, 1}));
}

TEST(ExportDependenciesTest, LongChainNoRecursion) {
  const uint32_t n = 300000;
  Graph g(n);
  for (uint32_t i = 0; i + 1 < n; ++i) g[i].push_back(i + 1);
  EXPECT_TRUE(findCycles(g).empty());
  g[n - 1].push_back(0);
  auto cycles = findCycles(g);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0].size(), n);
  EXPECT_EQ(cycles[0].front(), 0u);
  EXPECT_EQ(cycles[0].back(), n - 1);
}

TEST(ExportFilesTest, Sha1Hex) {
  EXPECT_EQ(sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(ExportFilesTest, Utf8AndBase64) {
  EXPECT_TRUE(isValidUtf8("plain"));
  EXPECT_TRUE(isValidUtf8("h\xC3\xA9llo"));
  EXPECT_FALSE(isValidUtf8(llvm::StringRef("\xFF\x00", 2)));
  EXPECT_FALSE(isValidUtf8("\xC3"));
  // past the 8-byte ASCII fast path
  EXPECT_TRUE(isValidUtf8("0123456789abcdef0123"));
  EXPECT_FALSE(isValidUtf8("0123456789abcdef\xFF"));
  EXPECT_FALSE(isValidUtf8("0123456789abcdef\xC3"));
  EXPECT_TRUE(isValidUtf8("0123456789abcdef\xC3\xA9"));
  EXPECT_EQ(base64Encode("hello"), "aGVsbG8=");
  EXPECT_EQ(base64Encode(""), "");
}

TEST(ExportFilesTest, StoreIsContentAddressed) {
  FileStore store;
  std::string a = store.add("one");
  std::string b = store.add("two");
  EXPECT_EQ(store.add("one"), a);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.content(a), "one");
  EXPECT_EQ(store.content(b), "two");
  EXPECT_EQ(store.content(sha1Hex("three")), "");
  EXPECT_EQ(a, sha1Hex("one"));
  // ascending hash order
  auto sorted = store.sorted();
  ASSERT_EQ(sorted.size(), 2u);
  EXPECT_LT(sorted[0].first, sorted[1].first);
  FileStore other;
  other.add("two");
  other.add("three");
  store.absorb(other);
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.content(sha1Hex("three")), "three");
}

} // namespace
} // namespace inm::exporter

// support/TextDiff: unified diffs as GNU diff -u prints them (hunks, context, line ranges, the missing final
// newline), binary and oversized contents summarised, and the bounds on the work.
#include "support/TextDiff.h"

#include <gtest/gtest.h>

using inm::contentDiff;

namespace {

std::string lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

} // namespace

TEST(TextDiff, EqualContentsGiveNothing) { EXPECT_EQ(contentDiff("a\nb\n", "a\nb\n", "a", "b"), ""); }

TEST(TextDiff, OneChangedLineWithContext) {
  std::string from = lines(1, 10), to = from;
  to.replace(to.find("line 5\n"), 7, "LINE FIVE\n");
  EXPECT_EQ(
      contentDiff(from, to, "current", "desired"),
      "--- current\n+++ desired\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+LINE FIVE\n line 6\n"
      " line 7\n line 8\n");
}

TEST(TextDiff, DistantChangesMakeTwoHunksAndNearOnesOne) {
  std::string from = lines(1, 30), to = from;
  to.replace(to.find("line 2\n"), 7, "two\n");
  to.replace(to.find("line 25\n"), 8, "");
  EXPECT_EQ(contentDiff(from, to, "a", "b"),
            "--- a\n+++ b\n@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n"
            " line 4\n line 5\n@@ -22,7 +22,6 @@\n line 22\n line 23\n line 24\n"
            "-line 25\n line 26\n line 27\n line 28\n");
  std::string near = lines(1, 12);
  std::string nearTo = near;
  nearTo.replace(nearTo.find("line 3\n"), 7, "three\n");
  nearTo.replace(nearTo.find("line 9\n"), 7, "nine\n");
  std::string d = contentDiff(near, nearTo, "a", "b"); // 5 equal lines between: within 2*3, one hunk
  size_t hunks = 0;
  for (size_t at = d.find("@@ -"); at != std::string::npos; at = d.find("@@ -", at + 1)) ++hunks;
  EXPECT_EQ(hunks, 1u) << d;
  EXPECT_NE(d.find("@@ -1,12 +1,12 @@"), std::string::npos) << d;
}

TEST(TextDiff, EmptySidesAndMissingFinalNewline) {
  EXPECT_EQ(contentDiff("", "a\nb\n", "a", "b"), "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(contentDiff("x\n", "", "a", "b"), "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n");
  EXPECT_EQ(contentDiff("x\ny", "x\ny\n", "a", "b"),
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n");
}

TEST(TextDiff, BinaryAndHugeContentsAreSummarised) {
  EXPECT_EQ(contentDiff(std::string("a\0b", 3), "abc", "a", "b"),
            "binary content differs: 3 bytes -> 3 bytes\n");
  EXPECT_EQ(contentDiff("\xff\xfe", "x", "a", "b"), "binary content differs: 2 bytes -> 1 bytes\n");
  EXPECT_FALSE(inm::looksBinary("h\xc3\xa9llo \xe2\x98\x83\n"));
  std::string big = lines(1, 25000);
  EXPECT_NE(contentDiff(big, big + "x\n", "a", "b").find("more than the 20,000 lines a diff is shown for"),
            std::string::npos);
}

TEST(TextDiff, TooManyChangesAndLongOutputAreBounded) {
  std::string from, to;
  for (int i = 0; i < 5000; ++i) {
    from += "a" + std::to_string(i) + "\n";
    to += "b" + std::to_string(i) + "\n";
  }
  EXPECT_NE(contentDiff(from, to, "a", "b").find("more than 2,000 changed lines, no diff shown"),
            std::string::npos);
  std::string many, manyTo;
  for (int i = 0; i < 600; ++i) {
    many += "same " + std::to_string(i) + "\n";
    manyTo += "same " + std::to_string(i) + "\n";
    if (i % 2 == 0) manyTo += "added " + std::to_string(i) + "\n";
  }
  std::string d = contentDiff(many, manyTo, "a", "b");
  EXPECT_NE(d.find("more lines of diff not shown"), std::string::npos);
  size_t n = 0;
  for (char c : d) n += c == '\n';
  EXPECT_LT(n, 420u);
}

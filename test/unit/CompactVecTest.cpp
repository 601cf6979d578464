// CompactVec (support/CompactVec.h): growth keeps the elements in order, swap and reset hand over or free
// the memory, and the layout stays 16 bytes.
#include "support/CompactVec.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace inm {
namespace {

TEST(CompactVecTest, IsSixteenBytes) { static_assert(sizeof(CompactVec<uint64_t>) == 16); }

TEST(CompactVecTest, GrowsKeepingOrder) {
  CompactVec<uint32_t> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 0u);
  for (uint32_t i = 0; i < 1000; ++i) v.push_back(i * 3);
  ASSERT_EQ(v.size(), 1000u);
  EXPECT_GE(v.capacity(), 1000u);
  for (uint32_t i = 0; i < 1000; ++i) EXPECT_EQ(v[i], i * 3);
  uint64_t sum = 0;
  for (uint32_t x : v) sum += x;
  EXPECT_EQ(sum, 3u * 999u * 1000u / 2u);
  llvm::ArrayRef<uint32_t> ref = v;
  EXPECT_EQ(ref.size(), 1000u);
  EXPECT_EQ(ref.back(), 2997u);
}

TEST(CompactVecTest, SwapClearReset) {
  CompactVec<int> a, b;
  a.push_back(1);
  a.push_back(2);
  b.swap(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.capacity(), 0u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1], 2);
  size_t cap = b.capacity();
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.capacity(), cap); // clear keeps the memory
  b.push_back(7);
  EXPECT_EQ(b[0], 7);
  b.reset();
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_EQ(b.begin(), b.end());
}

TEST(CompactVecTest, MoveLeavesSourceEmpty) {
  CompactVec<int> a;
  a.push_back(5);
  CompactVec<int> b(std::move(a));
  EXPECT_TRUE(a.empty()); // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], 5);
  CompactVec<int> c;
  c.push_back(9);
  c = std::move(b);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0], 5);
}

} // namespace
} // namespace inm

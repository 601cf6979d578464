// support/CheckedMath.h: the language's 64-bit integer operations report overflow instead of wrapping and
// never trap (INT64_MIN % -1, INT64_MIN // -1), and float-to-int conversion refuses out-of-range values.
#include "support/CheckedMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace inm;

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
} // namespace

TEST(CheckedMathTest, PowExactAndOverflow) {
  int64_t r = 0;
  EXPECT_TRUE(checkedPow(2, 62, r));
  EXPECT_EQ(r, int64_t(1) << 62);
  EXPECT_FALSE(checkedPow(2, 63, r));
  EXPECT_TRUE(checkedPow(-2, 63, r));
  EXPECT_EQ(r, kMin);
  EXPECT_TRUE(checkedPow(3037000499, 2, r));
  EXPECT_FALSE(checkedPow(3037000500, 2, r));
  EXPECT_TRUE(checkedPow(-1, kMax, r));
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(checkedPow(7, 0, r));
  EXPECT_EQ(r, 1);
  EXPECT_FALSE(checkedPow(10, 1000000000000, r)); // O(log n): returns at once
}

TEST(CheckedMathTest, FloorModAndDivNeverTrap) {
  EXPECT_EQ(floorMod(kMin, -1), 0);
  EXPECT_EQ(floorMod(-7, 3), 2);
  EXPECT_EQ(floorMod(7, -3), -2);
  int64_t q = 0;
  EXPECT_FALSE(floorDiv(kMin, -1, q));
  EXPECT_TRUE(floorDiv(-7, 2, q));
  EXPECT_EQ(q, -4);
  EXPECT_TRUE(floorDiv(kMin, 1, q));
  EXPECT_EQ(q, kMin);
}

TEST(CheckedMathTest, NegAndFloatToInt) {
  int64_t r = 0;
  EXPECT_FALSE(checkedNeg(kMin, r));
  EXPECT_TRUE(checkedNeg(kMax, r));
  EXPECT_EQ(r, -kMax);
  EXPECT_TRUE(floatToInt(-9223372036854775808.0, r));
  EXPECT_EQ(r, kMin);
  EXPECT_FALSE(floatToInt(9223372036854775808.0, r));
  EXPECT_FALSE(floatToInt(std::nan(""), r));
  EXPECT_FALSE(floatToInt(INFINITY, r));
  EXPECT_TRUE(floatToInt(-2.9, r));
  EXPECT_EQ(r, -2);
}

// runtime/BigInt.h: exact ints beyond int64 (Python semantics for floor division/modulo, exact mixed
// comparisons, normalisation back to int64, the --max-int-digits limit checked before a huge power is
// computed).
#include "runtime/BigInt.h"

#include "runtime/Model.h"
#include "support/Limits.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

using namespace inm;
using namespace inm::runtime;

namespace {

struct BigIntTest : ::testing::Test {
  ValueArena arena;
  Value big(const char* text) {
    Value v;
    std::string err;
    EXPECT_TRUE(parseInt(arena, text, 10, v, err)) << text << ": " << err;
    return v;
  }
  Value op(IntOp o, const Value& a, const Value& b) {
    Value out;
    std::string err = intArith(arena, o, a, b, out);
    EXPECT_EQ(err, "");
    return out;
  }
};

TEST_F(BigIntTest, OverflowPromotesAndResultsNormalise) {
  Value max = Value::integer(INT64_MAX);
  Value sum = op(IntOp::Add, max, Value::integer(1));
  EXPECT_EQ(sum.kind, ValueKind::BigInt);
  EXPECT_EQ(intToString(sum), "9223372036854775808");
  Value back = op(IntOp::Sub, sum, Value::integer(1));
  EXPECT_EQ(back.kind, ValueKind::Int); // fits again: never a BigInt holding a 64-bit value
  EXPECT_EQ(back.i, INT64_MAX);
  Value min = Value::integer(INT64_MIN);
  EXPECT_EQ(intToString(op(IntOp::Sub, min, Value::integer(1))), "-9223372036854775809");
  EXPECT_EQ(intToString(op(IntOp::Mul, Value::integer(4294967296), Value::integer(4294967296))),
            "18446744073709551616");
  EXPECT_EQ(intToString(op(IntOp::Pow, Value::integer(2), Value::integer(100))),
            "1267650600228229401496703205376");
  EXPECT_EQ(intToString(op(IntOp::Pow, Value::integer(-3), Value::integer(41))), "-36472996377170786403");
}

TEST_F(BigIntTest, FloorDivisionAndModuloFollowPython) {
  Value p = big("1267650600228229401496703205376"); // 2**100
  EXPECT_EQ(intToString(op(IntOp::FloorDiv, p, Value::integer(3))), "422550200076076467165567735125");
  EXPECT_EQ(intToString(op(IntOp::Mod, p, Value::integer(7))), "2");
  Value n = big("-1267650600228229401496703205376");
  EXPECT_EQ(intToString(op(IntOp::Mod, n, Value::integer(7))), "5");
  EXPECT_EQ(intToString(op(IntOp::FloorDiv, n, Value::integer(7))), "-181092942889747057356671886483");
  EXPECT_EQ(intToString(op(IntOp::Mod, p, Value::integer(-3))), "-2");
  EXPECT_EQ(intToString(op(IntOp::Mod, Value::integer(INT64_MIN), Value::integer(-1))), "0");
  EXPECT_EQ(intToString(op(IntOp::FloorDiv, Value::integer(INT64_MIN), Value::integer(-1))),
            "9223372036854775808");
}

TEST_F(BigIntTest, ComparisonsAreExact) {
  Value p64 = big("18446744073709551616");
  EXPECT_EQ(compareInts(p64, big("18446744073709551617")), -1);
  EXPECT_EQ(compareInts(big("-18446744073709551617"), p64), -1);
  EXPECT_EQ(compareInts(p64, big("18446744073709551616")), 0);
  EXPECT_EQ(compareInts(p64, Value::integer(INT64_MAX)), 1);
  EXPECT_EQ(compareIntFloat(p64, 18446744073709551616.0), 0);
  EXPECT_EQ(compareIntFloat(big("18446744073709551617"), 18446744073709551616.0), 1);
  EXPECT_EQ(compareIntFloat(Value::integer(9007199254740993), 9007199254740992.0),
            1); // not rounded to double
  EXPECT_EQ(compareIntFloat(Value::integer(3), 3.5), -1);
  EXPECT_EQ(compareIntFloat(Value::integer(-3), -3.5), 1);
  EXPECT_EQ(compareIntFloat(p64, INFINITY), -1);
  EXPECT_EQ(compareIntFloat(p64, NAN), 2);
  EXPECT_TRUE(valuesEqual(p64, Value::real(18446744073709551616.0)));
  EXPECT_FALSE(valuesEqual(Value::integer(9007199254740993), Value::real(9007199254740992.0)));
}

TEST_F(BigIntTest, ConversionsAndTexts) {
  Value v = big("-255");
  EXPECT_EQ(v.kind, ValueKind::Int);
  EXPECT_EQ(intMagnitudeText(v, 16), "ff");
  Value h;
  std::string err;
  ASSERT_TRUE(parseInt(arena, "-1fffffffffffffffffff", 16, h, err));
  EXPECT_EQ(intToString(h), "-151115727451828646838271");
  EXPECT_EQ(intMagnitudeText(h, 16, true), "1FFFFFFFFFFFFFFFFFFF");
  EXPECT_EQ(intMagnitudeText(big("18446744073709551616"), 2).size(), 65u);
  EXPECT_EQ(intMagnitudeText(big("18446744073709551616"), 8), "2000000000000000000000");
  EXPECT_FALSE(parseInt(arena, "12a", 10, h, err));
  EXPECT_FALSE(parseInt(arena, "", 10, h, err));
  double d;
  EXPECT_TRUE(intToDouble(big("18446744073709551616"), d));
  EXPECT_EQ(d, 18446744073709551616.0);
  Value huge = op(IntOp::Pow, Value::integer(2), Value::integer(1100));
  EXPECT_FALSE(intToDouble(huge, d)); // Python: OverflowError
  Value f;
  ASSERT_TRUE(floatToIntValue(arena, 1e30, f));
  EXPECT_EQ(intToString(f), "1000000000000000019884624838656");
  EXPECT_FALSE(floatToIntValue(arena, NAN, f));
  EXPECT_EQ(intSaturated(huge), INT64_MAX);
}

TEST_F(BigIntTest, DigitLimitIsCheckedBeforeComputing) {
  Value out;
  auto t0 = std::chrono::steady_clock::now();
  std::string err = intArith(arena, IntOp::Pow, Value::integer(2), Value::integer(1000000000000000000), out);
  EXPECT_NE(err.find("--max-int-digits"), std::string::npos) << err;
  err = intArith(arena, IntOp::Pow, Value::integer(3), big("100000000000000000000000"), out);
  EXPECT_NE(err.find("--max-int-digits"), std::string::npos) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  uint64_t saved = limits().maxIntDigits;
  mutableLimits().maxIntDigits = 30;
  EXPECT_EQ(intArith(arena, IntOp::Pow, Value::integer(10), Value::integer(29), out), ""); // 30 digits
  err = intArith(arena, IntOp::Pow, Value::integer(10), Value::integer(30), out);          // 31 digits
  EXPECT_EQ(err, "an integer of about 31 digits exceeds the limit of 30 digits (--max-int-digits)");
  EXPECT_FALSE(parseInt(arena, "1234567890123456789012345678901", 10, out, err));
  EXPECT_NE(err.find("limit of 30"), std::string::npos);
  mutableLimits().maxIntDigits = saved;
}

} // namespace

// model/JsonNumbers.h's keepFloatsInJsonb: the float literals jsonb would print back as integers become plain
// digits + ".0" with the same value; every other literal, string and key is left as written.
#include "model/JsonNumbers.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using inm::model::keepFloatsInJsonb;

/// The text keepFloatsInJsonb stores for `json` (the input itself when nothing is rewritten).
std::string stored(const std::string& json) {
  std::string out = "untouched";
  if (!keepFloatsInJsonb(json, out)) {
    EXPECT_EQ(out, "untouched") << json;
    return json;
  }
  return out;
}

TEST(JsonNumbersTest, IntegralFloatsWithAnExponentBecomePlainDigits) {
  EXPECT_EQ(stored("1e+20"), "100000000000000000000.0");
  EXPECT_EQ(stored("1e20"), "100000000000000000000.0");
  EXPECT_EQ(stored("1E16"), "10000000000000000.0");
  EXPECT_EQ(stored("-1e+16"), "-10000000000000000.0");
  EXPECT_EQ(stored("2.5e1"), "25.0");
  EXPECT_EQ(stored("2.5e+01"), "25.0");
  EXPECT_EQ(stored("0.5e1"), "5.0");
  EXPECT_EQ(stored("0e5"), "0.0");
  EXPECT_EQ(stored("-0e0"), "-0.0");
  EXPECT_EQ(stored("-0.0e0"), "-0.0e0"); // a display scale of 1 already
  EXPECT_EQ(stored("1.5e+300"), "15" + std::string(299, '0') + ".0");
  EXPECT_EQ(stored("1.7976931348623157e+308"), "17976931348623157" + std::string(292, '0') + ".0");
}

TEST(JsonNumbersTest, LiteralsJsonbKeepsAsFloatsAreLeftAlone) {
  for (const char* keep : {"2.5", "1.0", "-0.0", "1.5e-300", "2.55e1", "1.25e+1", "5e-324", "0.1", "12", "-7",
                           "18446744073709551615", "true", "null", "\"1e20\"", "[]", "{}"})
    EXPECT_EQ(stored(keep), keep);
}

TEST(JsonNumbersTest, OnlyNumbersOutsideStringsAreRewritten) {
  std::string in = R"({"a": 1e+20, "1e+20": "x 1e20 \" 2e5", "b": [1, 2.5, -3e3, 4.0e-2], "c\\": 7e1})";
  EXPECT_EQ(
      stored(in),
      R"({"a": 100000000000000000000.0, "1e+20": "x 1e20 \" 2e5", "b": [1, 2.5, -3000.0, 4.0e-2], "c\\": 70.0})");
}

TEST(JsonNumbersTest, TheRewriteKeepsEveryValue) {
  // nlohmann's and Python's texts of doubles: each rewritten text parses back to the same double.
  for (double d : {1e16, 1e20, 1.5e300, -2.5e17, 1.7976931348623157e308, 123456789e10, 4.2e21}) {
    std::string text = nlohmann::json(d).dump();
    std::string out;
    ASSERT_TRUE(keepFloatsInJsonb(text, out)) << text;
    EXPECT_NE(out.find(".0"), std::string::npos) << out;
    nlohmann::json back = nlohmann::json::parse(out);
    ASSERT_TRUE(back.is_number_float()) << out;
    EXPECT_EQ(back.get<double>(), d) << out;
  }
}

TEST(JsonNumbersTest, LongTextsAreScannedWhole) {
  // The quick check reads 16 bytes a step: a literal at any offset and near the end is still found, and text
  // whose only digit-then-e is inside strings (hex digests) comes back unchanged.
  for (size_t pad = 0; pad < 40; ++pad) {
    std::string prefix = R"({"h": ")" + std::string(pad, 'a') + R"(3e4f", "x": )";
    EXPECT_EQ(stored(prefix + "1e+20}"), prefix + "100000000000000000000.0}") << pad;
    EXPECT_EQ(stored(prefix + "2.5}"), prefix + "2.5}") << pad;
    EXPECT_EQ(stored(prefix + "7E3}"), prefix + "7000.0}") << pad;
  }
  std::string escaped = R"({"k\": ""1e20\\", "v": [4e1, "x"]})";
  EXPECT_EQ(stored(escaped), R"({"k\": ""1e20\\", "v": [40.0, "x"]})");
}

TEST(JsonNumbersTest, NumbersBeyondAnyDoubleAreLeftAsWritten) {
  EXPECT_EQ(stored("1e401"), "1e401");
  EXPECT_EQ(stored("1e99999999999999999999999"), "1e99999999999999999999999");
}

} // namespace

// sameJson: nlohmann's `==` except that a float never equals an int, at any depth (the desired-state diff).
TEST(JsonNumbersTest, SameJsonTellsFloatsFromInts) {
  using inm::model::sameJson;
  auto j = [](const char* text) { return nlohmann::json::parse(text); };
  EXPECT_TRUE(j("1.0") == j("1")); // what the diff used before
  EXPECT_FALSE(sameJson(j("1.0"), j("1")));
  EXPECT_FALSE(sameJson(j("10000000000000000.0"), j("10000000000000000")));
  EXPECT_FALSE(sameJson(j("{\"a\": [1, {\"b\": 2.0}]}"), j("{\"a\": [1, {\"b\": 2}]}")));
  EXPECT_TRUE(sameJson(j("{\"a\": [1, {\"b\": 2.0}]}"), j("{\"a\": [1, {\"b\": 2.0}]}")));
  EXPECT_TRUE(sameJson(j("1e16"), j("10000000000000000.0")));                     // two floats: by value
  EXPECT_TRUE(sameJson(j("18446744073709551615"), j("18446744073709551615")));    // uint64
  EXPECT_TRUE(sameJson(nlohmann::json(uint64_t{3}), nlohmann::json(int64_t{3}))); // one kind
  EXPECT_FALSE(sameJson(j("[1, 2]"), j("[1, 2, 3]")));
  EXPECT_FALSE(sameJson(j("{\"a\": 1}"), j("{\"b\": 1}")));
  EXPECT_FALSE(sameJson(j("{\"a\": 1}"), j("{\"a\": 1, \"b\": 1}")));
  EXPECT_FALSE(sameJson(j("\"1\""), j("1")));
  EXPECT_FALSE(sameJson(j("null"), j("0")));
  EXPECT_TRUE(sameJson(j("null"), j("null")));
  EXPECT_TRUE(sameJson(j("[true, \"x\", null]"), j("[true, \"x\", null]")));
}

// support/Base64.h: the RFC 4648 §10 test vectors both ways, the URL-safe alphabet, round trips of every byte
// value, and the strict decoder's refusals (bad characters, stray or wrong padding, truncated input).
#include "support/Base64.h"

#include <gtest/gtest.h>

using inm::support::Base64Alphabet;
using inm::support::base64Decode;
using inm::support::Base64Decoding;
using inm::support::base64Encode;

namespace {

std::string decodeOk(std::string_view text, Base64Decoding how = {}) {
  std::string error;
  auto bytes = base64Decode(text, how, &error);
  EXPECT_TRUE(bytes.has_value()) << "decoding '" << text << "': " << error;
  return bytes.value_or("<error>");
}

std::string decodeError(std::string_view text, Base64Decoding how = {}) {
  std::string error;
  auto bytes = base64Decode(text, how, &error);
  EXPECT_FALSE(bytes.has_value()) << "'" << text << "' decoded to '" << bytes.value_or("") << "'";
  return error;
}

} // namespace

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64Encode(plain), encoded);
    EXPECT_EQ(decodeOk(encoded), plain);
    // Unpadded input is accepted unless padding is required.
    std::string bare = std::string(encoded).substr(0, std::string(encoded).find('='));
    EXPECT_EQ(base64Encode(plain, Base64Alphabet::Standard, false), bare);
    EXPECT_EQ(decodeOk(bare), plain);
  }
}

TEST(Base64Test, UrlSafeAlphabet) {
  std::string bytes = "\xfb\xff\xbf";
  EXPECT_EQ(base64Encode(bytes), "+/+/");
  EXPECT_EQ(base64Encode(bytes, Base64Alphabet::UrlSafe), "-_-_");
  EXPECT_EQ(decodeOk("-_-_", {Base64Alphabet::UrlSafe}), bytes);
  EXPECT_EQ(decodeOk("-_+/", {Base64Alphabet::Either}), bytes);
  EXPECT_EQ(decodeError("-_-_"), "'-' at offset 0 is not a base64 character");
  EXPECT_EQ(decodeError("+/+/", {Base64Alphabet::UrlSafe}), "'+' at offset 0 is not a base64 character");
  // A JWT header: URL-safe without padding.
  EXPECT_EQ(base64Encode(R"({"alg":"HS256"})", Base64Alphabet::UrlSafe, false), "eyJhbGciOiJIUzI1NiJ9");
}

TEST(Base64Test, EveryByteRoundTrips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t len = 0; len <= all.size(); len += 37) {
    std::string part = all.substr(0, len);
    EXPECT_EQ(decodeOk(base64Encode(part)), part);
    EXPECT_EQ(decodeOk(base64Encode(part, Base64Alphabet::UrlSafe, false), {Base64Alphabet::UrlSafe}), part);
  }
}

TEST(Base64Test, StrictRefusals) {
  EXPECT_EQ(decodeError("Zm9v*mFy"), "'*' at offset 4 is not a base64 character");
  EXPECT_EQ(decodeError("Zm9v\x01"), "byte 0x01 at offset 4 is not a base64 character");
  EXPECT_EQ(decodeError("Zg==Zg=="), "'Z' at offset 4 follows the padding");
  EXPECT_EQ(decodeError("Zg="), "incomplete padding at the end");
  EXPECT_EQ(decodeError("Zm9v="), "'=' at offset 4 comes where data is expected");
  EXPECT_EQ(decodeError("Z==="), "'=' at offset 1 comes where data is expected");
  EXPECT_EQ(decodeError("Zm9==="), "too much padding at offset 4");
  EXPECT_EQ(decodeError("Zm9vY"), "a single character in the last group (truncated input)");
  EXPECT_EQ(decodeError("Zm8", {Base64Alphabet::Standard, false, true}), "missing padding at the end");
  EXPECT_EQ(decodeError("Zm9v\nYmFy"), "byte 0x0a at offset 4 is not a base64 character");
  EXPECT_EQ(decodeOk("Zm9v\r\nYmFy\n", {Base64Alphabet::Standard, true}), "foobar");
  EXPECT_FALSE(base64Decode("=").has_value()); // no error text asked for: still refused
}

// The client library's pure parts: percent-encoding, gzip, base64, base64url, HS256 tokens, and the artifact
// rewrite that feeds put_version (undefined -> resource_state, requires get ",v=N", nothing else changes).
#include "artifact/PutVersion.h"
#include "client/Client.h"
#include "client/Token.h"
#include "jwt/Jwt.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace inm::client;
using inm::jwt::base64url;
using inm::jwt::unbase64url;

TEST(ClientCodec, EncodeSegmentKeepsOnlyUnreserved) {
  EXPECT_EQ(encodeSegment("std::File[web1,path=/etc/motd],v=3"),
            "std%3A%3AFile%5Bweb1%2Cpath%3D%2Fetc%2Fmotd%5D%2Cv%3D3");
  EXPECT_EQ(encodeSegment("a-b.c_d~e"), "a-b.c_d~e");
  EXPECT_EQ(encodeSegment("é "), "%C3%A9%20");
}

TEST(ClientCodec, GzipRoundTrip) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data += "resource " + std::to_string(i) + "\n";
  std::string z = gzip(data);
  ASSERT_GE(z.size(), 10u);
  EXPECT_EQ(uint8_t(z[0]), 0x1f);
  EXPECT_EQ(uint8_t(z[1]), 0x8b);
  EXPECT_LT(z.size(), data.size() / 4);
  auto back = gunzip(z);
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(*back, data);
  auto bad = gunzip("not gzip at all");
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

TEST(ClientCodec, Base64) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("\xff\xfe"), "//4=");
  EXPECT_EQ(base64url("\xff\xfe"), "__4");
  auto raw = unbase64url("__4");
  ASSERT_TRUE(bool(raw));
  EXPECT_EQ(*raw, "\xff\xfe");
  auto bad = unbase64url("a*b");
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

TEST(ClientToken, SignedClaims) {
  SigningKey k;
  k.key = "secret";
  k.audience = k.issuer;
  std::string t = signToken(k, {"api", "agent"}, "env-1", 60, 1000);
  size_t d1 = t.find('.'), d2 = t.rfind('.');
  ASSERT_NE(d1, d2);
  auto claims = unbase64url(t.substr(d1 + 1, d2 - d1 - 1));
  ASSERT_TRUE(bool(claims));
  auto j = nlohmann::json::parse(*claims);
  EXPECT_EQ(j["urn:inmanta:ct"], "api,agent");
  EXPECT_EQ(j["urn:inmanta:env"], "env-1");
  EXPECT_EQ(j["iat"], 1000);
  EXPECT_EQ(j["exp"], 1060);
  EXPECT_EQ(j["aud"], nlohmann::json::array({"https://localhost:8888/"}));
  // Deterministic for the same inputs; another key gives another signature.
  EXPECT_EQ(t, signToken(k, {"api", "agent"}, "env-1", 60, 1000));
  k.key = "other";
  EXPECT_NE(t.substr(d2), signToken(k, {"api", "agent"}, "env-1", 60, 1000).substr(d2));
  EXPECT_FALSE(nlohmann::json::parse(
                   *unbase64url(signToken(k, {"api"}, "", 0, 5)
                                    .substr(d1 + 1, signToken(k, {"api"}, "", 0, 5).rfind('.') - d1 - 1)))
                   .contains("exp"));
}

TEST(ClientArtifact, RewriteForPutVersion) {
  std::string art = R"({"format_version": 1, "version": 4, "compile": {"resources": 2},
  "agents": ["h"],
  "resources": [
    {"hash": "<<undefined>>", "id": "std::File[h,path=/a\\]b],v=4", "meta": {"undefined": false, "requires": ["x"]}, "requires": [], "undefined": true, "version": 4},
    {"id": "std::testing::NullResource[h,name=n],v=4", "name": "n \"q\"", "requires": ["std::File[h,path=/a\\]b]", "std::X[h,k=v]"], "undefined": false, "version": 4}
  ],
  "resource_sets": {"s1": ["std::testing::NullResource[h,name=n]"]},
  "files": {"abc": "hello"}
})";
  auto parts = inm::artifact::toPutVersionBody(art, 4);
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  EXPECT_EQ(parts->resources, 2u);
  auto res = nlohmann::json::parse(parts->resourcesJson);
  ASSERT_EQ(res.size(), 2u);
  EXPECT_FALSE(res[0].contains("undefined"));
  EXPECT_EQ(res[0]["meta"],
            nlohmann::json::parse(R"({"undefined": false, "requires": ["x"]})")); // nested: untouched
  EXPECT_EQ(res[1]["requires"], nlohmann::json::array({"std::File[h,path=/a\\]b],v=4", "std::X[h,k=v],v=4"}));
  EXPECT_EQ(res[1]["name"], "n \"q\"");
  EXPECT_EQ(parts->resourceState, nlohmann::json({{"std::File[h,path=/a\\]b]", "undefined"}}));
  EXPECT_EQ(parts->types, (std::set<std::string>{"std::File", "std::testing::NullResource"}));
  EXPECT_EQ(parts->files["abc"], "hello");
  EXPECT_EQ(parts->resourceSets["s1"][0], "std::testing::NullResource[h,name=n]");
}

TEST(ClientArtifact, PythonCodeBecomesCodebatchedSources) {
  std::string art = R"({"format_version": 1, "resources": [], "resource_sets": {},
  "python_code": [{"files": {"plugins/__init__.py": "s1", "plugins/sub/__init__.py": "s2", "plugins/sub/x.py": "s3"},
                   "module": "m", "requirements": ["jinja2>=3"]}],
  "files": {"s1": "", "s2": "", "s3": ""}})";
  auto parts = inm::artifact::toPutVersionBody(art, 1);
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  nlohmann::json sources = inm::artifact::codeSources(parts->pythonCode);
  EXPECT_EQ(sources, nlohmann::json::parse(R"({
    "s1": ["plugins/__init__.py", "inmanta_plugins.m", ["jinja2>=3"]],
    "s2": ["plugins/sub/__init__.py", "inmanta_plugins.m.sub", ["jinja2>=3"]],
    "s3": ["plugins/sub/x.py", "inmanta_plugins.m.sub.x", ["jinja2>=3"]]})"));
  EXPECT_EQ(inm::artifact::codeSources(nlohmann::json::array()), nlohmann::json::object());
}

TEST(ClientArtifact, RejectsMalformedAndUnknownFormat) {
  auto bad = inm::artifact::toPutVersionBody(R"({"format_version": 1, "resources": [{"id": "x")", 1);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("malformed"), std::string::npos);
  auto v2 = inm::artifact::toPutVersionBody(
      R"({"format_version": 2, "resources": [], "files": {}, "resource_sets": {}})", 1);
  ASSERT_FALSE(bool(v2));
  EXPECT_NE(llvm::toString(v2.takeError()).find("format_version 2"), std::string::npos);
}

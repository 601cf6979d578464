// The executor protocol's codec (orchestrator/executor/include/executor/Protocol.h): frames split at any byte
// boundary, oversized and non-object frames rejected, request/result records and base64 round-trip.
#include "executor/Protocol.h"

#include <gtest/gtest.h>

using namespace inm::executor;

TEST(ExecutorProtocol, FramesSurviveArbitrarySplits) {
  std::string bytes = encodeFrame(Json{{"type", "hello"}, {"protocol", 1}}) +
                      encodeFrame(Json{{"type", "heartbeat"}, {"seq", 2}});
  ASSERT_EQ(bytes.substr(0, 4), std::string("\0\0\0\x1d", 4)); // 4-byte big-endian body length
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    FrameDecoder d;
    d.feed(bytes.data(), cut);
    std::vector<Json> got;
    while (auto m = d.next()) got.push_back(*m);
    d.feed(bytes.data() + cut, bytes.size() - cut);
    while (auto m = d.next()) got.push_back(*m);
    ASSERT_EQ(got.size(), 2u) << cut;
    EXPECT_EQ(got[0]["type"], "hello");
    EXPECT_EQ(got[1]["seq"], 2);
  }
}

TEST(ExecutorProtocol, BadFramesAreErrors) {
  FrameDecoder big;
  std::string head("\x7f\xff\xff\xff", 4);
  big.feed(head.data(), head.size());
  EXPECT_THROW(big.next(), std::runtime_error);
  FrameDecoder notObject;
  std::string f = std::string("\0\0\0\x03", 4) + "[1]";
  notObject.feed(f.data(), f.size());
  EXPECT_THROW(notObject.next(), std::runtime_error);
}

TEST(ExecutorProtocol, RecordsRoundTrip) {
  DeployRequest r;
  r.actionId = "a";
  r.resourceId = "std::File[h,path=/x],v=2";
  r.attributes = Json{{"path", "/x"}};
  r.reason = "because";
  r.dependencies = {{"std::Directory[h,path=/]", "deployed"}};
  r.dependencyChanged = true;
  r.dryRun = true;
  DeployRequest back = DeployRequest::fromJson(r.toJson());
  EXPECT_EQ(back.toJson(), r.toJson());
  Json moved = r.toJson();
  EXPECT_EQ(DeployRequest::fromJson(std::move(moved)).toJson(), r.toJson());
  EXPECT_THROW(DeployRequest::fromJson(Json{{"id", "x"}}), std::runtime_error);
  EXPECT_THROW(DeployRequest::fromJson(Json{{"action_id", 5}, {"id", "x"}}), std::runtime_error);

  ActionResult u = ActionResult::unavailable("a", "std::File[h,path=/x],v=2", "executor died");
  ActionResult ub = ActionResult::fromJson(u.toJson());
  EXPECT_EQ(ub.status, "unavailable");
  EXPECT_EQ(ub.logs[0]["msg"], "executor died");
  EXPECT_EQ(ub.logs[0]["level"], "ERROR");
}

TEST(ExecutorProtocol, Base64) {
  for (std::string s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                        std::string("\0\xff\x10 binary", 10)})
    EXPECT_EQ(base64Decode(base64Encode(s)), s);
  EXPECT_EQ(base64Encode("hello\n"), "aGVsbG8K");
  EXPECT_THROW(base64Decode("a$b"), std::runtime_error);
}

TEST(ExecutorProtocol, StoredAttributeTextIsSentVerbatimAndDecodesAsTheTree) {
  DeployRequest r;
  r.actionId = "a1";
  r.resourceId = "std::testing::NullResource[x,name=n],v=3";
  r.reason = "because \"quoted\"";
  r.dependencies["std::testing::NullResource[x,name=m]"] = "deployed";
  r.attributesText =
      std::make_shared<const std::string>(R"({"name": "n", "fail": true, "nested": {"k": [1, 2]}})");
  std::string body = "{\"type\":\"deploy\",\"requests\":[";
  r.appendJson(body);
  body += ',';
  DeployRequest plain = r; // the same request with a tree goes through toJson
  plain.attributesText.reset();
  plain.attributes = Json{{"name", "n"}};
  plain.appendJson(body);
  body += "]}";
  FrameDecoder d;
  std::string frame = encodeFrameBody(body);
  d.feed(frame.data(), frame.size());
  auto msg = d.next();
  ASSERT_TRUE(msg.has_value());
  ASSERT_EQ((*msg)["requests"].size(), 2u);
  DeployRequest back = DeployRequest::fromJson((*msg)["requests"][0]);
  EXPECT_EQ(back.actionId, "a1");
  EXPECT_EQ(back.reason, r.reason);
  EXPECT_EQ(back.dependencies, r.dependencies);
  EXPECT_EQ(back.attributes, Json::parse(*r.attributesText));
  EXPECT_EQ(DeployRequest::fromJson((*msg)["requests"][1]).attributes, plain.attributes);
}

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

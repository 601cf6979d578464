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

// A result frame's "logs" can be taken out as text (the scheduler stores it verbatim): the exact text of the
// array, brackets, braces and escaped quotes inside strings included; the message keeps "logs": [].
TEST(ExecutorProtocol, LogsTakenAsText) {
  std::string logs = R"([{"args":[],"kwargs":{"x":"]}\"["},"level":"INFO","msg":"a \"b\" ]"},)"
                     R"( {"level":"DEBUG","msg":"End run"}])";
  std::string body = R"({"type":"result","action_id":"a1","status":"deployed","logs":)" + logs +
                     R"(,"facts":{"k":[1,{"v":"]"}]}})";
  std::string bytes = encodeFrameBody(body) + encodeFrameBody(body);
  FrameDecoder d;
  d.feed(bytes.data(), bytes.size());
  std::string text;
  auto m = d.next(&text);
  ASSERT_TRUE(m);
  EXPECT_EQ(text, logs);
  EXPECT_EQ((*m)["logs"], Json::array());
  EXPECT_EQ((*m)["facts"]["k"][1]["v"], "]");
  EXPECT_EQ((*m)["status"], "deployed");
  EXPECT_EQ(Json::parse(text)[0]["kwargs"]["x"], "]}\"[");
  auto plain = d.next(); // without logsText: parsed as before
  ASSERT_TRUE(plain);
  EXPECT_EQ((*plain)["logs"][1]["msg"], "End run");

  // Not an array, or not valid JSON: no text; the second is the protocol error it always was.
  std::string noArray = R"({"type":"result","action_id":"a","status":"x","logs":5})";
  std::string bad = R"({"type":"result","action_id":"a","status":"x","logs":[{"msg":}]})";
  bytes = encodeFrameBody(noArray) + encodeFrameBody(bad);
  FrameDecoder e;
  e.feed(bytes.data(), bytes.size());
  text = "stale";
  auto n = e.next(&text);
  ASSERT_TRUE(n);
  EXPECT_EQ(text, "");
  EXPECT_EQ((*n)["logs"], 5);
  EXPECT_THROW(e.next(&text), std::runtime_error);
}

TEST(ExecutorProtocol, Base64) {
  for (const std::string& s : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
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

// The scheduler's fast path for result frames (decodeResultFrame) reads exactly what the general decoder
// reads, and declines (false) every frame it is not sure about, so the general path decides those.
TEST(ExecutorProtocol, FastResultDecoderMatchesTheGeneralOne) {
  ActionResult sent;
  sent.actionId = "4f0c1d2e-0000-4000-8000-000000000001";
  sent.resourceId = "std::testing::NullResource[agent1,name=r1],v=3";
  sent.status = "deployed";
  sent.change = "updated";
  sent.changes = Json{{"value", {{"current", "a"}, {"desired", "b"}}}};
  sent.logs =
      Json::array({LogLine{"INFO", "End run", Json{{"k", "é"}}, "2026-01-01T00:00:00.000000"}.toJson()});
  for (bool withChanges : {true, false}) {
    ActionResult x = sent;
    if (!withChanges) x.changes = Json::object();
    std::string body = x.toJson().dump();
    ActionResult fast;
    ASSERT_TRUE(decodeResultFrame(body, fast)) << body;
    std::string logsText;
    ActionResult general = ActionResult::fromJson(decodeFrameBody(body, &logsText));
    EXPECT_EQ(fast.actionId, general.actionId);
    EXPECT_EQ(fast.resourceId, general.resourceId);
    EXPECT_EQ(fast.status, "deployed");
    EXPECT_EQ(fast.change, "updated");
    EXPECT_EQ(fast.changes, general.changes);
    EXPECT_EQ(fast.changes, x.changes);
    EXPECT_EQ(fast.facts, Json::object());
    EXPECT_EQ(fast.logsText, logsText);
    EXPECT_EQ(Json::parse(fast.logsText)[0]["msg"], "End run");
  }
  // Declined: other frames, other shapes, escapes and non-ASCII in the plain fields, broken JSON.
  const char* declined[] = {
      R"({"type":"heartbeat","seq":1})",
      R"({"type":"facts_result","action_id":"a","status":"deployed","logs":[],"changes":{},"facts":{}})",
      R"({"type":"result","action_id":"a","status":"deployed","extra":1})",
      R"({"type":"result","action_id":"a\"b","status":"deployed"})",
      "{\"type\":\"result\",\"action_id\":\"a\xc3\xa9\",\"status\":\"deployed\"}",
      R"({"type":"result","action_id":"a","status":"deployed","logs":[{"msg":]})",
      R"({"type":"result","action_id":"a","status":"deployed","logs":{}})",
      R"({"type":"result","action_id":"a","status":"deployed","changes":{"x":}})",
      R"({"type":"result","action_id":"a","status":"deployed"} trailing)",
      R"({"type":"result","status":"deployed"})",
      R"({"type":"result","action_id":"a","status":1})",
      R"([1,2])",
      "",
  };
  for (const char* body : declined) {
    ActionResult r;
    EXPECT_FALSE(decodeResultFrame(body, r)) << body;
  }
  // A repeated key: the general decoder keeps the first "logs" as text and the second as lines, so the fast
  // path, which would keep only one of them, leaves such a frame to it.
  const char* repeated[] = {
      R"({"type":"result","action_id":"a","status":"deployed","logs":[1],"logs":[2]})",
      R"({"type":"result","action_id":"a","status":"deployed","status":"failed"})",
  };
  for (const char* body : repeated) {
    ActionResult r;
    EXPECT_FALSE(decodeResultFrame(body, r)) << body;
  }
  ActionResult minimal;
  ASSERT_TRUE(decodeResultFrame(R"( { "type" : "result" , "action_id":"a", "status":"failed" } )", minimal));
  EXPECT_EQ(minimal.change, "nochange");
  EXPECT_TRUE(minimal.logsText.empty());
}

// nextBody hands out frames without decoding them, across splits, like next.
TEST(ExecutorProtocol, FrameBodiesAcrossSplits) {
  std::string bytes = encodeFrameBody(R"({"type":"a"})") + encodeFrameBody(R"({"type":"bb"})");
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    FrameDecoder d;
    std::vector<std::string> got;
    d.feed(bytes.data(), cut);
    while (auto b = d.nextBody()) got.emplace_back(*b);
    d.feed(bytes.data() + cut, bytes.size() - cut);
    while (auto b = d.nextBody()) got.emplace_back(*b);
    ASSERT_EQ(got, (std::vector<std::string>{R"({"type":"a"})", R"({"type":"bb"})"})) << cut;
  }
}

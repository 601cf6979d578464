// The handler framework (orchestrator/executor/include/executor/Handler.h): the §8.2 CRUD algorithm, the §6.5
// dependency gate, the §8.3 context rules and log formatting, with a scripted in-memory handler.
#include "executor/Handler.h"

#include <gtest/gtest.h>

using namespace inm::executor;

namespace {

/// A CRUD handler over an in-memory "world" (present + value), recording which methods ran.
struct FakeWorld {
  bool exists = false;
  std::string value;
  std::vector<std::string> calls;
  bool throwInRead = false;
  bool skipInCreate = false;
  bool skipForDepsInCreate = false;
  bool throwInPost = false;
};

class FakeHandler : public CRUDHandler {
 public:
  explicit FakeHandler(FakeWorld& w) : w_(w) {}
  void pre(HandlerContext&, const Resource&) override { w_.calls.push_back("pre"); }
  void post(HandlerContext&, const Resource&) override {
    w_.calls.push_back("post");
    if (w_.throwInPost) throw std::runtime_error("post broke");
  }
  void readResource(HandlerContext&, Resource& current) override {
    w_.calls.push_back("read");
    if (w_.throwInRead) throw std::runtime_error("cannot read the thing");
    if (!w_.exists) throw ResourcePurged();
    current.attributes["value"] = w_.value;
  }
  void createResource(HandlerContext& ctx, const Resource& d) override {
    w_.calls.push_back("create");
    if (w_.skipInCreate) throw SkipResource("not now");
    if (w_.skipForDepsInCreate) throw SkipResourceForDependencies("a dependency is not ready");
    w_.exists = true;
    w_.value = d.get("value").get<std::string>();
    ctx.setCreated();
  }
  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& d) override {
    w_.calls.push_back("update");
    EXPECT_TRUE(changes.contains("value"));
    w_.value = d.get("value").get<std::string>();
    ctx.setUpdated();
  }
  void deleteResource(HandlerContext& ctx, const Resource&) override {
    w_.calls.push_back("delete");
    w_.exists = false;
    ctx.setPurged();
  }

 private:
  FakeWorld& w_;
};

Resource desired(const std::string& value, bool purged = false, bool reportOnly = false) {
  return Resource::fromId(
      "test::Thing[agent1,name=a],v=3",
      Json{{"name", "a"}, {"value", value}, {"purged", purged}, {"report_only", reportOnly}});
}

} // namespace

TEST(HandlerApi, ResourceIdParts) {
  Resource r = desired("x");
  EXPECT_EQ(r.type, "test::Thing");
  EXPECT_EQ(r.agent, "agent1");
  EXPECT_EQ(r.version, 3);
  EXPECT_EQ(r.unversionedId(), "test::Thing[agent1,name=a]");
  EXPECT_THROW(Resource::fromId("nonsense", Json::object()), InvalidOperation);
}

TEST(HandlerApi, CreateWhenAbsent) {
  FakeWorld w;
  FakeHandler h(w);
  HandlerContext ctx("a1", false);
  h.deploy(ctx, desired("v1"), {});
  EXPECT_EQ(ctx.status(), ResourceState::Deployed);
  EXPECT_EQ(ctx.change(), Change::Created);
  EXPECT_EQ(ctx.changes(), (Json{{"purged", {{"current", true}, {"desired", false}}}}));
  EXPECT_EQ(w.calls, (std::vector<std::string>{"pre", "read", "create", "post"}));
  EXPECT_TRUE(w.exists);
}

TEST(HandlerApi, UpdateOnlyChangedFields) {
  FakeWorld w{true, "old", {}};
  FakeHandler h(w);
  HandlerContext ctx("a1", false);
  h.deploy(ctx, desired("new"), {});
  EXPECT_EQ(ctx.change(), Change::Updated);
  EXPECT_EQ(ctx.changes(), (Json{{"value", {{"current", "old"}, {"desired", "new"}}}}));
  EXPECT_EQ(w.value, "new");
}

TEST(HandlerApi, NoChangeIsDeployedWithoutWrite) {
  FakeWorld w{true, "same", {}};
  FakeHandler h(w);
  HandlerContext ctx("a1", false);
  h.deploy(ctx, desired("same"), {});
  EXPECT_EQ(ctx.status(), ResourceState::Deployed);
  EXPECT_EQ(ctx.change(), Change::NoChange);
  EXPECT_TRUE(ctx.changes().empty());
  EXPECT_EQ(w.calls, (std::vector<std::string>{"pre", "read", "post"}));
}

TEST(HandlerApi, PurgedHandling) {
  { // existing + desired purged => delete
    FakeWorld w{true, "x", {}};
    FakeHandler h(w);
    HandlerContext ctx("a", false);
    h.deploy(ctx, desired("x", true), {});
    EXPECT_EQ(ctx.change(), Change::Purged);
    EXPECT_FALSE(w.exists);
    EXPECT_EQ(ctx.changes()["purged"], (Json{{"current", false}, {"desired", true}}));
  }
  { // absent + desired purged => nothing, deployed
    FakeWorld w;
    FakeHandler h(w);
    HandlerContext ctx("a", false);
    h.deploy(ctx, desired("x", true), {});
    EXPECT_EQ(ctx.status(), ResourceState::Deployed);
    EXPECT_EQ(ctx.change(), Change::NoChange);
    EXPECT_TRUE(ctx.changes().empty());
    EXPECT_EQ(w.calls, (std::vector<std::string>{"pre", "read", "post"}));
  }
}

TEST(HandlerApi, DryRunReportsDiffAndChangesNothing) {
  FakeWorld w{true, "old", {}};
  FakeHandler h(w);
  HandlerContext ctx("a", true);
  h.execute(ctx, desired("new"), true);
  EXPECT_EQ(ctx.status(), ResourceState::Dry);
  EXPECT_EQ(ctx.changes()["value"]["desired"], "new");
  EXPECT_EQ(w.value, "old");
}

TEST(HandlerApi, ReportOnly) {
  FakeWorld w{true, "old", {}};
  FakeHandler h(w);
  HandlerContext ctx("a", false);
  h.deploy(ctx, desired("new", false, true), {{"dep", "failed"}}); // report_only bypasses the gate
  EXPECT_EQ(ctx.status(), ResourceState::NonCompliant);
  EXPECT_EQ(w.value, "old");
  HandlerContext ctx2("b", false);
  h.deploy(ctx2, desired("old", false, true), {});
  EXPECT_EQ(ctx2.status(), ResourceState::Deployed);
}

TEST(HandlerApi, ExceptionBecomesFailedWithTraceback) {
  FakeWorld w{true, "x", {}};
  w.throwInRead = true;
  FakeHandler h(w);
  HandlerContext ctx("a", false);
  h.deploy(ctx, desired("y"), {});
  EXPECT_EQ(ctx.status(), ResourceState::Failed);
  const LogLine& last = ctx.logs().back();
  EXPECT_EQ(last.level, "ERROR");
  EXPECT_NE(last.msg.find("cannot read the thing"), std::string::npos) << last.msg;
  ASSERT_TRUE(last.kwargs.contains("traceback"));
  EXPECT_NE(last.kwargs["traceback"].get<std::string>().find("std::runtime_error"), std::string::npos);
  EXPECT_NE(last.kwargs["traceback"].get<std::string>().find("in read_resource"), std::string::npos);
  EXPECT_EQ(w.calls.back(), "post"); // post always runs
}

TEST(HandlerApi, SkipSignals) {
  FakeWorld w;
  w.skipInCreate = true;
  FakeHandler h(w);
  HandlerContext ctx("a", false);
  h.deploy(ctx, desired("v"), {});
  EXPECT_EQ(ctx.status(), ResourceState::Skipped);
  FakeWorld w2;
  w2.skipForDepsInCreate = true;
  FakeHandler h2(w2);
  HandlerContext ctx2("b", false);
  h2.deploy(ctx2, desired("v"), {});
  EXPECT_EQ(ctx2.status(), ResourceState::SkippedForDependency);
}

TEST(HandlerApi, PostExceptionIsLoggedNotReported) {
  FakeWorld w;
  w.throwInPost = true;
  FakeHandler h(w);
  HandlerContext ctx("a", false);
  h.deploy(ctx, desired("v"), {});
  EXPECT_EQ(ctx.status(), ResourceState::Deployed);
  EXPECT_NE(ctx.logs().back().msg.find("after deployment"), std::string::npos);
}

TEST(HandlerApi, DependencyGate) {
  for (const char* state : {"failed", "skipped", "undefined", "skipped_for_undefined", "dry", "available",
                            "deploying", "non_compliant", "unavailable"}) {
    FakeWorld w;
    FakeHandler h(w);
    HandlerContext ctx("a", false);
    h.deploy(ctx, desired("v"),
             {{"test::Thing[agent1,name=dep]", "deployed"}, {"test::Thing[agent1,name=x]", state}});
    EXPECT_EQ(ctx.status(), ResourceState::SkippedForDependency) << state;
    EXPECT_TRUE(w.calls.empty()) << state;
    ASSERT_FALSE(ctx.logs().empty());
    EXPECT_NE(ctx.logs().back().msg.find("test::Thing[agent1,name=x]"), std::string::npos)
        << ctx.logs().back().msg;
  }
  FakeWorld w;
  FakeHandler h(w);
  HandlerContext ctx("a", false);
  h.deploy(ctx, desired("v"), {{"test::Thing[agent1,name=dep]", "deployed"}});
  EXPECT_EQ(ctx.status(), ResourceState::Deployed);
}

namespace {
class ReloadHandler : public CRUDHandler {
 public:
  int reloads = 0;
  void readResource(HandlerContext&, Resource&) override {}
  void createResource(HandlerContext&, const Resource&) override {}
  void updateResource(HandlerContext&, const Json&, const Resource&) override {}
  void deleteResource(HandlerContext&, const Resource&) override {}
  bool canReload() const override { return true; }
  void doReload(HandlerContext&, const Resource&) override { ++reloads; }
};
} // namespace

TEST(HandlerApi, ReloadOnlyWhenDependencyChanged) {
  ReloadHandler h;
  HandlerContext c1("a", false);
  h.deploy(c1, desired("v"), {}, false);
  EXPECT_EQ(h.reloads, 0);
  HandlerContext c2("b", false);
  h.deploy(c2, desired("v"), {}, true);
  EXPECT_EQ(h.reloads, 1);
}

TEST(HandlerContext, ChangeSetOnce) {
  HandlerContext ctx("a", false);
  ctx.setCreated();
  EXPECT_THROW(ctx.setUpdated(), InvalidOperation);
  EXPECT_THROW(ctx.setCreated(), InvalidOperation);
  EXPECT_EQ(ctx.change(), Change::Created);
  EXPECT_TRUE(ctx.changed());
}

TEST(HandlerContext, NonCompliantNeedsChanges) {
  HandlerContext ctx("a", false);
  EXPECT_THROW(ctx.setResourceState(ResourceState::NonCompliant), InvalidOperation);
  ctx.addChange("x", 2, 1);
  ctx.setResourceState(ResourceState::NonCompliant);
  EXPECT_EQ(ctx.status(), ResourceState::NonCompliant);
  EXPECT_EQ(ctx.changes()["x"], (Json{{"current", 1}, {"desired", 2}}));
}

TEST(HandlerContext, LegacyInvalidStatusBecomesFailed) {
  HandlerContext ctx("a", false);
  ctx.setStatus("deploying");
  EXPECT_EQ(ctx.status(), ResourceState::Failed);
  EXPECT_EQ(ctx.logs().back().level, "WARNING");
  ctx.setStatus("skipped");
  EXPECT_EQ(ctx.status(), ResourceState::Skipped);
}

TEST(HandlerContext, UpdateChangesForms) {
  HandlerContext ctx("a", false);
  ctx.updateChanges(Json{{"a", {{"current", 1}, {"desired", 2}}}, {"b", Json::array({"x", "y"})}});
  EXPECT_EQ(ctx.changes()["b"], (Json{{"current", "x"}, {"desired", "y"}}));
  EXPECT_THROW(ctx.updateChanges(Json{{"c", 3}}), InvalidOperation);
  ctx.addChanges(Json{{"d", Json::array({1, 2})}});
  EXPECT_EQ(ctx.changes()["d"], (Json{{"current", 1}, {"desired", 2}}));
}

TEST(HandlerContext, StructuredLogs) {
  HandlerContext ctx("a", false);
  ctx.info("Creating %(name)s with %(count)d items (%(flag)r) 100%%",
           {{"name", "lb"}, {"count", 3}, {"flag", true}});
  const LogLine& l = ctx.logs().back();
  EXPECT_EQ(l.msg, "Creating lb with 3 items (True) 100%");
  EXPECT_EQ(l.kwargs["name"], "lb");
  Json j = l.toJson();
  EXPECT_EQ(j["level"], "INFO");
  EXPECT_EQ(j["args"], Json::array());
  EXPECT_EQ(j["timestamp"].get<std::string>().size(), 32u);
  // A missing key keeps the template text (no crash, no partial text).
  ctx.warning("value is %(missing)s");
  EXPECT_EQ(ctx.logs().back().msg, "value is %(missing)s");
  EXPECT_EQ(formatPercent("%(s)r", Json{{"s", "it's"}}), "'it\\'s'");
}

TEST(HandlerContext, FactsAndScratch) {
  HandlerContext ctx("a", true);
  ctx.setFact("ip", "10.0.0.1");
  ctx.setFact("mac", "aa", false);
  EXPECT_EQ(ctx.facts()["ip"], (Json{{"value", "10.0.0.1"}, {"expires", true}}));
  EXPECT_EQ(ctx.facts()["mac"]["expires"], false);
  EXPECT_FALSE(ctx.contains("k"));
  ctx.set("k", 5);
  EXPECT_TRUE(ctx.contains("k"));
  EXPECT_EQ(ctx.get("k"), 5);
  EXPECT_TRUE(ctx.get("nope").is_null());
  EXPECT_TRUE(ctx.isDryRun());
}

TEST(HandlerRegistry, LastRegistrationWins) {
  HandlerRegistry reg;
  registerStdHandlers(reg);
  EXPECT_TRUE(reg.has("std::File"));
  EXPECT_TRUE(reg.has("std::testing::NullResource"));
  EXPECT_EQ(reg.create("nope::Nothing"), nullptr);
  int made = 0;
  reg.add("std::File", [&]() -> std::unique_ptr<HandlerAPI> {
    ++made;
    return std::make_unique<ReloadHandler>();
  });
  auto h = reg.create("std::File");
  EXPECT_EQ(made, 1);
  EXPECT_TRUE(h->canReload());
}

namespace {
class FactsHandler : public CRUDHandler {
 public:
  bool fail = false;
  void readResource(HandlerContext&, Resource&) override {}
  void createResource(HandlerContext&, const Resource&) override {}
  void updateResource(HandlerContext&, const Json&, const Resource&) override {}
  void deleteResource(HandlerContext&, const Resource&) override {}
  Json facts(HandlerContext& ctx, const Resource&) override {
    if (fail) throw std::runtime_error("no facts today");
    ctx.setFact("mac", "aa:bb", false);
    return Json{{"ip", "10.0.0.1"}};
  }
};
} // namespace

TEST(HandlerApi, CheckFacts) {
  FactsHandler h;
  HandlerContext ctx("f", false);
  Json facts = h.checkFacts(ctx, desired("v"));
  EXPECT_EQ(facts, (Json{{"ip", "10.0.0.1"}, {"mac", "aa:bb"}}));
  EXPECT_EQ(ctx.status(), ResourceState::Deployed);
  h.fail = true;
  HandlerContext ctx2("g", false);
  EXPECT_TRUE(h.checkFacts(ctx2, desired("v")).empty());
  EXPECT_EQ(ctx2.status(), ResourceState::Failed);
  EXPECT_NE(ctx2.logs().back().msg.find("no facts today"), std::string::npos);
}

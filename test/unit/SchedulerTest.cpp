// Unit tests for the scheduler state machine (orchestrator/scheduler) with a fake executor and a fake clock
// (SchedulerFixture.h): ordering (§6.3), parallelism, batching, the executor's end line, and the ten hard
// parts of orchestrator.md §17 (dependency fails, undefined, new versions during deploys, executor death,
// orphans, requires-only changes, events, pause/halt). The timers, priorities, user deploys, dry-run and
// facts are in SchedulerTimersTest.cpp. Deterministic and fast: a test decides when and how each work item
// finishes.
#include "SchedulerFixture.h"

// Spec{"name"} aggregates leave the later fields at their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace inm::scheduler;
using namespace inm::scheduler::test;
using namespace std::chrono_literals;

// ---------------------------------------------------------------- basics

TEST_F(SchedulerTest, FirstReleaseDeploysInRequiresOrder) {
  release(1, {{"app", "a", "h", {"db"}}, {"db"}});
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("db")});
  runAll();
  EXPECT_EQ(log, (std::vector<std::string>{rid("db"), rid("app")}));
  EXPECT_EQ(v("app").compliance, Compliance::Compliant);
  EXPECT_EQ(v("app").lastResult, HandlerResult::Successful);
  // The action log: every start has a "Start run because" line, every finish a closing line.
  auto e = s->takeEffects();
  ASSERT_TRUE(e.version);
  EXPECT_EQ(e.version->rows.size(), 2u);
  EXPECT_EQ(e.starts.size(), 2u);
  EXPECT_EQ(e.starts[0].lines()[0]["msg"], "Start run because a new version was released");
  ASSERT_EQ(e.finishes.size(), 2u);
  EXPECT_EQ(e.finishes[1].lines().back()["msg"], "End run (status deployed)");
}

TEST_F(SchedulerTest, OrderingAcrossAgentsAndParallelAgents) {
  release(1, {{"db", "dbhost"}, {"web", "webhost", "h", {rid("db", "dbhost")}}, {"x", "other"}});
  // db and x run in parallel (different agents); web waits for db across agents.
  auto p = pendingIds();
  std::sort(p.begin(), p.end());
  EXPECT_EQ(p, (std::vector<std::string>{rid("db", "dbhost"), rid("x", "other")}));
  EXPECT_EQ(exec.batchSizes, std::vector<size_t>{2}); // one round trip for both
  finish(rid("db", "dbhost"));
  EXPECT_TRUE(isPending(rid("web", "webhost")));
}

TEST_F(SchedulerTest, PerAgentParallelismLimit) {
  Settings st;
  st.agentParallelism = 3;
  s->setSettings(st);
  release(1, {{"a1"}, {"a2"}, {"a3"}, {"a4"}, {"a5"}});
  EXPECT_EQ(exec.pending.size(), 3u);
  finish(rid("a1"));
  EXPECT_EQ(exec.pending.size(), 3u);
  st.agentParallelism = 1;
  s->setSettings(st);
  runAll();
  EXPECT_EQ(deploys.size(), 5u);
}

TEST_F(SchedulerTest, DefaultParallelismIsStrictlySerialPerAgent) {
  release(1, {{"a1"}, {"a2"}, {"b1", "b"}});
  EXPECT_EQ(exec.pending.size(), 2u); // one per agent
}

TEST_F(SchedulerTest, BatchesManyAgentsInOneRoundTrip) {
  std::vector<Spec> specs;
  for (int i = 0; i < 100; ++i) specs.push_back({"r" + std::to_string(i), "agent" + std::to_string(i)});
  release(1, specs);
  EXPECT_EQ(exec.batchSizes, std::vector<size_t>{100});
}

TEST_F(SchedulerTest, GlobalInFlightCapSharesSlotsRoundRobin) {
  Settings st;
  st.agentParallelism = 10;
  s->setSettings(st);
  s->setMaxInFlight(4);
  std::vector<Spec> specs;
  for (const char* agent : {"x", "y", "z"})
    for (int i = 0; i < 5; ++i) specs.push_back({std::string(agent) + std::to_string(i), agent});
  release(1, specs);
  // 4 of 15 ready deploys start, and every agent gets a slot before any agent gets a second one.
  ASSERT_EQ(exec.pending.size(), 4u);
  EXPECT_EQ(s->inFlight(), 4u);
  std::map<std::string, int> perAgent;
  for (auto& w : exec.pending) perAgent[w.agent]++;
  EXPECT_EQ(perAgent.size(), 3u);
  // A finished deploy frees exactly one slot.
  std::string first = exec.pending.front().resourceId; // a copy: finish() erases the pending item
  finish(first);
  EXPECT_EQ(exec.pending.size(), 4u);
  runAll();
  EXPECT_EQ(deploys.size(), 15u);
  EXPECT_EQ(s->queuedDeploys(), 0u);
  for (size_t n : exec.batchSizes) EXPECT_LE(n, 4u);
  // Lifting the cap starts what the per-agent limit allows at once.
  s->setMaxInFlight(0);
  s->userDeploy({}, true);
  EXPECT_EQ(exec.pending.size(), 15u);
}

TEST_F(SchedulerTest, TakeEffectsHoldsYoungStartsOfRunningDeploys) {
  release(1, {{"a1"}});
  auto e = s->takeEffects(1000ms);
  EXPECT_TRUE(e.version);
  EXPECT_TRUE(e.starts.empty()); // still running and younger than the hold
  EXPECT_EQ(s->heldStarts(), 1u);
  finish(rid("a1"));
  e = s->takeEffects(1000ms); // start and finish together: one completed action row
  ASSERT_EQ(e.starts.size(), 1u);
  ASSERT_EQ(e.finishes.size(), 1u);
  EXPECT_EQ(e.starts[0].actionId, e.finishes[0].actionId);
  EXPECT_EQ(s->heldStarts(), 0u);
  // A start older than the hold is written while its deploy still runs; a take without hold takes all.
  release(2, {{"a1", "a", "h2"}});
  clock.t += 2s;
  EXPECT_EQ(s->takeEffects(1000ms).starts.size(), 1u);
  release(3, {{"a1", "a", "h3"}});
  finish(rid("a1"));
  EXPECT_EQ(s->takeEffects().starts.size(), 1u);
}

TEST_F(SchedulerTest, ExecutorsEndLineClosesTheActionUnlessStaleOrRecordedDifferently) {
  release(1, {{"a1"}, {"b1", "b"}, {"c1", "c"}});
  s->takeEffects();
  auto answer = [&](const std::string& id, const std::string& status) {
    std::optional<WorkItem> w = takePending(exec, id);
    ASSERT_TRUE(w) << id << " is not running";
    WorkResult r;
    r.taskId = w->taskId;
    r.status = status;
    r.messages.push_back(logLine("info", "End run for resource " + id + ": " + status + ", nochange"));
    s->onResults({r});
  };
  answer(rid("a1"), "deployed");           // the executor's line is the last one: no second End line
  answer(rid("b1", "b"), "non_compliant"); // recorded as failed: our line says so
  release(2, {{"a1"}, {"b1", "b"}, {"c1", "c", "h2"}});
  answer(rid("c1", "c"), "deployed"); // stale: our line says so
  auto e = s->takeEffects();
  std::map<std::string, std::vector<std::string>> msgs;
  for (auto& f : e.finishes)
    for (auto& m : f.lines()) msgs[f.resourceId].push_back(m["msg"]);
  EXPECT_EQ(msgs[rid("a1")],
            std::vector<std::string>{"End run for resource " + rid("a1") + ": deployed, nochange"});
  ASSERT_EQ(msgs[rid("b1", "b")].size(), 2u);
  EXPECT_EQ(msgs[rid("b1", "b")][1], "End run (status failed)");
  ASSERT_EQ(msgs[rid("c1", "c")].size(), 2u);
  EXPECT_EQ(msgs[rid("c1", "c")][1], "End run (status deployed, stale: the intent changed while it ran)");
}

// The executor's lines as received text (WorkResult::messagesText) reach the finish untouched; the End-line
// decision reads the text's last "msg".
TEST_F(SchedulerTest, ExecutorsLinesAsTextPassThrough) {
  release(1, {{"a1"}, {"b1", "b"}});
  s->takeEffects();
  std::map<std::string, std::string> sent;
  auto answer = [&](const std::string& id, const std::string& status) {
    std::optional<WorkItem> w = takePending(exec, id);
    ASSERT_TRUE(w) << id << " is not running";
    WorkResult r;
    r.taskId = w->taskId;
    r.status = status;
    r.messagesText = nlohmann::json::array({logLine("debug", "Calling read_resource", {{"msg", "x"}}),
                                            logLine("info", "End run for resource " + id)})
                         .dump();
    sent[id] = r.messagesText;
    s->onResults({r});
  };
  answer(rid("a1"), "deployed");
  answer(rid("b1", "b"), "non_compliant");
  auto e = s->takeEffects();
  ASSERT_EQ(e.finishes.size(), 2u);
  for (auto& f : e.finishes) {
    EXPECT_TRUE(f.messages.empty()); // no tree: the scheduler's own End line is appended to the text
    if (f.resourceId == rid("a1")) {
      EXPECT_EQ(f.messagesText, sent[f.resourceId]);
    } else {
      auto lines = f.lines();
      ASSERT_EQ(lines.size(), 3u);
      EXPECT_EQ(lines[0], nlohmann::json::parse(sent[f.resourceId])[0]);
      EXPECT_EQ(lines[2]["msg"], "End run (status failed)");
    }
  }
  EXPECT_EQ(lastMessageText(sent[rid("a1")]), "End run for resource " + rid("a1"));
  EXPECT_EQ(lastMessageText(R"([{"level": "INFO", "msg": "End run x"}])"), "End run x");
  EXPECT_EQ(lastMessageText("[]"), "");
  WorkResult both;
  both.messagesText = R"([{"msg":"one"}])";
  both.messages.push_back(logLine("info", "two"));
  auto all = allMessages(both);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["msg"], "one");
  EXPECT_EQ(all[1]["msg"], "two");
  // appendLine: a line added to array text, whatever the text's spacing; "" and "[ ]" are empty arrays.
  std::string text;
  appendLine(text, logLine("info", "a"));
  appendLine(text, logLine("info", "b"));
  std::string spaced = "[ {\"msg\": \"x\"} ]\n", blank = " [ ] ";
  appendLine(spaced, logLine("info", "y"));
  appendLine(blank, logLine("info", "z"));
  auto a = nlohmann::json::parse(text), b = nlohmann::json::parse(spaced), c = nlohmann::json::parse(blank);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1]["msg"], "b");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0]["msg"], "x");
  EXPECT_EQ(b[1]["msg"], "y");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["msg"], "z");
}

TEST_F(SchedulerTest, UnchangedVersionSchedulesNothing) {
  release(1, {{"a"}, {"b", "a", "h", {"a"}}});
  runAll();
  release(2, {{"a"}, {"b", "a", "h", {"a"}}});
  EXPECT_TRUE(exec.pending.empty());
  EXPECT_EQ(s->queuedDeploys(), 0u);
}

TEST_F(SchedulerTest, ChangingOneOfManySchedulesExactlyOne) {
  std::vector<Spec> specs;
  for (int i = 0; i < 1000; ++i) specs.push_back({"r" + std::to_string(i), "agent" + std::to_string(i % 10)});
  release(1, specs);
  runAll();
  uint64_t before = s->stats().deploysStarted;
  specs[500].hash = "changed";
  release(2, specs);
  runAll();
  EXPECT_EQ(s->stats().deploysStarted - before, 1u);
}

// ---------------------------------------------------------------- §17.1 dependency fails

TEST_F(SchedulerTest, HardPart1_DependencyFailsSkipsDownstreamAndRecovers) {
  release(1, {{"db", "a", "h1", {}, false, true, /*fail=*/true},
              {"app", "a", "h", {"db"}},
              {"web", "a", "h", {"app"}}});
  runAll();
  EXPECT_EQ(v("db").lastResult, HandlerResult::Failed);
  EXPECT_TRUE(s->dirty(rid("db")));
  for (auto n : {"app", "web"}) {
    EXPECT_EQ(v(n).lastResult, HandlerResult::Skipped) << n;   // skipped, not failed
    EXPECT_EQ(v(n).blocked, Blocked::TemporarilyBlocked) << n; // waits for its dependency
    EXPECT_FALSE(s->dirty(rid(n))) << n;
    ASSERT_TRUE(v(n).timerDue) << n;
    EXPECT_EQ(*v(n).timerDue, clock.t + 86400s) << n; // repair timer only
  }
  ASSERT_TRUE(v("db").timerDue);
  EXPECT_EQ(*v("db").timerDue, clock.t + 600s); // db retries on the deploy interval
  // The deploy interval retries db, not app.
  advance(600s);
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("db")});
  runAll();
  EXPECT_EQ(deploys[rid("app")], 1);
  // A user *deploy* leaves app alone; a *repair* retries it.
  s->userDeploy({}, false);
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("db")});
  runAll();
  EXPECT_EQ(deploys[rid("app")], 1);
  s->userDeploy({}, true);
  runAll();
  EXPECT_EQ(deploys[rid("app")], 2);
  EXPECT_EQ(v("app").blocked, Blocked::TemporarilyBlocked);
  // db is fixed: app and web redeploy at once, without any timer.
  release(2, {{"db", "a", "h2"}, {"app", "a", "h", {"db"}}, {"web", "a", "h", {"app"}}});
  runAll();
  EXPECT_EQ(v("db").compliance, Compliance::Compliant);
  EXPECT_EQ(v("app").compliance, Compliance::Compliant);
  EXPECT_EQ(v("web").compliance, Compliance::Compliant);
  EXPECT_EQ(v("app").blocked, Blocked::NotBlocked);
}

TEST_F(SchedulerTest, PlainSkipStaysDirtyAndRetriesOnDeployInterval) {
  release(1, {{"x"}});
  finish(rid("x"), "skipped");
  EXPECT_EQ(v("x").blocked, Blocked::NotBlocked);
  EXPECT_TRUE(s->dirty(rid("x")));
  EXPECT_EQ(*v("x").timerDue, clock.t + 600s);
}

// ---------------------------------------------------------------- §17.2 undefined

TEST_F(SchedulerTest, HardPart2_UndefinedBlocksTransitively) {
  release(1, {{"vm", "a", "h", {}, /*undefined=*/true},
              {"dns", "a", "h", {"vm"}},
              {"web", "a", "h", {"dns"}},
              {"free"}});
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("free")});
  runAll();
  EXPECT_EQ(v("vm").compliance, Compliance::Undefined);
  for (auto n : {"vm", "dns", "web"}) {
    EXPECT_EQ(v(n).blocked, Blocked::Blocked) << n;
    EXPECT_FALSE(v(n).timerArmed) << n;
    EXPECT_FALSE(v(n).scheduled) << n;
  }
  s->userDeploy({}, true); // repair skips BLOCKED
  advance(100000s);        // no timers
  runAll();
  EXPECT_EQ(deploys.count(rid("dns")), 0u);
  // Only a new version unblocks them.
  release(2, {{"vm", "a", "h2"}, {"dns", "a", "h", {"vm"}}, {"web", "a", "h", {"dns"}}, {"free"}});
  runAll();
  EXPECT_EQ(v("web").compliance, Compliance::Compliant);
  EXPECT_EQ(v("dns").blocked, Blocked::NotBlocked);
}

// ---------------------------------------------------------------- §17.3 new version during a deploy

TEST_F(SchedulerTest, HardPart3_NewVersionDuringDeployFinishesStaleThenRedeploys) {
  release(1, {{"f", "a", "h1"}, {"g", "a", "h", {"f"}}});
  ASSERT_EQ(pendingIds(), std::vector<std::string>{rid("f")});
  s->takeEffects();
  release(2, {{"f", "a", "h2"}, {"g", "a", "h", {"f"}}});
  EXPECT_TRUE(exec.pending.size() == 1); // no cancellation, nothing new starts beside it
  EXPECT_TRUE(v("f").running);
  EXPECT_TRUE(v("f").scheduled); // h2 queued behind the running h1
  finish(rid("f"));              // h1 finishes: stale
  auto e = s->takeEffects();
  ASSERT_EQ(e.finishes.size(), 1u);
  EXPECT_TRUE(e.finishes[0].stale);
  EXPECT_EQ(e.finishes[0].deployedHash, "h1"); // DB hash stays the old one -> status `available`
  EXPECT_EQ(v("f").compliance, Compliance::HasUpdate);
  EXPECT_EQ(s->stats().staleResults, 1u);
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("f")}); // h2 next; g still waits for it
  EXPECT_EQ(exec.pending[0].reason, "a new version was released");
  finish(rid("f"));
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("g")});
  finish(rid("g"));
  EXPECT_EQ(v("g").compliance, Compliance::Compliant);
}

// ---------------------------------------------------------------- §17.4 repair running when a version lands

TEST_F(SchedulerTest, HardPart4_VersionDuringLongRepairPromotesOnlyChanges) {
  std::vector<Spec> specs;
  for (int i = 0; i < 500; ++i) specs.push_back({"r" + std::to_string(i), "a", "h", {}, false, false});
  release(1, specs);
  runAll();
  log.clear();
  advance(86400s); // every repair timer fires: 500 repair tasks, one running
  EXPECT_EQ(s->queuedDeploys(), 499u);
  EXPECT_EQ(v("r10").priority, Priority::IntervalRepair);
  // v9 changes 3, adds 2; one new resource requires a queued repair task.
  for (int i : {100, 200, 300}) specs[i].hash = "h2";
  specs.push_back({"n1", "a", "h", {}, false, false});
  specs.push_back({"n2", "a", "h", {"r499"}, false, false});
  release(9, specs);
  EXPECT_EQ(v("r100").priority, Priority::NewVersionDeploy);
  EXPECT_EQ(v("n1").priority, Priority::NewVersionDeploy);
  EXPECT_EQ(v("r10").priority, Priority::IntervalRepair);
  runAll();
  // The running repair task first, then the changed/new ones (n2 waits for r499: order beats priority).
  ASSERT_GE(log.size(), 5u);
  std::set<std::string> firstFour(log.begin() + 1, log.begin() + 5);
  EXPECT_EQ(firstFour, (std::set<std::string>{rid("r100"), rid("r200"), rid("r300"), rid("n1")}));
  auto pos = [&](const std::string& id) { return std::find(log.begin(), log.end(), id) - log.begin(); };
  EXPECT_GT(pos(rid("n2")), pos(rid("r499")));
  EXPECT_EQ(log.size(), 502u); // the other 495 still ran
}

// ---------------------------------------------------------------- §17.5 two versions back to back

TEST_F(SchedulerTest, HardPart5_DroppedAndReaddedInOneStepIsNew) {
  release(1, {{"x"}, {"y"}});
  runAll();
  EXPECT_EQ(v("x").compliance, Compliance::Compliant);
  s->takeEffects();
  releaseMany({{10, {{"y"}}}, {11, {{"x"}, {"y"}}}});
  EXPECT_EQ(s->managedVersion(), 11);
  EXPECT_EQ(v("x").lastResult, HandlerResult::New); // fresh state
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("x")});
  auto e = s->takeEffects();
  ASSERT_TRUE(e.version);
  EXPECT_EQ(e.version->version, 11);
  ASSERT_EQ(e.version->rows.size(), 1u);
  EXPECT_TRUE(e.version->rows[0].fresh);
  EXPECT_TRUE(e.version->orphans.empty());
}

// ---------------------------------------------------------------- §17.6 executor / scheduler dies

TEST_F(SchedulerTest, HardPart6_ExecutorDeathIsUnavailableAndRetried) {
  release(1, {{"a1"}, {"b1", "b"}});
  finish(rid("a1"), "unavailable");
  finish(rid("b1", "b"), "unavailable");
  EXPECT_EQ(v("a1").lastResult, HandlerResult::Failed);
  EXPECT_TRUE(s->dirty(rid("a1")));
  EXPECT_TRUE(exec.pending.empty());
  advance(599s);
  EXPECT_TRUE(exec.pending.empty());
  advance(1s);
  EXPECT_EQ(exec.pending.size(), 2u);
  runAll();
  EXPECT_EQ(v("a1").compliance, Compliance::Compliant);
}

TEST_F(SchedulerTest, HardPart6_RestartRebuildsAndRedeploysWhatIsNotAtItsHash) {
  // What a scheduler killed mid-deploy leaves in rps: a deployed at h, b was deploying h2 (last deployed h1),
  // c never ran, d failed, e temporarily blocked behind d.
  std::vector<Intent> intents{intent({"a"}), intent({"b", "a", "h2"}), intent({"c"}), intent({"d"}),
                              intent({"e", "a", "h", {"d"}})};
  std::unordered_map<std::string, PersistedState> ps;
  ps[rid("a")] = {"SUCCESSFUL", true, "NOT_BLOCKED", "h", clock.t - 10s, clock.t - 10s, clock.t - 10s};
  ps[rid("b")] = {"SUCCESSFUL", true, "NOT_BLOCKED", "h1", clock.t - 10s, clock.t - 10s, clock.t - 10s};
  ps[rid("d")] = {"FAILED", false, "NOT_BLOCKED", "h", clock.t - 10s, std::nullopt, clock.t - 10s};
  ps[rid("e")] = {"SKIPPED", false, "TEMPORARILY_BLOCKED", "h", clock.t - 10s, std::nullopt, clock.t - 10s};
  s->restore(7, intents, ps);
  s->startDeploying();
  EXPECT_EQ(s->managedVersion(), 7);
  auto p = pendingIds();
  std::sort(p.begin(), p.end());
  EXPECT_EQ(p, (std::vector<std::string>{rid("b")})); // serial agent: one at a time
  runAll();
  EXPECT_EQ(deploys.count(rid("a")), 0u); // compliant at its hash: untouched
  EXPECT_EQ(deploys[rid("b")], 1);
  EXPECT_EQ(deploys[rid("c")], 1);
  EXPECT_EQ(deploys[rid("d")], 1);
  // d recovered (non-compliant -> deployed): e is unblocked and redeployed.
  EXPECT_EQ(deploys[rid("e")], 1);
  EXPECT_EQ(v("e").compliance, Compliance::Compliant);
  EXPECT_EQ(v("a").priority, Priority::UserDeploy); // never scheduled (default)
}

// ---------------------------------------------------------------- §17.7 removing is not deleting

TEST_F(SchedulerTest, HardPart7_DroppedResourceIsOrphanedNotTouched) {
  release(3, {{"r"}, {"keep"}});
  runAll();
  release(4, {{"keep"}});
  EXPECT_FALSE(s->view(rid("r")).has_value());
  EXPECT_TRUE(exec.pending.empty());
  auto e = s->takeEffects();
  ASSERT_TRUE(e.version);
  ASSERT_EQ(e.version->orphans.size(), 1u);
  EXPECT_EQ(e.version->orphans[0].resourceId, rid("r"));
  EXPECT_EQ(e.version->orphans[0].after, 3);
  advance(200000s); // no timer for an orphan
  for (auto& w : exec.pending) EXPECT_NE(w.resourceId, rid("r"));
  // A reappearing orphan is a new resource.
  runAll();
  release(5, {{"keep"}, {"r"}});
  EXPECT_EQ(v("r").lastResult, HandlerResult::New);
}

TEST_F(SchedulerTest, UndrainedVersionsMergeIntoOneWrite) {
  release(1, {{"a"}, {"b"}});
  release(2, {{"a"}});               // b orphaned after 1
  release(3, {{"a"}, {"c"}});        // c new
  release(4, {{"a"}, {"c"}, {"b"}}); // b back: new, not an orphan
  auto e = s->takeEffects();
  ASSERT_TRUE(e.version);
  EXPECT_EQ(e.version->version, 4);
  EXPECT_TRUE(e.version->orphans.empty());
  std::set<std::string> rows;
  for (auto& r : e.version->rows) rows.insert(r.resourceId);
  EXPECT_EQ(rows, (std::set<std::string>{rid("a"), rid("b"), rid("c")}));
}

TEST_F(SchedulerTest, HardPart7_OrphanedWhileRunningIsLoggedOnly) {
  release(1, {{"r"}});
  release(2, {});
  finish(rid("r"));
  auto e = s->takeEffects();
  ASSERT_EQ(e.finishes.size(), 1u);
  EXPECT_TRUE(e.finishes[0].removed);
  EXPECT_TRUE(exec.pending.empty());
}

// ---------------------------------------------------------------- §17.8 requires-only change

TEST_F(SchedulerTest, HardPart8_RequiresOnlyChangeRedeploysNothingButOrders) {
  release(1, {{"a"}, {"b"}});
  runAll();
  release(2, {{"a"}, {"b", "a", "h", {"a"}}});
  EXPECT_TRUE(exec.pending.empty());
  log.clear();
  s->userDeploy({}, true);
  runAll();
  EXPECT_EQ(log, (std::vector<std::string>{rid("a"), rid("b")}));
  // An added edge to an undefined resource blocks; dropping it unblocks.
  release(3, {{"a"}, {"b", "a", "h", {"a"}}, {"u", "a", "h", {}, true}, {"c", "a", "h", {"u"}}});
  EXPECT_EQ(v("c").blocked, Blocked::Blocked);
  release(4, {{"a"}, {"b", "a", "h", {"a"}}, {"u", "a", "h", {}, true}, {"c"}});
  EXPECT_EQ(v("c").blocked, Blocked::NotBlocked);
  EXPECT_TRUE(isPending(rid("c")));
}

// ---------------------------------------------------------------- §17.9 events

TEST_F(SchedulerTest, HardPart9_EveryFinishedDeployForcesReceivers) {
  release(
      1,
      {{"file"}, {"service", "a", "h", {"file"}}, {"deaf", "a", "h", {"file"}, false, true, false, false}});
  runAll();
  EXPECT_EQ(deploys[rid("service")], 1);
  // A no-change repair of file alone forces service (compliant), not `deaf` (receive_events=false).
  clock.t += 1s;
  s->userDeploy({}, true);
  log.clear();
  runAll();
  EXPECT_EQ(deploys[rid("service")], 2);
  // Direct: a repair deploy of just `file` (via its timer) forces service although service is compliant.
  release(2, {{"file", "a", "h2"},
              {"service", "a", "h", {"file"}},
              {"deaf", "a", "h", {"file"}, false, true, false, false}});
  int before = deploys[rid("service")];
  int deafBefore = deploys[rid("deaf")];
  runAll();
  EXPECT_EQ(deploys[rid("service")], before + 1);
  EXPECT_EQ(deploys[rid("deaf")], deafBefore); // receive_events=false and unchanged: not redeployed
  // A failure forces too; a running receiver gets a fresh deploy after it.
  failing[rid("file")] = true;
  s->userDeploy({}, true); // file, service, deaf queued, serial agent
  finish(rid("file"));     // failed -> event to service (already queued: no duplicate)
  runAll();
  EXPECT_EQ(v("service").blocked, Blocked::TemporarilyBlocked);
}

TEST_F(SchedulerTest, HardPart9_EventToRunningReceiverQueuesFreshDeploy) {
  Settings st;
  st.agentParallelism = 2;
  s->setSettings(st);
  release(1, {{"file"}, {"service", "a", "h", {"file"}}});
  runAll();
  // service runs (repair) while file is repaired and finishes first.
  s->userDeploy({}, true);
  ASSERT_TRUE(isPending(rid("file")));
  finish(rid("file"));
  ASSERT_TRUE(isPending(rid("service")));
  release(2, {{"file", "a", "h3"}, {"service", "a", "h", {"file"}}}); // file redeploys while service runs
  EXPECT_TRUE(isPending(rid("file")));
  finish(rid("file")); // event: service is running -> fresh deploy queued after it
  EXPECT_TRUE(v("service").scheduled);
  finish(rid("service"));
  EXPECT_TRUE(isPending(rid("service")));
}

TEST_F(SchedulerTest, StaleDeployProducesNoEvents) {
  release(1, {{"f", "a", "h1"}, {"g", "b", "h", {"f"}}});
  runAll();
  s->userDeploy({"a"}, true);
  ASSERT_TRUE(isPending(rid("f")));
  release(2, {{"f", "a", "h2"}, {"g", "b", "h", {"f"}}});
  int g = deploys[rid("g", "b")];
  finish(rid("f")); // stale: no event
  EXPECT_FALSE(isPending(rid("g", "b")));
  runAll(); // h2 deploys -> event -> g once
  EXPECT_EQ(deploys[rid("g", "b")], g + 1);
}

// ---------------------------------------------------------------- §17.10 serialization, pausing

TEST_F(SchedulerTest, HardPart10_PausedAgentHoldsDependentsIndefinitely) {
  s->setAgentPaused("sw1", true);
  release(1, {{"switch", "sw1"}, {"port", "sw2", "h", {rid("switch", "sw1")}}});
  EXPECT_TRUE(exec.pending.empty());
  advance(1000000s);
  EXPECT_TRUE(exec.pending.empty());
  EXPECT_TRUE(v(rid("port", "sw2")).scheduled);
  EXPECT_EQ(v(rid("port", "sw2")).lastResult, HandlerResult::New); // still `available`
  s->setAgentPaused("sw1", false);
  runAll();
  EXPECT_EQ(log, (std::vector<std::string>{rid("switch", "sw1"), rid("port", "sw2")}));
}

TEST_F(SchedulerTest, PauseStopsAfterCurrentTaskAndKeepsQueue) {
  release(1, {{"a1"}, {"a2"}});
  s->setAgentPaused("a", true);
  finish(rid("a1")); // the running one finishes
  EXPECT_TRUE(exec.pending.empty());
  EXPECT_TRUE(v("a2").scheduled);
  s->setAgentPaused("a", false);
  EXPECT_TRUE(isPending(rid("a2")));
}

TEST_F(SchedulerTest, HaltStopsDispatchUntilResume) {
  s->setHalted(true);
  release(1, {{"a1"}});
  EXPECT_TRUE(exec.pending.empty());
  s->setHalted(false);
  EXPECT_TRUE(isPending(rid("a1")));
}

// The id -> slot index keyed by the records' own ids (IdIndex.h): every id inserted is found at its slot
// through several rehashes, absent ids (and prefixes of present ones) are not, and reserve keeps them.
TEST(IdIndexTest, FindsEveryInsertedIdAcrossRehashes) {
  std::vector<std::string> ids;
  IdIndex index;
  auto keyOf = [&](uint32_t k) -> const std::string& { return ids[k]; };
  for (uint32_t i = 0; i < 5000; ++i) {
    std::string id =
        "std::testing::NullResource[agent" + std::to_string(i % 7) + ",name=r" + std::to_string(i) + "]";
    ASSERT_FALSE(index.find(id, keyOf)) << id;
    ids.push_back(id);
    index.insert(ids.back(), i, keyOf);
    if (i == 100) index.reserve(20000, keyOf);
  }
  EXPECT_EQ(index.size(), 5000u);
  for (uint32_t i = 0; i < ids.size(); ++i) {
    auto slot = index.find(ids[i], keyOf);
    ASSERT_TRUE(slot) << ids[i];
    EXPECT_EQ(*slot, i);
  }
  EXPECT_FALSE(index.find("std::testing::NullResource[agent0,name=r", keyOf));
  EXPECT_FALSE(index.find("", keyOf));
  IdIndex empty;
  EXPECT_FALSE(empty.find("x", keyOf));
}

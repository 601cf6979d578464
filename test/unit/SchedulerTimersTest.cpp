// Unit tests for the scheduler state machine (orchestrator/scheduler), second half (the fixture is in
// SchedulerFixture.h; the ordering and §17 hard parts in SchedulerTest.cpp): priorities (§6.1), user
// deploy/repair (§6.8), timers and cron (§6.7), dry-run and facts, backpressure, the dependency-changed flag
// and non-compliant results. Deterministic and fast: a test decides when and how each work item finishes.
#include "SchedulerFixture.h"

// Spec{"name"} aggregates leave the later fields at their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace inm::scheduler;
using namespace inm::scheduler::test;
using namespace std::chrono_literals;

// ---------------------------------------------------------------- priorities, user deploy, timers

TEST_F(SchedulerTest, RequeueKeepsBetterPriority) {
  release(1, {{"busy"}, {"x"}, {"y"}});
  runAll();
  s->userDeploy({}, true); // busy runs, x y queued at USER_REPAIR
  EXPECT_EQ(v("y").priority, Priority::UserRepair);
  release(2, {{"busy"}, {"x"}, {"y", "a", "h2"}});
  EXPECT_EQ(v("y").priority, Priority::NewVersionDeploy);
  s->userDeploy({}, true); // worse: kept
  EXPECT_EQ(v("y").priority, Priority::NewVersionDeploy);
  log.clear();
  runAll();
  EXPECT_EQ(log[1], rid("y")); // jumps ahead of x
}

TEST_F(SchedulerTest, UserDeployScopesToAgents) {
  release(1, {{"a1", "a", "h", {}, false, false, true}, {"b1", "b", "h", {}, false, false, true}});
  runAll();
  s->userDeploy({"b"}, false);
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("b1", "b")});
}

TEST_F(SchedulerTest, RepairTimerReRunsCompliantResources) {
  Settings st;
  st.repairInterval = TimerSetting{30, std::nullopt};
  st.deployInterval = TimerSetting{5, std::nullopt};
  s->setSettings(st);
  release(1, {{"ok"}, {"bad", "b", "h", {}, false, false, true}});
  runAll();
  advance(5s);
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("bad", "b")});
  runAll();
  advance(25s); // ok's repair is due (bad keeps retrying every 5 s)
  ASSERT_TRUE(isPending(rid("ok")));
  EXPECT_EQ(exec.pending[0].resourceId, rid("ok"));
  EXPECT_EQ(exec.pending[0].reason, "the repair interval elapsed");
}

TEST_F(SchedulerTest, ZeroIntervalIsOff) {
  Settings st;
  st.repairInterval = TimerSetting{0, std::nullopt};
  st.deployInterval = TimerSetting{0, std::nullopt};
  s->setSettings(st);
  release(1, {{"bad", "a", "h", {}, false, false, true}});
  runAll();
  EXPECT_FALSE(v("bad").timerArmed);
  EXPECT_FALSE(s->nextTimer());
}

TEST_F(SchedulerTest, CronTicksDeployDirtyAndRepairAll) {
  Settings st;
  st.deployInterval = *TimerSetting::parse("d", "*/10 * * * * *"); // every 10 s
  st.repairInterval = TimerSetting{0, std::nullopt};
  s->setSettings(st);
  release(1, {{"ok"}, {"bad", "b", "h", {}, false, false, true}});
  runAll();
  EXPECT_FALSE(v(rid("bad", "b")).timerArmed); // cron: a global tick, no per-resource timer
  ASSERT_TRUE(s->nextTimer());
  clock.t = *s->nextTimer();
  s->fireTimers();
  EXPECT_EQ(pendingIds(), std::vector<std::string>{rid("bad", "b")});
  runAll();
  st.repairInterval = *TimerSetting::parse("r", "0 0 * * *");
  s->setSettings(st);
  clock.t = *TimerSetting::parse("r", "0 0 * * *")->cron->next(clock.t);
  s->fireTimers();
  EXPECT_EQ(exec.pending.size(), 2u);
}

// ---------------------------------------------------------------- dry-run and facts

TEST_F(SchedulerTest, DryrunRunsThatVersionsIntentWithoutOrderingOrStateChange) {
  release(1, {{"a"}, {"b", "a", "h", {"a"}}});
  runAll();
  s->takeEffects();
  s->requestDryrun("dr-1", 1, {intent({"a"}), intent({"b", "a", "h", {"a"}})});
  EXPECT_EQ(exec.pending.size(), 1u); // serial agent
  EXPECT_EQ(exec.pending[0].kind, TaskKind::DryRun);
  exec.pending[0].resourceId = exec.pending[0].resourceId;
  WorkItem w = exec.pending[0];
  exec.pending.clear();
  WorkResult r{w.taskId, "dry", "nochange", {{"value", {{"current", "x"}, {"desired", "y"}}}}};
  s->onResults({r});
  runAll();
  auto e = s->takeEffects();
  ASSERT_EQ(e.dryruns.size(), 2u);
  EXPECT_EQ(e.dryruns[0].diffStatus, "modified");
  EXPECT_EQ(e.dryruns[1].diffStatus, "unmodified");
  EXPECT_EQ(e.dryruns[0].dryrunId, "dr-1");
  EXPECT_EQ(v("a").compliance, Compliance::Compliant);
  EXPECT_EQ(deploys[rid("a")], 1);
}

TEST_F(SchedulerTest, FactRefreshIsUniquePerResource) {
  release(1, {{"vm"}});
  runAll();
  s->requestFacts(rid("vm"));
  s->requestFacts(rid("vm"));
  ASSERT_EQ(exec.pending.size(), 1u);
  EXPECT_EQ(exec.pending[0].kind, TaskKind::RefreshFact);
  WorkResult r{exec.pending[0].taskId, "deployed"};
  r.facts = {{"ip", "10.0.0.1"}};
  exec.pending.clear();
  s->onResults({r});
  auto e = s->takeEffects();
  ASSERT_EQ(e.facts.size(), 1u);
  EXPECT_EQ(e.facts[0].facts["ip"], "10.0.0.1");
}

TEST_F(SchedulerTest, GateReportsWhy) {
  std::string why;
  EXPECT_FALSE(gateDependencies({{"x", "deployed"}}));
  EXPECT_EQ(gateDependencies({{"x", "failed"}}, &why), "skipped_for_dependency");
  EXPECT_NE(why.find("failed dependencies"), std::string::npos);
  EXPECT_EQ(gateDependencies({{"x", "undefined"}}, &why), "skipped_for_dependency");
  EXPECT_NE(why.find("undefined"), std::string::npos);
}

TEST_F(SchedulerTest, BackpressureHoldsNewStartsUntilReleased) {
  s->setBackpressure(true);
  release(1, {{"a1"}, {"b1", "b"}});
  EXPECT_TRUE(exec.pending.empty());
  EXPECT_EQ(s->pendingEffects(), 0u);
  s->setBackpressure(false);
  EXPECT_EQ(exec.pending.size(), 2u);
  EXPECT_EQ(s->pendingEffects(), 2u);
}

namespace {

// Finishes the one pending item of `id` as deployed with `change`; returns its dependencyChanged flag.
bool finishWithChange(FakeExecutor& exec, SchedulerState& s, const std::string& id,
                      const std::string& change) {
  std::optional<WorkItem> taken = takePending(exec, id);
  EXPECT_TRUE(taken) << id << " is not running";
  if (!taken) return false;
  const WorkItem& w = *taken;
  WorkResult r;
  r.taskId = w.taskId;
  r.status = "deployed";
  r.change = change;
  s.onResults({r});
  return w.dependencyChanged;
}

} // namespace

TEST_F(SchedulerTest, DependencyChangedOnlyWhenADependencyChangedSinceTheLastSuccess) {
  release(1, {{"file"}, {"service", "a", "h", {"file"}}});
  EXPECT_FALSE(finishWithChange(exec, *s, rid("file"), "created"));
  // Never deployed successfully and its dependency changed: reload.
  EXPECT_TRUE(finishWithChange(exec, *s, rid("service"), "nochange"));
  // A no-change repair of file forces service (event) without a reload.
  clock.t += 1s;
  s->userDeploy({}, true);
  EXPECT_FALSE(finishWithChange(exec, *s, rid("file"), "nochange"));
  EXPECT_FALSE(finishWithChange(exec, *s, rid("service"), "nochange"));
  // A changed file: the event deploy of service reloads, once.
  clock.t += 1s;
  release(2, {{"file", "a", "h2"}, {"service", "a", "h", {"file"}}});
  EXPECT_FALSE(finishWithChange(exec, *s, rid("file"), "updated"));
  EXPECT_TRUE(finishWithChange(exec, *s, rid("service"), "nochange"));
  clock.t += 1s;
  s->userDeploy({}, true);
  EXPECT_FALSE(finishWithChange(exec, *s, rid("file"), "nochange"));
  EXPECT_FALSE(finishWithChange(exec, *s, rid("service"), "nochange"));
  EXPECT_TRUE(exec.pending.empty());
}

TEST_F(SchedulerTest, DependencyChangedSurvivesARestart) {
  std::unordered_map<std::string, PersistedState> persisted;
  PersistedState file, service;
  file.lastHandlerRun = service.lastHandlerRun = "SUCCESSFUL";
  file.lastHandlerRunCompliant = service.lastHandlerRunCompliant = true;
  file.lastDeployedHash = service.lastDeployedHash = "h";
  service.lastSuccess = clock.t - 10s;
  file.lastChangeStarted = clock.t - 5s; // changed after service's last success, service not yet redeployed
  file.lastProducedEvents = clock.t - 5s;
  persisted[rid("file")] = file;
  persisted[rid("service")] = service;
  Spec fileSpec{"file"}, serviceSpec{"service", "a", "h", {"file"}};
  s->restore(1, {intent(fileSpec), intent(serviceSpec)}, persisted);
  s->startDeploying();
  ASSERT_EQ(pendingIds(), std::vector<std::string>{rid("service")}); // dirty through the event (§6.6)
  EXPECT_TRUE(finishWithChange(exec, *s, rid("service"), "nochange"));
}

TEST_F(SchedulerTest, NonCompliantIsRecordedAsFailedWithoutTheComplianceFeature) {
  release(1, {{"a"}});
  finish(rid("a"), "non_compliant");
  Effects e = s->takeEffects();
  ASSERT_EQ(e.finishes.size(), 1u);
  EXPECT_EQ(e.finishes[0].status, "failed");
  EXPECT_EQ(e.finishes[0].handlerResult, HandlerResult::Failed);
  EXPECT_EQ(v("a").lastResult, HandlerResult::Failed);
  // Start and end lines are written with the upper-case level names of the action log.
  ASSERT_EQ(e.starts.size(), 1u);
  EXPECT_EQ(e.starts[0].lines()[0]["level"], "INFO");
}

// Unit tests for a deploy arriving while a repair runs, and a second repair request during a repair (the
// seed's rule "the repair is cancelled, the deploy is performed and then the repair is restarted", as
// docs/deploy.md "A deploy during a repair" states it for this scheduler): the deploy's resources run before
// the rest of the repair, the repair then goes on where it was (nothing it already repaired is redone), and a
// second repair request joins the running one. Same fake executor and clock as SchedulerTest.cpp.
#include "SchedulerFixture.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace inm::scheduler;
using namespace inm::scheduler::test;

namespace {

class RepairRunTest : public SchedulerTest {
 protected:
  std::vector<Spec> specs;

  /// Ten compliant resources on one agent (strictly serial: one runs at a time), nothing queued.
  void SetUp() override {
    SchedulerTest::SetUp();
    for (int i = 0; i < 10; ++i) specs.push_back({"r" + std::to_string(i), "a", "h", {}, false, false});
    release(1, specs);
    runAll();
    log.clear();
    deploys.clear();
  }
  /// Finishes the one running deploy (recording it in `log`) and returns its resource id.
  std::string finishRunning(const std::string& status = "") {
    EXPECT_EQ(exec.pending.size(), 1u);
    if (exec.pending.empty()) return "";
    std::string id = exec.pending.front().resourceId;
    log.push_back(id);
    finish(id, status);
    return id;
  }
  std::vector<std::string> ids(std::initializer_list<int> nums) {
    std::vector<std::string> out;
    for (int n : nums) out.push_back(rid("r" + std::to_string(n)));
    return out;
  }
};

} // namespace

TEST_F(RepairRunTest, NewVersionDuringRepairRunsFirstThenTheRepairGoesOn) {
  s->userDeploy({}, true);
  EXPECT_EQ(finishRunning(), rid("r0"));
  EXPECT_EQ(finishRunning(), rid("r1"));
  // r2 runs (a running task is never killed); the version changes r7 and r8.
  specs[7].hash = specs[8].hash = "h2";
  release(2, specs);
  EXPECT_EQ(v("r7").priority, Priority::NewVersionDeploy);
  EXPECT_EQ(v("r3").priority, Priority::UserRepair);
  runAll();
  // The deploy is performed before the rest of the repair, and the repair is not restarted from scratch:
  // every resource ran exactly once.
  EXPECT_EQ(log, ids({0, 1, 2, 7, 8, 3, 4, 5, 6, 9}));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(deploys[rid("r" + std::to_string(i))], 1) << i;
}

TEST_F(RepairRunTest, UserDeployDuringRepairRunsFirst) {
  s->userDeploy({}, true);
  EXPECT_EQ(finishRunning("failed"), rid("r0")); // r0 is dirty again
  EXPECT_EQ(finishRunning(), rid("r1"));
  s->userDeploy({}, false); // a deploy: the dirty ones only, at USER_DEPLOY
  EXPECT_EQ(v("r0").priority, Priority::UserDeploy);
  runAll();
  EXPECT_EQ(log, ids({0, 1, 2, 0, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(deploys[rid("r1")], 1);
}

TEST_F(RepairRunTest, SecondRepairRequestJoinsTheRunningRepair) {
  s->userDeploy({}, true);
  for (int i = 0; i < 4; ++i) finishRunning(i == 1 ? "failed" : "");
  // r4 runs; r0, r2, r3 are repaired in this run, r1 failed (dirty): a second request redoes only r1.
  s->userDeploy({}, true);
  EXPECT_FALSE(v("r0").scheduled);
  EXPECT_FALSE(v("r3").scheduled);
  EXPECT_FALSE(v("r4").scheduled); // running now: it is being repaired
  EXPECT_TRUE(v("r1").scheduled);
  EXPECT_TRUE(v("r9").scheduled);
  runAll();
  EXPECT_EQ(log, ids({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1})); // r1 queued after the others (FIFO among equals)
  // Once the run is over, a repair request starts a new run over everything.
  log.clear();
  s->userDeploy({}, true);
  runAll();
  EXPECT_EQ(log.size(), 10u);
}

TEST_F(RepairRunTest, SecondRepairForOtherAgentsJoinsToo) {
  std::vector<Spec> more = specs;
  for (int i = 0; i < 3; ++i) more.push_back({"b" + std::to_string(i), "b", "h", {}, false, false});
  release(2, more);
  runAll();
  log.clear();
  s->userDeploy({"a"}, true);
  finishRunning();
  // Agent b was not in the run: its resources are repaired; agent a's first resource is not redone.
  s->userDeploy({}, true);
  EXPECT_TRUE(v(rid("b0", "b")).scheduled || v(rid("b0", "b")).running);
  EXPECT_FALSE(v("r0").scheduled);
  runAll();
  EXPECT_EQ(log.size(), 13u);
}

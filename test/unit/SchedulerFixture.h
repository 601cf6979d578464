// The fixture of the scheduler state machine's unit tests (SchedulerTest.cpp, SchedulerTimersTest.cpp): a
// SchedulerState driven by a fake executor that only records work and a fake clock a test advances by hand.
// Shared by the two files so both run as one GoogleTest suite `SchedulerTest` (one fixture type: it lives in
// a named namespace, not an anonymous one, and its free functions are inline).
#pragma once

#include "scheduler/Scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>

namespace inm::scheduler::test {

using inm::plan::Intent;

struct FakeClock : Clock {
  TimePoint t = TimePoint{} + std::chrono::hours(24 * 365 * 50);
  TimePoint now() const override { return t; }
};

struct FakeExecutor : Executor {
  std::vector<WorkItem> pending;
  std::vector<size_t> batchSizes;
  void submit(std::vector<WorkItem> batch) override {
    batchSizes.push_back(batch.size());
    for (auto& w : batch) pending.push_back(std::move(w));
  }
};

inline std::string rid(const std::string& name, const std::string& agent = "a") {
  return "t::R[" + agent + ",name=" + name + "]";
}

struct Spec {
  std::string name, agent = "a", hash = "h";
  std::vector<std::string> reqs;
  bool undefined = false, sendEvent = true, fail = false, receiveEvents = true;
};

// Removes and returns the pending work item of `id`; nullopt when `id` is not running.
inline std::optional<WorkItem> takePending(FakeExecutor& exec, const std::string& id) {
  auto it =
      std::find_if(exec.pending.begin(), exec.pending.end(), [&](auto& w) { return w.resourceId == id; });
  if (it == exec.pending.end()) return std::nullopt;
  WorkItem w = std::move(*it);
  exec.pending.erase(it);
  return w;
}

class SchedulerTest : public ::testing::Test {
 protected:
  FakeClock clock;
  FakeExecutor exec;
  int uuids = 0;
  std::unique_ptr<SchedulerState> s;
  std::vector<std::string> log;        // resource ids in the order their deploys started
  std::map<std::string, int> deploys;  // finished deploys per resource
  std::map<std::string, bool> failing; // NullResource `fail` per resource

  void SetUp() override {
    s = std::make_unique<SchedulerState>(exec, clock, [this] { return "action-" + std::to_string(++uuids); });
    s->setSettings(Settings{});
  }

  Intent intent(const Spec& sp) {
    Intent i;
    i.id = rid(sp.name, sp.agent);
    i.agent = sp.agent;
    i.hash = sp.hash;
    i.undefined = sp.undefined;
    for (auto& r : sp.reqs) i.requireIds.push_back(r.find('[') == std::string::npos ? rid(r) : r);
    i.attributes = std::make_shared<nlohmann::json>(nlohmann::json{{"send_event", sp.sendEvent},
                                                                   {"receive_events", sp.receiveEvents},
                                                                   {"fail", sp.fail},
                                                                   {"name", sp.name}});
    failing[i.id] = sp.fail;
    return i;
  }

  void release(int v, const std::vector<Spec>& specs) { releaseMany({{v, specs}}); }
  void releaseMany(const std::vector<std::pair<int, std::vector<Spec>>>& versions) {
    std::vector<inm::plan::VersionSnapshot> snaps;
    for (auto& [v, specs] : versions) {
      inm::plan::VersionSnapshot vs{v, {}};
      for (auto& sp : specs) vs.resources.push_back(intent(sp));
      snaps.push_back(std::move(vs));
    }
    auto cs = inm::plan::foldVersions(s->managedIntent(), s->managedVersion(), snaps);
    s->applyVersion(cs, snaps.back().resources);
  }

  std::vector<std::string> pendingIds() const {
    std::vector<std::string> ids;
    for (auto& w : exec.pending) ids.push_back(w.resourceId);
    return ids;
  }
  bool isPending(const std::string& id) const {
    auto p = pendingIds();
    return std::find(p.begin(), p.end(), id) != p.end();
  }

  // NullResource semantics: the framework's dependency gate, then `fail`.
  WorkResult outcome(const WorkItem& w) {
    WorkResult r;
    r.taskId = w.taskId;
    if (w.kind == TaskKind::DryRun) {
      r.status = "dry";
      return r;
    }
    if (auto skip = gateDependencies(w.dependencyStates))
      r.status = *skip;
    else
      r.status = failing[w.resourceId] ? "failed" : "deployed";
    return r;
  }

  // Finishes one pending item of `id` with `status` (or NullResource semantics when empty).
  void finish(const std::string& id, const std::string& status = "") {
    std::optional<WorkItem> taken = takePending(exec, id);
    ASSERT_TRUE(taken) << id << " is not running";
    const WorkItem& w = *taken;
    WorkResult r = outcome(w);
    if (!status.empty()) r.status = status;
    if (w.kind == TaskKind::Deploy) deploys[id]++;
    s->onResults({r});
  }

  // Runs everything to quiescence, one executor round trip per loop, recording start order.
  void runAll(int maxRounds = 10000) {
    for (int i = 0; i < maxRounds && !exec.pending.empty(); ++i) {
      std::vector<WorkItem> batch;
      batch.swap(exec.pending);
      std::vector<WorkResult> results;
      for (auto& w : batch) {
        if (w.kind == TaskKind::Deploy) {
          log.push_back(w.resourceId);
          deploys[w.resourceId]++;
        }
        results.push_back(outcome(w));
      }
      s->onResults(results);
    }
    ASSERT_TRUE(exec.pending.empty()) << "did not quiesce";
  }

  SchedulerState::View v(const std::string& name) {
    auto x = s->view(name.find('[') == std::string::npos ? rid(name) : name);
    EXPECT_TRUE(x.has_value()) << name;
    return x.value_or(SchedulerState::View{});
  }
  void advance(std::chrono::seconds d) {
    clock.t += d;
    s->fireTimers();
  }
};
} // namespace inm::scheduler::test

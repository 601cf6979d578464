// The scheduler state machine (see include/scheduler/Scheduler.h; orchestrator.md §5, §6). Resources live in
// a slot vector indexed by an id map; a deleted resource keeps its slot (present=false) so in-flight results
// can still be matched and recorded as stale. Invariants: a resource's deploy task is in at most one place
// (waiting: scheduled && !ready, or in its agent's ready queue: scheduled && ready); `blockedOn(p)` holds
// exactly the direct requires of p that are scheduled or running, plus p itself while a previous run of p is
// still in flight; a timer is armed only for a present, non-BLOCKED resource that is neither scheduled nor
// running.
#include "scheduler/Scheduler.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <random>
#include <string_view>
#include <unordered_set>

namespace inm::scheduler {

const char* toString(Compliance c) {
  switch (c) {
  case Compliance::Compliant: return "COMPLIANT";
  case Compliance::HasUpdate: return "HAS_UPDATE";
  case Compliance::NonCompliant: return "NON_COMPLIANT";
  case Compliance::Undefined: return "UNDEFINED";
  }
  return "?";
}
const char* toString(HandlerResult r) {
  switch (r) {
  case HandlerResult::New: return "NEW";
  case HandlerResult::Successful: return "SUCCESSFUL";
  case HandlerResult::Failed: return "FAILED";
  case HandlerResult::Skipped: return "SKIPPED";
  }
  return "?";
}
const char* toString(Blocked b) {
  switch (b) {
  case Blocked::NotBlocked: return "NOT_BLOCKED";
  case Blocked::Blocked: return "BLOCKED";
  case Blocked::TemporarilyBlocked: return "TEMPORARILY_BLOCKED";
  }
  return "?";
}
std::optional<HandlerResult> parseHandlerResult(const std::string& s) {
  for (auto r :
       {HandlerResult::New, HandlerResult::Successful, HandlerResult::Failed, HandlerResult::Skipped})
    if (s == toString(r)) return r;
  return std::nullopt;
}
std::optional<Blocked> parseBlocked(const std::string& s) {
  for (auto b : {Blocked::NotBlocked, Blocked::Blocked, Blocked::TemporarilyBlocked})
    if (s == toString(b)) return b;
  return std::nullopt;
}

std::optional<std::string> gateDependencies(const std::vector<std::pair<std::string, std::string>>& deps,
                                            std::string* why) {
  for (const auto& [id, state] : deps) {
    if (state == "deployed") continue;
    if (why) {
      if (state == "undefined" || state == "skipped_for_undefined" || state == "dry")
        *why = "Resource skipped because a dependency is undefined or skipped for undefined: " + id;
      else if (state == "available" || state == "deploying")
        *why = "Resource skipped because a dependency has a newer intent that is not deployed yet: " + id;
      else
        *why = "Resource skipped because of failed dependencies: " + id + " is " + state;
    }
    return std::string("skipped_for_dependency");
  }
  return std::nullopt;
}

nlohmann::json logLine(const std::string& level, const std::string& msg, nlohmann::json kwargs) {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  char ts[64];
  std::snprintf(ts, sizeof ts, "%s.%06lld+00:00", buf, static_cast<long long>(us));
  std::string upper = level;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return {{"level", upper},
          {"msg", msg},
          {"args", nlohmann::json::array()},
          {"kwargs", std::move(kwargs)},
          {"timestamp", ts}};
}

namespace {

std::string randomUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t a = rng(), b = rng();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", unsigned(a >> 32),
                unsigned((a >> 16) & 0xffff), unsigned(a & 0xffff), unsigned(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

bool boolAttr(const std::shared_ptr<const nlohmann::json>& a, const char* key, bool fallback) {
  if (!a || !a->is_object()) return fallback;
  auto it = a->find(key);
  if (it == a->end() || !it->is_boolean()) return fallback;
  return it->get<bool>();
}

} // namespace

SchedulerState::SchedulerState(Executor& executor, const Clock& clock, std::function<std::string()> newUuid)
    : executor_(executor), clock_(clock), newUuid_(newUuid ? std::move(newUuid) : randomUuid) {}

// ---------------------------------------------------------------- intent

uint32_t SchedulerState::slotFor(const std::string& id) {
  auto it = index_.find(id);
  if (it != index_.end()) return it->second;
  uint32_t idx = static_cast<uint32_t>(res_.size());
  res_.emplace_back();
  res_.back().id = id;
  index_.emplace(id, idx);
  return idx;
}

uint32_t SchedulerState::agentFor(const std::string& name) {
  auto it = agentIndex_.find(name);
  if (it != agentIndex_.end()) return it->second;
  uint32_t idx = static_cast<uint32_t>(agents_.size());
  agents_.push_back(AgentQ{name, false, 0, {}});
  agentIndex_.emplace(name, idx);
  return idx;
}

void SchedulerState::setIntent(Res& r, const plan::Intent& i) {
  r.agent = agentFor(i.agent);
  r.hash = i.hash;
  r.undefined = i.undefined;
  r.attributes = i.attributes;
  r.attributesText = i.attributesText;
  r.requireIds = i.requireIds;
  r.sendEvent = i.sendEvent.value_or(boolAttr(i.attributes, "send_event", false));
  r.receiveEvents = i.receiveEvents.value_or(boolAttr(i.attributes, "receive_events", true));
  r.present = true;
}

void SchedulerState::resetFresh(Res& r) {
  r.generation++;
  r.compliance = r.undefined ? Compliance::Undefined : Compliance::HasUpdate;
  r.lastResult = HandlerResult::New;
  r.blocked = Blocked::NotBlocked;
  r.lastCompliant = false;
  r.hasRun = false;
  r.lastDeployed.reset();
  r.lastSuccess.reset();
  r.lastProducedEvents.reset();
  r.lastChangeStarted.reset();
}

void SchedulerState::rebuildGraph() {
  for (auto& r : res_) {
    r.requires_.clear();
    r.provides.clear();
  }
  for (uint32_t i = 0; i < res_.size(); ++i) {
    Res& r = res_[i];
    if (!r.present) continue;
    for (const auto& dep : r.requireIds) {
      auto it = index_.find(dep);
      if (it == index_.end() || !res_[it->second].present) continue;
      r.requires_.push_back(it->second);
      res_[it->second].provides.push_back(i);
    }
  }
}

void SchedulerState::recomputeBlocked(bool recordEffects) {
  // BLOCKED = undefined or transitively requires an undefined resource (plan::computeBlocked on indices).
  std::vector<char> blocked(res_.size(), 0);
  std::vector<uint32_t> work;
  for (uint32_t i = 0; i < res_.size(); ++i)
    if (res_[i].present && res_[i].undefined) {
      blocked[i] = 1;
      work.push_back(i);
    }
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    for (uint32_t p : res_[i].provides)
      if (!blocked[p]) {
        blocked[p] = 1;
        work.push_back(p);
      }
  }
  for (uint32_t i = 0; i < res_.size(); ++i) {
    Res& r = res_[i];
    if (!r.present) continue;
    Blocked before = r.blocked;
    if (blocked[i]) {
      if (r.blocked != Blocked::Blocked) {
        r.blocked = Blocked::Blocked;
        unscheduleDeploy(i);
        cancelTimer(i);
      }
      if (r.undefined) r.compliance = Compliance::Undefined;
    } else if (r.blocked == Blocked::Blocked) {
      r.blocked = Blocked::NotBlocked;
      if (r.compliance == Compliance::Undefined) r.compliance = Compliance::HasUpdate;
    }
    if (recordEffects && before != r.blocked) noteBlocked(r);
  }
}

void SchedulerState::recomputeBlockedOn() {
  for (uint32_t i = 0; i < res_.size(); ++i) {
    Res& r = res_[i];
    if (!r.scheduled) continue;
    r.blockedOn.clear();
    if (r.running) r.blockedOn.push_back(i);
    for (uint32_t d : r.requires_)
      if (res_[d].scheduled || res_[d].running) r.blockedOn.push_back(d);
    bool shouldBeReady = r.blockedOn.empty();
    if (r.ready && !shouldBeReady) {
      agents_[r.agent].ready.erase(QKey{r.prio, r.seq, TaskKind::Deploy, i});
      r.ready = false;
    } else if (!r.ready && shouldBeReady) {
      makeReady(i);
    }
  }
}

bool SchedulerState::isDirty(const Res& r) const {
  return r.present && r.blocked == Blocked::NotBlocked &&
         (r.compliance == Compliance::HasUpdate || r.compliance == Compliance::NonCompliant);
}

plan::ManagedIntent SchedulerState::managedIntent() const {
  plan::ManagedIntent m;
  for (const auto& r : res_) {
    if (!r.present) continue;
    plan::Intent i{r.id,         agents_[r.agent].name, r.hash,      r.undefined,    r.requireIds,
                   r.attributes, r.attributesText,      r.sendEvent, r.receiveEvents};
    m.emplace(r.id, std::move(i));
  }
  return m;
}

void SchedulerState::restore(int version, const std::vector<plan::Intent>& intents,
                             const std::unordered_map<std::string, PersistedState>& persisted) {
  version_ = version;
  for (const auto& i : intents) {
    uint32_t idx = slotFor(i.id);
    Res& r = res_[idx];
    setIntent(r, i);
    resetFresh(r);
    auto it = persisted.find(i.id);
    if (it == persisted.end()) continue;
    const PersistedState& p = it->second;
    r.lastResult = parseHandlerResult(p.lastHandlerRun).value_or(HandlerResult::New);
    r.hasRun = r.lastResult != HandlerResult::New;
    r.lastCompliant = p.lastHandlerRunCompliant.value_or(false);
    r.lastDeployed = p.lastHandlerRunAt;
    r.lastSuccess = p.lastSuccess;
    r.lastProducedEvents = p.lastProducedEvents;
    r.lastChangeStarted = p.lastChangeStarted;
    // We store TEMPORARILY_BLOCKED and restore it (the reference stores NOT_BLOCKED, a known gap).
    if (parseBlocked(p.blocked).value_or(Blocked::NotBlocked) == Blocked::TemporarilyBlocked)
      r.blocked = Blocked::TemporarilyBlocked;
    if (r.undefined)
      r.compliance = Compliance::Undefined;
    else if (!r.hasRun || !p.lastDeployedHash || *p.lastDeployedHash != r.hash)
      r.compliance = Compliance::HasUpdate;
    else
      r.compliance = r.lastCompliant ? Compliance::Compliant : Compliance::NonCompliant;
  }
  rebuildGraph();
  recomputeBlocked(false);
  // §6.6: a send_event dependency that produced events after this resource's last success makes it dirty.
  for (auto& r : res_) {
    if (!r.present || r.compliance != Compliance::Compliant) continue;
    for (uint32_t d : r.requires_) {
      const Res& dep = res_[d];
      if (dep.sendEvent && r.receiveEvents && dep.lastProducedEvents &&
          (!r.lastSuccess || *dep.lastProducedEvents > *r.lastSuccess)) {
        r.compliance = Compliance::NonCompliant;
        break;
      }
    }
  }
}

void SchedulerState::startDeploying() {
  // Whatever a version processed at start already scheduled (or started) keeps its task.
  for (uint32_t i = 0; i < res_.size(); ++i)
    if (isDirty(res_[i]) && !res_[i].scheduled && !res_[i].running)
      scheduleDeploy(i, Priority::IntervalDeploy, "the scheduler started and it is dirty");
  for (uint32_t i = 0; i < res_.size(); ++i) armTimer(i);
  armCron();
  pump();
}

void SchedulerState::applyVersion(const plan::ChangeSet& cs, const std::vector<plan::Intent>& newest) {
  VersionWrite vw;
  vw.version = cs.toVersion;
  for (const auto& id : cs.deleted) {
    auto it = index_.find(id);
    if (it == index_.end()) continue;
    uint32_t idx = it->second;
    unscheduleDeploy(idx);
    cancelTimer(idx);
    Res& r = res_[idx];
    r.present = false;
    r.generation++;
    vw.orphans.push_back({id, version_});
  }
  for (const auto& i : cs.added) {
    uint32_t idx = slotFor(i.id);
    unscheduleDeploy(idx);
    cancelTimer(idx);
    Res& r = res_[idx];
    setIntent(r, i);
    resetFresh(r);
    vw.rows.push_back({i.id, i.agent, i.hash, i.undefined, true, Blocked::NotBlocked});
  }
  for (const auto& i : cs.updated) {
    uint32_t idx = slotFor(i.id);
    Res& r = res_[idx];
    bool wasUndefined = r.undefined;
    setIntent(r, i);
    r.generation++;
    r.compliance = r.undefined ? Compliance::Undefined : Compliance::HasUpdate;
    if (r.blocked == Blocked::TemporarilyBlocked) r.blocked = Blocked::NotBlocked;
    (void)wasUndefined;
    vw.rows.push_back({i.id, i.agent, i.hash, i.undefined, false, Blocked::NotBlocked});
  }
  for (const auto& i : cs.unchanged) setIntent(res_[slotFor(i.id)], i);
  (void)newest;
  version_ = cs.toVersion;
  rebuildGraph();
  recomputeBlocked(true);
  for (auto& row : vw.rows) row.blocked = res_[index_.at(row.resourceId)].blocked;
  recomputeBlockedOn();
  for (uint32_t i = 0; i < res_.size(); ++i)
    if (isDirty(res_[i])) scheduleDeploy(i, Priority::NewVersionDeploy, "a new version was released");
  if (effects_.version) {
    // Not drained since the previous version: merge (later rows win, the first orphanedAfter stays).
    VersionWrite& prev = *effects_.version;
    std::unordered_map<std::string, size_t> at;
    for (size_t k = 0; k < prev.rows.size(); ++k) at[prev.rows[k].resourceId] = k;
    for (auto& row : vw.rows) {
      auto it = at.find(row.resourceId);
      if (it == at.end()) {
        prev.rows.push_back(row);
      } else {
        row.fresh = row.fresh || prev.rows[it->second].fresh;
        prev.rows[it->second] = row;
      }
    }
    // A resource orphaned earlier and back now is not an orphan any more.
    std::unordered_set<std::string> back;
    for (const auto& r : vw.rows) back.insert(r.resourceId);
    std::erase_if(prev.orphans, [&](const VersionWrite::Orphan& o) { return back.count(o.resourceId) > 0; });
    for (auto& o : vw.orphans) prev.orphans.push_back(o);
    prev.version = vw.version;
  } else {
    effects_.version = std::move(vw);
  }
  effects_.log.push_back(cs.dump().substr(0, cs.dump().find('\n')));
  pump();
}

// ---------------------------------------------------------------- scheduling

void SchedulerState::scheduleDeploy(uint32_t idx, Priority prio, const std::string& reason) {
  Res& r = res_[idx];
  if (!r.present || r.blocked == Blocked::Blocked) return;
  int p = static_cast<int>(prio);
  if (r.scheduled) {
    if (p < r.prio) {
      if (r.ready) agents_[r.agent].ready.erase(QKey{r.prio, r.seq, TaskKind::Deploy, idx});
      r.prio = p;
      r.seq = nextSeq_++;
      r.reason = reason;
      if (r.ready) {
        agents_[r.agent].ready.insert(QKey{r.prio, r.seq, TaskKind::Deploy, idx});
        pumpAgents_.insert(r.agent);
      }
    }
    return;
  }
  cancelTimer(idx);
  r.scheduled = true;
  r.ready = false;
  r.prio = p;
  r.seq = nextSeq_++;
  r.reason = reason;
  r.blockedOn.clear();
  if (r.running) r.blockedOn.push_back(idx);
  for (uint32_t d : r.requires_)
    if (res_[d].scheduled || res_[d].running) r.blockedOn.push_back(d);
  // Already scheduled dependents now wait for this one too (§6.3); a running one gets a fresh deploy after
  // it.
  for (uint32_t q : r.provides) {
    Res& dep = res_[q];
    if (!dep.present) continue;
    if (dep.scheduled) {
      if (std::find(dep.blockedOn.begin(), dep.blockedOn.end(), idx) == dep.blockedOn.end())
        dep.blockedOn.push_back(idx);
      if (dep.ready) {
        agents_[dep.agent].ready.erase(QKey{dep.prio, dep.seq, TaskKind::Deploy, q});
        dep.ready = false;
      }
    } else if (dep.running) {
      scheduleDeploy(q, prio, "a dependency is redeployed while it ran");
    }
  }
  if (r.blockedOn.empty()) makeReady(idx);
}

void SchedulerState::makeReady(uint32_t idx) {
  Res& r = res_[idx];
  r.ready = true;
  agents_[r.agent].ready.insert(QKey{r.prio, r.seq, TaskKind::Deploy, idx});
  pumpAgents_.insert(r.agent);
}

void SchedulerState::unscheduleDeploy(uint32_t idx) {
  Res& r = res_[idx];
  if (!r.scheduled) return;
  if (r.ready) agents_[r.agent].ready.erase(QKey{r.prio, r.seq, TaskKind::Deploy, idx});
  r.scheduled = false;
  r.ready = false;
  r.blockedOn.clear();
  if (!r.running) releaseDependents(idx);
}

void SchedulerState::releaseDependents(uint32_t idx) {
  // Called when idx is neither scheduled nor running any more.
  for (uint32_t q : res_[idx].provides) {
    Res& dep = res_[q];
    if (!dep.scheduled) continue;
    auto it = std::find(dep.blockedOn.begin(), dep.blockedOn.end(), idx);
    if (it == dep.blockedOn.end()) continue;
    dep.blockedOn.erase(it);
    if (dep.blockedOn.empty() && !dep.ready) makeReady(q);
  }
}

void SchedulerState::userDeploy(const std::vector<std::string>& agents, bool repair) {
  std::set<std::string> scope(agents.begin(), agents.end());
  for (uint32_t i = 0; i < res_.size(); ++i) {
    Res& r = res_[i];
    if (!r.present || r.blocked == Blocked::Blocked) continue;
    if (!scope.empty() && !scope.count(agents_[r.agent].name)) continue;
    if (repair) {
      // A repair runs everything not BLOCKED, TEMPORARILY_BLOCKED included; compliance is left alone so a new
      // version landing meanwhile promotes only what it changed (§17.4).
      if (r.blocked == Blocked::TemporarilyBlocked) {
        r.blocked = Blocked::NotBlocked;
        noteBlocked(r);
      }
      scheduleDeploy(i, Priority::UserRepair, "a user requested a repair");
    } else if (isDirty(r)) {
      scheduleDeploy(i, Priority::UserDeploy, "a user requested a deploy");
    }
  }
  pump();
}

void SchedulerState::setAgentPaused(const std::string& agent, bool paused) {
  uint32_t a = agentFor(agent);
  agents_[a].paused = paused;
  if (!paused) pumpAgents_.insert(a);
  pump();
}

void SchedulerState::setHalted(bool halted) {
  halted_ = halted;
  if (!halted)
    for (uint32_t a = 0; a < agents_.size(); ++a) pumpAgents_.insert(a);
  pump();
}

void SchedulerState::requestDryrun(const std::string& dryrunId, int version,
                                   const std::vector<plan::Intent>& resources) {
  for (const auto& i : resources) {
    uint64_t id = nextTask_++;
    uint32_t a = agentFor(i.agent);
    side_.emplace(id, SideTask{TaskKind::DryRun, UINT32_MAX, i.id, a, version, i.attributes, i.attributesText,
                               dryrunId});
    agents_[a].ready.insert(QKey{static_cast<int>(Priority::DryRun), nextSeq_++, TaskKind::DryRun, id});
    pumpAgents_.insert(a);
  }
  pump();
}

void SchedulerState::requestFacts(const std::string& resourceId) {
  auto it = index_.find(resourceId);
  if (it == index_.end()) return;
  Res& r = res_[it->second];
  if (!r.present || r.blocked == Blocked::Blocked) return;
  for (const auto& [_, t] : side_)
    if (t.kind == TaskKind::RefreshFact && t.res == it->second) return; // unique per resource
  uint64_t id = nextTask_++;
  side_.emplace(
      id,
      SideTask{
          TaskKind::RefreshFact, it->second, r.id, r.agent, version_, r.attributes, r.attributesText, {}});
  agents_[r.agent].ready.insert(
      QKey{static_cast<int>(Priority::FactRefresh), nextSeq_++, TaskKind::RefreshFact, id});
  pumpAgents_.insert(r.agent);
  pump();
}

// ---------------------------------------------------------------- dispatch

std::string SchedulerState::dependencyState(const Res& d) const {
  if (d.undefined) return "undefined";
  if (d.blocked == Blocked::Blocked) return "skipped_for_undefined";
  if (d.compliance == Compliance::HasUpdate) return "available";
  if (d.lastResult == HandlerResult::Skipped) return "skipped";
  if (d.lastResult == HandlerResult::Failed) return "failed";
  if (d.compliance == Compliance::NonCompliant) return "non_compliant";
  return "deployed";
}

void SchedulerState::startTask(AgentQ& a, const QKey& k, std::vector<WorkItem>& batch) {
  TimePoint now = clock_.now();
  WorkItem w;
  w.taskId = nextTask_++;
  w.kind = k.kind;
  w.actionId = newUuid_();
  w.agent = a.name;
  Running t;
  t.taskId = w.taskId;
  t.kind = k.kind;
  t.agent = static_cast<uint32_t>(&a - agents_.data());
  t.prio = k.prio;
  t.actionId = w.actionId;
  t.started = now;
  if (k.kind == TaskKind::Deploy) {
    uint32_t idx = static_cast<uint32_t>(k.ref);
    Res& r = res_[idx];
    r.scheduled = false;
    r.ready = false;
    r.running = true;
    r.blockedOn.clear();
    t.res = idx;
    t.generation = r.generation;
    t.hash = r.hash;
    t.version = version_;
    t.resourceId = r.id;
    w.resourceId = r.id;
    w.version = version_;
    w.attributes = r.attributes; // a tree (tests) or the stored text, never parsed here
    if (!w.attributes) w.attributesText = r.attributesText;
    w.reason = r.reason;
    for (uint32_t d : r.requires_) {
      const Res& dep = res_[d];
      w.dependencyStates.emplace_back(dep.id, dependencyState(dep));
      if (dep.lastChangeStarted && (!r.lastSuccess || *dep.lastChangeStarted > *r.lastSuccess))
        w.dependencyChanged = true;
    }
    stats_.deploysStarted++;
    effects_.starts.push_back(ActionStart{
        w.actionId, r.id, a.name, version_, TaskKind::Deploy, now,
        nlohmann::json::array({logLine("info", "Start run because " + r.reason, {{"reason", r.reason}})}),
        effectSeq_++});
  } else {
    auto it = side_.find(k.ref);
    assert(it != side_.end() && "queued side task without its record");
    SideTask s = std::move(it->second);
    side_.erase(it);
    t.res = s.res;
    t.version = s.version;
    t.resourceId = s.resourceId;
    t.dryrunId = s.dryrunId;
    w.resourceId = s.resourceId;
    w.version = s.version;
    w.attributes = s.attributes;
    if (!w.attributes) w.attributesText = s.attributesText;
    w.dryrunId = s.dryrunId;
    w.reason = k.kind == TaskKind::DryRun ? "dryrun" : "fact refresh";
    effects_.starts.push_back(ActionStart{w.actionId, s.resourceId, a.name, s.version, k.kind, now,
                                          nlohmann::json::array(), effectSeq_++});
  }
  a.inFlight++;
  running_.emplace(t.taskId, std::move(t));
  batch.push_back(std::move(w));
}

void SchedulerState::setBackpressure(bool on) {
  if (backpressure_ == on) return;
  backpressure_ = on;
  if (!on) {
    for (uint32_t a = 0; a < agents_.size(); ++a) pumpAgents_.insert(a);
    pump();
  }
}

void SchedulerState::setMaxInFlight(size_t n) {
  maxInFlight_ = n;
  for (uint32_t a = 0; a < agents_.size(); ++a) pumpAgents_.insert(a);
  pump();
}

void SchedulerState::pump() {
  if (halted_ || backpressure_ || pumpAgents_.empty()) return;
  std::vector<WorkItem> batch;
  const uint32_t limit = static_cast<uint32_t>(std::max(1, settings_.agentParallelism));
  auto startable = [&](const AgentQ& a) { return !a.paused && a.inFlight < limit && !a.ready.empty(); };
  size_t budget = SIZE_MAX;
  if (maxInFlight_ > 0) budget = running_.size() >= maxInFlight_ ? 0 : maxInFlight_ - running_.size();
  // Round robin, one task per agent per round, starting after the agent served last: under the global cap
  // every agent with work gets its share of the free slots, not the lowest-numbered agents all of them.
  std::vector<uint32_t> order;
  order.reserve(pumpAgents_.size());
  auto split = pumpAgents_.lower_bound(nextAgent_);
  order.insert(order.end(), split, pumpAgents_.end());
  order.insert(order.end(), pumpAgents_.begin(), split);
  while (!order.empty() && budget > 0) {
    size_t kept = 0;
    for (uint32_t ai : order) {
      AgentQ& a = agents_[ai];
      if (!startable(a)) continue;
      if (budget == 0) {
        order[kept++] = ai; // still has work: stays in line for the next free slot
        continue;
      }
      QKey k = *a.ready.begin();
      a.ready.erase(a.ready.begin());
      startTask(a, k, batch);
      --budget;
      nextAgent_ = ai + 1;
      if (startable(a)) order[kept++] = ai;
    }
    order.resize(kept);
  }
  // Agents that could not start everything (cap reached) are pumped again when a result frees a slot.
  pumpAgents_.clear();
  pumpAgents_.insert(order.begin(), order.end());
  if (!batch.empty()) {
    stats_.batches++;
    executor_.submit(std::move(batch));
  }
}

// ---------------------------------------------------------------- results

void SchedulerState::onResults(std::vector<WorkResult> results) {
  for (auto& r : results) {
    auto it = running_.find(r.taskId);
    if (it == running_.end()) {
      effects_.log.push_back("ignoring a result for unknown task " + std::to_string(r.taskId));
      continue;
    }
    Running t = std::move(it->second);
    running_.erase(it);
    agents_[t.agent].inFlight--;
    pumpAgents_.insert(t.agent);
    if (t.kind == TaskKind::Deploy)
      finishDeploy(t, r);
    else
      finishSide(t, r);
  }
  pump();
}

void SchedulerState::finishDeploy(Running& t, WorkResult& wr) {
  TimePoint now = clock_.now();
  stats_.deploysFinished++;
  Res& r = res_[t.res];
  r.running = false;
  bool removed = !r.present;
  bool stale = removed || r.generation != t.generation;
  if (stale) stats_.staleResults++;
  // §6.4: `non_compliant` needs the compliance_reporting feature, which this orchestrator does not have: it
  // is recorded as `failed` (the handler's own lines stay in the log).
  const std::string st = wr.status == "non_compliant" ? std::string("failed") : wr.status;
  HandlerResult hr = HandlerResult::Failed;
  if (st == "deployed" || st == "non_compliant")
    hr = HandlerResult::Successful;
  else if (st == "skipped" || st == "skipped_for_dependency")
    hr = HandlerResult::Skipped;
  bool deployed = st == "deployed";
  bool wasNonCompliant = r.hasRun && !r.lastCompliant;

  if (!removed) {
    r.lastResult = hr;
    r.lastDeployed = now;
    if (deployed) r.lastSuccess = t.started;
    if (wr.change != "nochange" && !wr.change.empty() &&
        (!r.lastChangeStarted || *r.lastChangeStarted < t.started))
      r.lastChangeStarted = t.started;
    if (!stale) {
      r.hasRun = true;
      r.lastCompliant = deployed;
      r.compliance = deployed ? Compliance::Compliant : Compliance::NonCompliant;
      if (st == "skipped_for_dependency") {
        bool depNonCompliant = false;
        for (uint32_t d : r.requires_)
          if (res_[d].hasRun && !res_[d].lastCompliant) depNonCompliant = true;
        if (depNonCompliant && r.blocked == Blocked::NotBlocked) r.blocked = Blocked::TemporarilyBlocked;
      } else if (r.blocked == Blocked::TemporarilyBlocked) {
        if (deployed)
          effects_.log.push_back("warning: " + r.id + " succeeded while temporarily blocked; unblocking it");
        r.blocked = Blocked::NotBlocked;
      }
    }
  }

  DeployFinish f;
  f.actionId = t.actionId;
  f.resourceId = r.id;
  f.version = t.version;
  f.status = st;
  f.change = wr.change;
  f.changes = std::move(wr.changes);
  f.messages = wr.messages.is_array() ? std::move(wr.messages) : nlohmann::json::array();
  // The closing line: the executor's own "End run for resource …" when it wrote one and nothing differs from
  // it (each log line costs the action row ~12 µs of jsonb in PostgreSQL); ours when the run was stale, the
  // status was recorded differently, or no executor line came (unavailable, test doubles).
  bool executorEnded = !f.messages.empty() && f.messages.back().is_object() &&
                       f.messages.back().value("msg", std::string()).rfind("End run", 0) == 0;
  if (stale || st != wr.status || !executorEnded) {
    std::string endMsg =
        "End run (status " + st + (stale ? ", stale: the intent changed while it ran" : "") + ")";
    f.messages.push_back(logLine("info", endMsg, {{"status", st}, {"stale", stale}}));
  }
  f.started = t.started;
  f.finished = now;
  f.deployedHash = t.hash;
  f.stale = stale;
  f.removed = removed;
  f.handlerResult = hr;
  f.compliant = removed ? false : r.lastCompliant;
  f.blocked = r.blocked;
  f.sendEvent = r.sendEvent;
  f.seq = effectSeq_++;
  effects_.finishes.push_back(std::move(f));
  if (!removed && wr.facts.is_object() && !wr.facts.empty())
    effects_.facts.push_back(
        FactWrite{r.id, "", t.version, wr.facts, nlohmann::json::array(), t.started, now, st});

  if (!removed) {
    // Events (§6.6): after a non-stale deploy of a send_event resource, force direct NOT_BLOCKED receivers.
    if (!stale && r.sendEvent) {
      for (uint32_t q : r.provides) {
        Res& dep = res_[q];
        if (dep.present && dep.blocked == Blocked::NotBlocked && dep.receiveEvents)
          scheduleDeploy(q, static_cast<Priority>(t.prio), "a dependency (" + r.id + ") was deployed: event");
      }
    }
    // Recovery (§5.3): a non-compliant -> deployed dependency unblocks TEMPORARILY_BLOCKED direct dependents.
    if (deployed && wasNonCompliant) {
      for (uint32_t q : r.provides) {
        Res& dep = res_[q];
        if (dep.present && dep.blocked == Blocked::TemporarilyBlocked) {
          dep.blocked = Blocked::NotBlocked;
          noteBlocked(dep);
          scheduleDeploy(q, static_cast<Priority>(t.prio), "a dependency (" + r.id + ") recovered");
        }
      }
    }
  }
  if (!r.scheduled) releaseDependents(t.res);
  if (r.scheduled) {
    auto self = std::find(r.blockedOn.begin(), r.blockedOn.end(), t.res);
    if (self != r.blockedOn.end()) r.blockedOn.erase(self);
    if (r.blockedOn.empty() && !r.ready) makeReady(t.res);
  }
  armTimer(t.res);
}

void SchedulerState::finishSide(Running& t, const WorkResult& wr) {
  TimePoint now = clock_.now();
  if (t.kind == TaskKind::DryRun) {
    DryrunWrite d;
    d.dryrunId = t.dryrunId;
    d.resourceId = t.resourceId;
    d.actionId = t.actionId;
    d.version = t.version;
    d.changes = wr.changes.is_object() ? wr.changes : nlohmann::json::object();
    d.status = wr.status;
    if (wr.status != "dry" && wr.status != "deployed") {
      std::string why = wr.status;
      for (const auto& m : wr.messages)
        if (m.is_object() && (m.value("level", "") == "ERROR" || m.value("level", "") == "error"))
          why = m.value("msg", why);
      d.changes["handler"] = {{"current", "FAILED"}, {"desired", why}};
    }
    if (d.changes.empty()) {
      d.diffStatus = "unmodified";
    } else if (d.changes.contains("purged") &&
               d.changes["purged"].value("current", nlohmann::json()) == true &&
               d.changes["purged"].value("desired", nlohmann::json()) == false) {
      d.diffStatus = "added";
    } else if (d.changes.contains("purged") &&
               d.changes["purged"].value("desired", nlohmann::json()) == true) {
      d.diffStatus = "deleted";
    } else {
      d.diffStatus = "modified";
    }
    d.messages = wr.messages;
    d.started = t.started;
    d.finished = now;
    effects_.dryruns.push_back(std::move(d));
  } else {
    effects_.facts.push_back(
        FactWrite{t.resourceId, t.actionId, t.version, wr.facts, wr.messages, t.started, now, wr.status});
  }
}

// ---------------------------------------------------------------- timers

void SchedulerState::setSettings(const Settings& s) {
  settings_ = s;
  for (uint32_t i = 0; i < res_.size(); ++i) {
    cancelTimer(i);
    armTimer(i);
  }
  armCron();
  for (uint32_t a = 0; a < agents_.size(); ++a) pumpAgents_.insert(a);
  pump();
}

void SchedulerState::cancelTimer(uint32_t idx) {
  Res& r = res_[idx];
  if (!r.timerArmed) return;
  timers_.erase({r.timerDue, idx});
  r.timerArmed = false;
}

void SchedulerState::armTimer(uint32_t idx) {
  Res& r = res_[idx];
  cancelTimer(idx);
  if (!r.present || r.blocked == Blocked::Blocked || r.scheduled || r.running) return;
  // Non-compliant resources retry on the deploy interval; compliant and TEMPORARILY_BLOCKED ones wait for
  // repair.
  bool retry = isDirty(r);
  const TimerSetting& ts = retry ? settings_.deployInterval : settings_.repairInterval;
  if (ts.seconds <= 0) return;
  TimePoint base = r.lastDeployed.value_or(clock_.now());
  r.timerDue = base + std::chrono::seconds(ts.seconds);
  r.timerRepair = !retry;
  r.timerArmed = true;
  timers_.insert({r.timerDue, idx});
}

void SchedulerState::armCron() {
  TimePoint now = clock_.now();
  cronDeployDue_ = settings_.deployInterval.cron ? settings_.deployInterval.cron->next(now) : std::nullopt;
  cronRepairDue_ = settings_.repairInterval.cron ? settings_.repairInterval.cron->next(now) : std::nullopt;
}

std::optional<TimePoint> SchedulerState::nextTimer() const {
  std::optional<TimePoint> n;
  auto consider = [&](std::optional<TimePoint> t) {
    if (t && (!n || *t < *n)) n = t;
  };
  if (!timers_.empty()) consider(timers_.begin()->first);
  consider(cronDeployDue_);
  consider(cronRepairDue_);
  return n;
}

void SchedulerState::fireTimers() {
  TimePoint now = clock_.now();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    uint32_t idx = timers_.begin()->second;
    timers_.erase(timers_.begin());
    Res& r = res_[idx];
    r.timerArmed = false;
    if (r.timerRepair) {
      if (r.blocked == Blocked::TemporarilyBlocked) {
        r.blocked = Blocked::NotBlocked;
        noteBlocked(r);
      }
      scheduleDeploy(idx, Priority::IntervalRepair, "the repair interval elapsed");
    } else {
      scheduleDeploy(idx, Priority::IntervalDeploy, "the deploy interval elapsed and it is not compliant");
    }
  }
  if (cronDeployDue_ && *cronDeployDue_ <= now) {
    for (uint32_t i = 0; i < res_.size(); ++i)
      if (isDirty(res_[i]))
        scheduleDeploy(i, Priority::IntervalDeploy, "the deploy cron ticked and it is dirty");
    cronDeployDue_ = settings_.deployInterval.cron->next(now);
  }
  if (cronRepairDue_ && *cronRepairDue_ <= now) {
    for (uint32_t i = 0; i < res_.size(); ++i) {
      Res& r = res_[i];
      if (!r.present || r.blocked == Blocked::Blocked) continue;
      if (r.blocked == Blocked::TemporarilyBlocked) {
        r.blocked = Blocked::NotBlocked;
        noteBlocked(r);
      }
      scheduleDeploy(i, Priority::IntervalRepair, "the repair cron ticked");
    }
    cronRepairDue_ = settings_.repairInterval.cron->next(now);
  }
  pump();
}

void SchedulerState::noteBlocked(const Res& r) {
  effects_.blocked.push_back(BlockedWrite{r.id, r.blocked, effectSeq_++});
}

// ---------------------------------------------------------------- views

Effects SchedulerState::takeEffects(std::chrono::milliseconds holdRunningStarts) {
  Effects e = std::move(effects_);
  effects_ = Effects{};
  if (holdRunningStarts.count() <= 0 || e.starts.empty()) return e;
  // A deploy that started less than `holdRunningStarts` ago and has not finished yet keeps its start for the
  // next take: most finish by then, and a start written with its finish is one completed row instead of a row
  // plus an update of it (and of is_deploying) in the next batch.
  std::unordered_set<std::string_view> finished;
  for (const auto& f : e.finishes) finished.insert(f.actionId);
  TimePoint cutoff = clock_.now() - holdRunningStarts;
  std::vector<ActionStart> keep;
  keep.reserve(e.starts.size());
  for (auto& st : e.starts) {
    if (st.kind == TaskKind::Deploy && st.started > cutoff && !finished.count(st.actionId))
      effects_.starts.push_back(std::move(st));
    else
      keep.push_back(std::move(st));
  }
  e.starts = std::move(keep);
  return e;
}

size_t SchedulerState::heldStarts() const { return effects_.starts.size(); }

std::optional<SchedulerState::View> SchedulerState::view(const std::string& id) const {
  auto it = index_.find(id);
  if (it == index_.end() || !res_[it->second].present) return std::nullopt;
  const Res& r = res_[it->second];
  View v{r.compliance, r.lastResult, r.blocked,    r.scheduled,
         r.ready,      r.running,    r.timerArmed, static_cast<Priority>(r.prio),
         std::nullopt};
  if (r.timerArmed) v.timerDue = r.timerDue;
  return v;
}

bool SchedulerState::dirty(const std::string& id) const {
  auto it = index_.find(id);
  return it != index_.end() && isDirty(res_[it->second]);
}

size_t SchedulerState::queuedDeploys() const {
  size_t n = 0;
  for (const auto& r : res_) n += r.scheduled;
  return n;
}

size_t SchedulerState::resourceCount() const {
  size_t n = 0;
  for (const auto& r : res_) n += r.present;
  return n;
}

} // namespace inm::scheduler

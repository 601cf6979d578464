// The scheduler state machine (see include/scheduler/Scheduler.h; orchestrator.md §5, §6). Resources live in
// a slot vector indexed by an id map; a deleted resource keeps its slot (present=false) so in-flight results
// can still be matched and recorded as stale. Invariants: a resource's deploy task is in at most one place
// (waiting: scheduled && !ready, or in its agent's ready queue: scheduled && ready); `blockedOn(p)` holds
// exactly the direct requires of p that are scheduled or running, plus p itself while a previous run of p is
// still in flight; a timer is armed only for a present, non-BLOCKED resource that is neither scheduled nor
// running. Dispatch and results (`pump`, `onResults`) are in SchedulerDispatch.cpp; the Work.h helpers in
// Work.cpp.
#include "scheduler/Scheduler.h"

#include <algorithm>
#include <cstdio>
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
  if (auto found = findSlot(id)) return *found;
  uint32_t idx = static_cast<uint32_t>(res_.size());
  res_.emplace_back();
  res_.back().id = id;
  index_.insert(id, idx, [this](uint32_t k) -> const std::string& { return res_[k].id; });
  return idx;
}

void SchedulerState::reserveSlots(size_t n) {
  res_.reserve(n);
  index_.reserve(n, [this](uint32_t k) -> const std::string& { return res_[k].id; });
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
  plan::Intent copy = i;
  setIntent(r, std::move(copy));
}

void SchedulerState::setIntent(Res& r, plan::Intent&& i) {
  r.agent = agentFor(i.agent);
  r.sendEvent = i.sendEvent.value_or(boolAttr(i.attributes, "send_event", false));
  r.receiveEvents = i.receiveEvents.value_or(boolAttr(i.attributes, "receive_events", true));
  if (r.hash != i.hash) r.hash = std::move(i.hash);
  r.undefined = i.undefined;
  r.attributes = std::move(i.attributes);
  r.attributesText = std::move(i.attributesText);
  if (r.requireIds != i.requireIds) r.requireIds = std::move(i.requireIds);
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
      auto slot = findSlot(dep);
      if (!slot || !res_[*slot].present) continue;
      r.requires_.push_back(*slot);
      res_[*slot].provides.push_back(i);
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

std::optional<plan::ManagedRef> SchedulerState::Lookup::find(const std::string& id) const {
  auto slot = s_.findSlot(id);
  if (!slot || !s_.res_[*slot].present) return std::nullopt;
  const Res& r = s_.res_[*slot];
  return plan::ManagedRef{&r.hash, r.undefined, &r.requireIds};
}

void SchedulerState::Lookup::forEach(
    const std::function<void(const std::string&, const plan::ManagedRef&)>& fn) const {
  for (const Res& r : s_.res_)
    if (r.present) fn(r.id, plan::ManagedRef{&r.hash, r.undefined, &r.requireIds});
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

void SchedulerState::restore(int version, std::vector<plan::Intent> intents,
                             const std::unordered_map<std::string, PersistedState>& persisted) {
  version_ = version;
  reserveSlots(res_.size() + intents.size());
  for (auto& i : intents) {
    uint32_t idx = slotFor(i.id);
    Res& r = res_[idx];
    setIntent(r, std::move(i));
    resetFresh(r);
    auto it = persisted.find(r.id); // i is moved from (its id is kept, but r.id is the slot's own)
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
  (void)newest;
  plan::ChangeSet copy = cs;
  applyVersion(std::move(copy));
}

void SchedulerState::applyVersion(plan::ChangeSet&& cs) {
  reserveSlots(res_.size() + cs.added.size());
  VersionWrite vw;
  vw.rows.reserve(cs.added.size() + cs.updated.size());
  vw.version = cs.toVersion;
  for (const auto& id : cs.deleted) {
    auto slot = findSlot(id);
    if (!slot) continue;
    uint32_t idx = *slot;
    unscheduleDeploy(idx);
    cancelTimer(idx);
    Res& r = res_[idx];
    r.present = false;
    r.generation++;
    vw.orphans.push_back({id, version_});
  }
  for (auto& i : cs.added) {
    uint32_t idx = slotFor(i.id);
    unscheduleDeploy(idx);
    cancelTimer(idx);
    Res& r = res_[idx];
    vw.rows.push_back({i.id, i.agent, i.hash, i.undefined, true, Blocked::NotBlocked});
    setIntent(r, std::move(i));
    resetFresh(r);
  }
  for (auto& i : cs.updated) {
    uint32_t idx = slotFor(i.id);
    Res& r = res_[idx];
    vw.rows.push_back({i.id, i.agent, i.hash, i.undefined, false, Blocked::NotBlocked});
    setIntent(r, std::move(i));
    r.generation++;
    r.compliance = r.undefined ? Compliance::Undefined : Compliance::HasUpdate;
    if (r.blocked == Blocked::TemporarilyBlocked) r.blocked = Blocked::NotBlocked;
  }
  for (auto& i : cs.unchanged) setIntent(res_[slotFor(i.id)], std::move(i));
  // The intents live in res_ now; what is left of the change set is ids and edges.
  std::vector<plan::Intent>().swap(cs.added);
  std::vector<plan::Intent>().swap(cs.updated);
  std::vector<plan::Intent>().swap(cs.unchanged);
  version_ = cs.toVersion;
  rebuildGraph();
  recomputeBlocked(true);
  for (auto& row : vw.rows) row.blocked = res_[*findSlot(row.resourceId)].blocked;
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
  // The first line of cs.dump() (the whole dump is a line per resource).
  std::string line =
      "fold " + std::to_string(cs.fromVersion) + " -> " + std::to_string(cs.toVersion) + " (versions";
  for (int v : cs.folded) line += ' ' + std::to_string(v);
  effects_.log.push_back(line + ")");
  pump();
}

// ---------------------------------------------------------------- scheduling

std::shared_ptr<const std::string> SchedulerState::internReason(const std::string& reason) {
  // The causes are a handful of fixed sentences (shared by every resource they schedule) plus per-dependency
  // ones naming a resource; the table keeps at most 64, so the latter cannot grow it without bound.
  auto it = reasons_.find(reason);
  if (it != reasons_.end()) return it->second;
  auto shared = std::make_shared<const std::string>(reason);
  if (reasons_.size() < 64) reasons_.emplace(reason, shared);
  return shared;
}

void SchedulerState::scheduleDeploy(uint32_t idx, Priority prio, const std::string& reason) {
  Res& r = res_[idx];
  if (!r.present || r.blocked == Blocked::Blocked) return;
  int p = static_cast<int>(prio);
  if (r.scheduled) {
    if (p < r.prio) {
      if (r.ready) agents_[r.agent].ready.erase(QKey{r.prio, r.seq, TaskKind::Deploy, idx});
      r.prio = p;
      r.seq = nextSeq_++;
      r.reason = internReason(reason);
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
  r.reason = internReason(reason);
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
  // A repair run lasts while a resource it scheduled is queued or running. A second repair request during the
  // run joins it: what was deployed since the run began (and is not dirty again) counts as repaired.
  bool joining = false;
  if (repair) {
    for (const Res& r : res_)
      if (r.inRepairRun && (r.scheduled || r.running)) {
        joining = true;
        break;
      }
    if (!joining) {
      repairRunFrom_ = startSerial_;
      for (Res& r : res_) r.inRepairRun = false;
    }
  }
  for (uint32_t i = 0; i < res_.size(); ++i) {
    Res& r = res_[i];
    if (!r.present || r.blocked == Blocked::Blocked) continue;
    if (!scope.empty() && !scope.count(agents_[r.agent].name)) continue;
    if (repair) {
      if (joining && r.lastStartSerial > repairRunFrom_ && (r.running || !isDirty(r))) continue;
      r.inRepairRun = true;
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
  auto slot = findSlot(resourceId);
  if (!slot) return;
  Res& r = res_[*slot];
  if (!r.present || r.blocked == Blocked::Blocked) return;
  for (const auto& [_, t] : side_)
    if (t.kind == TaskKind::RefreshFact && t.res == *slot) return; // unique per resource
  uint64_t id = nextTask_++;
  side_.emplace(
      id,
      SideTask{TaskKind::RefreshFact, *slot, r.id, r.agent, version_, r.attributes, r.attributesText, {}});
  agents_[r.agent].ready.insert(
      QKey{static_cast<int>(Priority::FactRefresh), nextSeq_++, TaskKind::RefreshFact, id});
  pumpAgents_.insert(r.agent);
  pump();
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
  auto slot = findSlot(id);
  if (!slot || !res_[*slot].present) return std::nullopt;
  const Res& r = res_[*slot];
  View v{r.compliance, r.lastResult, r.blocked,    r.scheduled,
         r.ready,      r.running,    r.timerArmed, static_cast<Priority>(r.prio),
         std::nullopt};
  if (r.timerArmed) v.timerDue = r.timerDue;
  return v;
}

bool SchedulerState::dirty(const std::string& id) const {
  auto slot = findSlot(id);
  return slot && isDirty(res_[*slot]);
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

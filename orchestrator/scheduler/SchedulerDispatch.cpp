// The scheduler's dispatch and result halves (include/scheduler/Scheduler.h; orchestrator.md §6): `pump`
// hands ready tasks to the executor in round-robin batches under the per-agent and global in-flight caps, and
// `onResults` records each result as effects and wakes what waited on it. The invariants of Scheduler.cpp
// hold here too: a task leaves its agent's ready queue exactly when it starts, and a result whose generation
// no longer matches its resource is recorded as stale and changes no compliance.
#include "scheduler/Scheduler.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace inm::scheduler {

namespace {
nlohmann::json textThenTree(const std::string& text, const nlohmann::json& tree) {
  nlohmann::json out = nlohmann::json::array();
  if (!text.empty()) {
    nlohmann::json lines = nlohmann::json::parse(text, nullptr, false);
    if (lines.is_array()) out = std::move(lines);
  }
  if (tree.is_array())
    for (const auto& m : tree) out.push_back(m);
  return out;
}
} // namespace

nlohmann::json ActionStart::lines() const { return textThenTree(messagesText, messages); }
nlohmann::json DeployFinish::lines() const { return textThenTree(messagesText, messages); }

using model::DeployStatus;
using model::is;

// ---------------------------------------------------------------- dispatch

std::string SchedulerState::dependencyState(const Res& d) const {
  auto name = [](DeployStatus s) { return std::string(model::spelling(s)); };
  if (d.undefined) return name(DeployStatus::Undefined);
  if (d.blocked == Blocked::Blocked) return name(DeployStatus::SkippedForUndefined);
  if (d.compliance == Compliance::HasUpdate) return name(DeployStatus::Available);
  if (d.lastResult == HandlerResult::Skipped) return name(DeployStatus::Skipped);
  if (d.lastResult == HandlerResult::Failed) return name(DeployStatus::Failed);
  if (d.compliance == Compliance::NonCompliant) return name(DeployStatus::NonCompliant);
  return name(DeployStatus::Deployed);
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
    r.lastStartSerial = ++startSerial_;
    t.res = idx;
    t.generation = r.generation;
    t.hash = r.hash;
    t.version = version_;
    t.resourceId = r.id;
    w.resourceId = r.id;
    w.version = version_;
    w.attributes = r.attributes; // a tree (tests) or the stored text, never parsed here
    if (!w.attributes) w.attributesText = r.attributesText;
    w.reason = r.reason ? *r.reason : std::string();
    for (uint32_t d : r.requires_) {
      const Res& dep = res_[d];
      w.dependencyStates.emplace_back(dep.id, dependencyState(dep));
      if (dep.lastChangeStarted && (!r.lastSuccess || *dep.lastChangeStarted > *r.lastSuccess))
        w.dependencyChanged = true;
    }
    stats_.deploysStarted++;
    ActionStart st{w.actionId, r.id, a.name, version_, TaskKind::Deploy, now, nullptr, {}, effectSeq_++};
    appendLine(st.messagesText, logLine("info", "Start run because " + w.reason, {{"reason", w.reason}}));
    effects_.starts.push_back(std::move(st));
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
    effects_.starts.push_back(ActionStart{
        w.actionId, s.resourceId, a.name, s.version, k.kind, now, nlohmann::json::array(), {}, effectSeq_++});
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
  if (halted_ || backpressure_ || stopping_ || pumpAgents_.empty()) return;
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
  const std::string st = is(wr.status, DeployStatus::NonCompliant)
                             ? std::string(model::spelling(DeployStatus::Failed))
                             : wr.status;
  HandlerResult hr = HandlerResult::Failed;
  if (is(st, DeployStatus::Deployed) || is(st, DeployStatus::NonCompliant))
    hr = HandlerResult::Successful;
  else if (is(st, DeployStatus::Skipped) || is(st, DeployStatus::SkippedForDependency))
    hr = HandlerResult::Skipped;
  bool deployed = is(st, DeployStatus::Deployed);
  bool wasNonCompliant = r.hasRun && !r.lastCompliant;

  if (!removed) {
    r.lastResult = hr;
    r.lastDeployed = now;
    if (deployed) r.lastSuccess = t.started;
    if (!is(wr.change, model::Change::NoChange) && !wr.change.empty() &&
        (!r.lastChangeStarted || *r.lastChangeStarted < t.started))
      r.lastChangeStarted = t.started;
    if (!stale) {
      r.hasRun = true;
      r.lastCompliant = deployed;
      r.compliance = deployed ? Compliance::Compliant : Compliance::NonCompliant;
      if (is(st, DeployStatus::SkippedForDependency)) {
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
  f.messagesText = std::move(wr.messagesText);
  // The closing line: the executor's own "End run for resource …" when it wrote one and nothing differs from
  // it (each log line costs the action row ~12 µs of jsonb in PostgreSQL); ours when the run was stale, the
  // status was recorded differently, or no executor line came (unavailable, test doubles).
  bool executorEnded = !f.messages.empty()
                           ? f.messages.back().is_object() &&
                                 f.messages.back().value("msg", std::string()).rfind("End run", 0) == 0
                           : lastMessageText(f.messagesText).rfind("End run", 0) == 0;
  if (stale || st != wr.status || !executorEnded) {
    std::string endMsg =
        "End run (status " + st + (stale ? ", stale: the intent changed while it ran" : "") + ")";
    auto line = logLine("info", endMsg, {{"status", st}, {"stale", stale}});
    // As text after the executor's text lines when it sent no tree (the order of messagesOf: text, tree).
    if (f.messages.empty())
      appendLine(f.messagesText, line);
    else
      f.messages.push_back(std::move(line));
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
    // The executor's own "handler" entry (e.g. "Unable to find a handler") is kept.
    if (!is(wr.status, DeployStatus::Dry) && !is(wr.status, DeployStatus::Deployed) &&
        !d.changes.contains("handler")) {
      std::string why = wr.status;
      for (const auto& m : allMessages(wr))
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
    d.messages = allMessages(wr);
    d.started = t.started;
    d.finished = now;
    effects_.dryruns.push_back(std::move(d));
  } else {
    effects_.facts.push_back(
        FactWrite{t.resourceId, t.actionId, t.version, wr.facts, allMessages(wr), t.started, now, wr.status});
  }
}

} // namespace inm::scheduler

// Deploy starts, finishes and blocked changes of one Effects (see DeployWriter.h). Per action: a start and
// its finish in the same Effects become one completed row; a finish of an earlier start updates the row. Per
// resource the latest event (by seq) decides is_deploying and blocked, so any interleaving within one Effects
// is written correctly. Bulk rows go through COPY: straight into resourceaction / resourceaction_resource,
// and into transaction-local temp tables that one UPDATE … FROM applies (finishes of earlier starts, rps
// columns).
#include "Copy.h"
#include "DeployWriter.h"
#include "model/Ids.h"
#include "model/JsonNumbers.h"
#include "store/SchedulerStore.h"

#include <unordered_map>

namespace inm::scheduler::pg {

namespace {

/// The status resource_persistent_state stores: the handler-only skipped_for_dependency is `skipped` there.
std::string statusForRps(const std::string& s) {
  if (model::is(s, model::DeployStatus::SkippedForDependency))
    return std::string(model::spelling(model::DeployStatus::Skipped));
  return s;
}

const std::vector<std::string> kActionColumns = {
    "action_id", "environment", "version",  "resource_version_ids",
    "action",    "started",     "finished", "messages",
    "status",    "change",      "changes",  "send_event"};
const std::vector<std::string> kLinkColumns = {"environment", "resource_action_id", "resource_id",
                                               "resource_version"};

/// Two dumped JSON arrays as one ("[a,b]" + "[c]" -> "[a,b,c]") without building a tree of both.
/// (The executor's text may hold whitespace: "[ ]" is empty too.)
std::string joinArrays(std::string a, const std::string& b) {
  auto empty = [](const std::string& s) {
    size_t i = s.find_first_not_of(" \t\n\r", 1);
    return i == std::string::npos || s[i] == ']';
  };
  if (empty(b)) return a;
  if (empty(a)) return b;
  a.pop_back();
  a += ',';
  a.append(b, 1, std::string::npos);
  return a;
}

/// The `messages` column of a finish: the executor's lines as received, then the scheduler's own.
std::string messagesOf(const DeployFinish& f) {
  if (f.messagesText.empty()) return f.messages.dump();
  return joinArrays(f.messagesText, f.messages.dump());
}

/// The `messages` column of a start: a deploy's line as text, else the tree (dry runs, facts).
std::string messagesOf(const ActionStart& st) {
  return st.messagesText.empty() ? st.messages.dump() : st.messagesText;
}

/// The `changes` column of one action: {"<rvid>": changes}. Its current/desired values are attribute values:
/// a float such as 1e+16 is written so that jsonb keeps it a float (model/JsonNumbers.h).
std::string changesOf(const std::string& rvid, const nlohmann::json& changes) {
  std::string text = "{" + nlohmann::json(rvid).dump() + ":" + changes.dump() + "}";
  std::string plain;
  return model::keepFloatsInJsonb(text, plain) ? plain : text;
}

} // namespace

SplitEffects splitForWriters(Effects e, size_t shards) {
  SplitEffects out;
  if (shards == 0) shards = 1;
  if (e.version) {
    out.version.emplace();
    out.version->version = std::move(e.version);
  }
  out.shards.resize(shards);
  auto shardOf = [&](const std::string& id) { return std::hash<std::string>{}(id) % shards; };
  for (auto& s : e.starts) out.shards[shardOf(s.resourceId)].starts.push_back(std::move(s));
  for (auto& f : e.finishes) out.shards[shardOf(f.resourceId)].finishes.push_back(std::move(f));
  for (auto& b : e.blocked) out.shards[shardOf(b.resourceId)].blocked.push_back(std::move(b));
  out.shards[0].dryruns = std::move(e.dryruns);
  out.shards[0].facts = std::move(e.facts);
  out.shards[0].log = std::move(e.log);
  return out;
}

void writeDeploys(pqxx::work& tx, const std::string& env, const Effects& e) {
  std::unordered_map<std::string, const DeployFinish*> finishOf;
  for (const auto& f : e.finishes) finishOf[f.actionId] = &f;
  std::unordered_map<std::string, uint64_t> lastStart, lastFinish;
  std::unordered_map<std::string, const DeployFinish*> lastFinishRow;
  for (const auto& st : e.starts)
    if (st.kind == TaskKind::Deploy) lastStart[st.resourceId] = std::max(lastStart[st.resourceId], st.seq);
  for (const auto& f : e.finishes)
    if (f.seq >= lastFinish[f.resourceId]) {
      lastFinish[f.resourceId] = f.seq;
      lastFinishRow[f.resourceId] = &f;
    }

  // 1. action rows of the starts (completed ones carry their finish) and their action->resource rows
  {
    CopyRows actions, links;
    for (const auto& st : e.starts) {
      if (st.kind != TaskKind::Deploy) continue; // dry-run and fact actions are written when they finish
      std::string rvid = model::resourceVersionId(st.resourceId, st.version);
      actions.field(st.actionId).field(env).integer(st.version).field(oneElementArray(rvid));
      actions.field(model::spelling(model::ActionKind::Deploy));
      actions.field(isoTime(st.started));
      auto it = finishOf.find(st.actionId);
      if (it != finishOf.end()) {
        const DeployFinish& f = *it->second;
        actions.field(isoTime(f.finished)).field(joinArrays(messagesOf(st), messagesOf(f)));
        actions.field(f.status).field(f.change);
        actions.field(changesOf(rvid, f.changes)).boolean(f.sendEvent);
      } else {
        actions.null()
            .field(messagesOf(st))
            .field(model::spelling(model::DeployStatus::Deploying))
            .null()
            .field("{}")
            .null();
      }
      actions.endRow();
      links.field(env).field(st.actionId).field(st.resourceId).integer(st.version).endRow();
    }
    actions.send(tx, "resourceaction", kActionColumns);
    links.send(tx, "resourceaction_resource", kLinkColumns);
  }

  // 2. finishes of actions started in an earlier Effects
  {
    CopyRows fin;
    std::unordered_map<std::string, bool> startedHere;
    std::vector<std::string> finishIds;
    for (const auto& st : e.starts) startedHere[st.actionId] = true;
    for (const auto& f : e.finishes) {
      if (startedHere.count(f.actionId)) continue;
      finishIds.push_back(f.actionId);
      fin.field(f.actionId).field(f.status).field(f.change);
      fin.field(changesOf(model::resourceVersionId(f.resourceId, f.version), f.changes));
      fin.field(messagesOf(f)).field(isoTime(f.finished)).boolean(f.sendEvent).endRow();
    }
    if (fin.rows()) {
      tx.exec("CREATE TEMP TABLE inm_action_finish (id uuid, status text, change text, changes jsonb, "
              "messages json, "
              "finished timestamptz, send_event bool) ON COMMIT DROP");
      fin.send(tx, "inm_action_finish",
               {"id", "status", "change", "changes", "messages", "finished", "send_event"});
      // The redundant `= ANY` keeps the action side an index scan of these rows (see the rps update below).
      // The finish's lines are appended to the started row's as text, like joinArrays (both are json
      // arrays, so "[…]" + "[…]" -> "[…,…]"; an empty side is left out), and checked again by the json cast.
      tx.exec_params(
          "UPDATE resourceaction a SET finished = u.finished, status = u.status, change = u.change, "
          "changes = u.changes, messages = CASE WHEN u.messages::text ~ '^\\s*\\[\\s*\\]\\s*$' THEN "
          "a.messages WHEN a.messages::text ~ '^\\s*\\[\\s*\\]\\s*$' THEN u.messages ELSE "
          "(regexp_replace(a.messages::text, '\\]\\s*$', '') || ',' || regexp_replace(u.messages::text, "
          "'^\\s*\\[', ''))::json END, send_event = u.send_event "
          "FROM inm_action_finish u WHERE a.action_id = u.id AND a.action_id = ANY($1::uuid[])",
          pgArray(finishIds));
    }
  }

  // 3. rps result columns from each resource's last finish; is_deploying from its last event
  if (!lastFinishRow.empty()) {
    CopyRows rows;
    std::vector<std::string> purgedIds, finishedIds;
    finishedIds.reserve(lastFinishRow.size());
    for (const auto& [id, fp] : lastFinishRow) {
      const DeployFinish& f = *fp;
      finishedIds.push_back(id);
      auto ls = lastStart.find(id);
      rows.field(id)
          .field(f.deployedHash)
          .integer(f.version)
          .field(toString(f.handlerResult))
          .boolean(f.compliant);
      rows.field(toString(f.blocked)).field(isoTime(f.finished)).field(isoTime(f.started));
      rows.boolean(model::is(f.status, model::DeployStatus::Deployed))
          .boolean(f.removed)
          .boolean(f.stale)
          .field(statusForRps(f.status));
      rows.boolean(ls != lastStart.end() && ls->second > f.seq).endRow();
    }
    for (const auto& f : e.finishes)
      if (model::is(f.status, model::DeployStatus::Deployed) && model::is(f.change, model::Change::Purged))
        purgedIds.push_back(f.resourceId);
    tx.exec(
        "CREATE TEMP TABLE inm_rps_finish (id text, hash text, version int, hr text, compliant bool, blocked "
        "text, "
        "finished timestamptz, started timestamptz, deployed bool, removed bool, stale bool, status text, "
        "deploying bool) ON COMMIT DROP");
    rows.send(tx, "inm_rps_finish",
              {"id", "hash", "version", "hr", "compliant", "blocked", "finished", "started", "deployed",
               "removed", "stale", "status", "deploying"});
    tx.exec_params(
        "UPDATE resource_persistent_state s SET is_deploying = u.deploying, "
        "last_handler_run_at = CASE WHEN u.removed THEN s.last_handler_run_at ELSE u.finished END, "
        "last_handler_run = CASE WHEN u.removed THEN s.last_handler_run ELSE u.hr END, "
        "last_handler_run_compliant = CASE WHEN u.removed OR u.stale THEN s.last_handler_run_compliant "
        "  ELSE u.compliant END, "
        "last_deployed_attribute_hash = CASE WHEN u.removed THEN s.last_deployed_attribute_hash ELSE u.hash "
        "END, "
        "last_deployed_version = CASE WHEN u.removed THEN s.last_deployed_version ELSE u.version END, "
        "last_success = CASE WHEN u.deployed AND NOT u.removed THEN u.started ELSE s.last_success END, "
        "last_produced_events = CASE WHEN u.removed THEN s.last_produced_events ELSE u.finished END, "
        "last_non_deploying_status = CASE WHEN u.removed THEN s.last_non_deploying_status ELSE u.status END, "
        "blocked = CASE WHEN u.removed THEN s.blocked ELSE u.blocked END "
        "FROM inm_rps_finish u WHERE s.environment = $1::uuid AND s.resource_id = u.id "
        // Redundant with the join, but it makes the rps side an index scan of exactly these rows: without it
        // the planner (no statistics on fresh rows) hashed every rps row of the environment for each batch,
        // ~70 ms per batch at 100k resources (EXPLAIN ANALYZE).
        "AND s.resource_id = ANY($2::text[])",
        env, pgArray(finishedIds));
    // A successful purge deletes the resource's facts (§4 Orphans).
    if (!purgedIds.empty())
      tx.exec_params("DELETE FROM parameter WHERE environment = $1::uuid AND source = 'fact' AND resource_id "
                     "= ANY($2::text[])",
                     env, pgArray(purgedIds));
  }
  {
    std::vector<std::string> startIds;
    for (const auto& [id, seq] : lastStart) {
      auto lf = lastFinish.find(id);
      if (lf == lastFinish.end()) startIds.push_back(id); // started, not finished here: deploying
    }
    if (!startIds.empty())
      tx.exec_params("UPDATE resource_persistent_state SET is_deploying = true WHERE environment = $1::uuid "
                     "AND resource_id = ANY($2::text[])",
                     env, pgArray(startIds));
  }

  // 4. blocked changes newer than the resource's last finish (the finish row carried its own blocked value)
  {
    std::unordered_map<std::string, const BlockedWrite*> latest;
    for (const auto& b : e.blocked) {
      auto lf = lastFinish.find(b.resourceId);
      if (lf != lastFinish.end() && lf->second > b.seq) continue;
      auto& slot = latest[b.resourceId];
      if (!slot || slot->seq < b.seq) slot = &b;
    }
    if (!latest.empty()) {
      std::vector<std::string> ids, blocked;
      for (const auto& [id, b] : latest) {
        ids.push_back(id);
        blocked.push_back(toString(b->blocked));
      }
      tx.exec_params(
          "UPDATE resource_persistent_state s SET blocked = u.blocked FROM unnest($2::text[], $3::text[]) "
          "AS u(id, blocked) WHERE s.environment = $1::uuid AND s.resource_id = u.id",
          env, pgArray(ids), pgArray(blocked));
    }
  }
}

} // namespace inm::scheduler::pg

// Delta versions on PostgreSQL (docs/server.md "Delta versions", issue #30): a new version made of its base
// version's stored rows minus the removed and changed ids, copied by one INSERT … SELECT, plus the changed
// rows written by COPY, in one transaction under the same locks as a full put_version (PgVersions.cpp's
// beginVersion/finishVersion). The fields a full put_version derives from the whole version (requires
// closure, undeployable, skipped_for_undeployable, is_suitable_for_partial_compiles, total, agents, the
// `store` action) are derived here from the base's stored fields and the materialised rows. Invariant: a
// delta version's rows and fields equal those a full put_version of the same resources would store; the wire
// and the rows written from it are O(changed), only the set-based copy (and the graph queries a version with
// undefined resources or named sets needs anyway) touch every row.
#include "PgStore.h"

#include <algorithm>
#include <set>

namespace inm::store {

using model::ErrorCode;

namespace {

/// The base must exist, be the environment's latest version apart from the one being stored, and carry the
/// token the exporter remembered: otherwise the delta was computed against other content (Conflict).
void checkBase(pqxx::work& tx, const DeltaVersionInput& d) {
  const std::string& env = d.version.environment;
  const std::string base = std::to_string(d.base);
  pqxx::result row = tx.exec_params(
      "SELECT content_token::text FROM configurationmodel WHERE environment = $1 AND version = $2", env,
      d.base);
  if (row.empty())
    throw StoreFailure{ErrorCode::Conflict, std::string(kDeltaBaseRefused) + " " + base +
                                                " does not exist in environment " + env +
                                                " (deleted, purged or never stored); push the whole version"};
  int64_t latest =
      tx.exec_params("SELECT coalesce(max(version), 0) FROM configurationmodel WHERE environment = "
                     "$1 AND version <> $2",
                     env, d.version.version)[0][0]
          .as<int64_t>();
  if (latest != d.base)
    throw StoreFailure{ErrorCode::Conflict, std::string(kDeltaBaseRefused) + " " + base +
                                                " is no longer the latest version of environment " + env +
                                                " (version " + std::to_string(latest) +
                                                " is); push the whole version"};
  if (row[0][0].c_str() != d.baseToken)
    throw StoreFailure{ErrorCode::Conflict,
                       std::string(kDeltaBaseRefused) + " " + base + " has content token " +
                           row[0][0].c_str() + ", not " + d.baseToken +
                           ": it is not the version the delta was computed against; push "
                           "the whole version"};
}

/// Every removed id must be a resource of the base (the exporter's view of the base is then the server's).
void checkRemoved(pqxx::work& tx, const DeltaVersionInput& d, const std::string& removedJson) {
  if (d.removed.empty()) return;
  pqxx::result missing = tx.exec_params(
      "SELECT x FROM jsonb_array_elements_text($3::jsonb) x WHERE NOT EXISTS (SELECT 1 FROM resource r WHERE "
      "r.environment = $1 AND r.model = $2 AND r.resource_id = x) ORDER BY x COLLATE \"C\" LIMIT 1",
      d.version.environment, d.base, removedJson);
  if (!missing.empty())
    throw StoreFailure{ErrorCode::BadRequest,
                       std::string("removed_resources names ") + missing[0][0].c_str() +
                           ", which is not a resource of the base version " + std::to_string(d.base)};
}

/// The requires graph of the new version is closed: the new and changed rows require only resources of the
/// version, and no kept row requires a removed one (kept rows were closed in the base). BadRequest in
/// put_version's words otherwise.
void checkClosure(pqxx::work& tx, const DeltaVersionInput& d, const std::string& changedJson,
                  const std::string& removedJson) {
  const std::string& env = d.version.environment;
  int64_t v = d.version.version;
  pqxx::result open;
  if (!d.version.resources.empty())
    open = tx.exec_params(
        "SELECT r.resource_id, q FROM resource r CROSS JOIN LATERAL "
        "jsonb_array_elements_text(r.attributes->'requires') q WHERE r.environment = $1 AND r.model = $2 AND "
        "r.resource_id IN (SELECT jsonb_array_elements_text($3::jsonb)) AND NOT EXISTS (SELECT 1 FROM "
        "resource t WHERE t.environment = $1 AND t.model = $2 AND t.resource_id = q) "
        "ORDER BY r.resource_id COLLATE \"C\", q COLLATE \"C\" LIMIT 1",
        env, v, changedJson);
  if (open.empty() && !d.removed.empty())
    open =
        tx.exec_params("SELECT r.resource_id, q FROM resource r CROSS JOIN LATERAL "
                       "jsonb_array_elements_text(r.attributes->'requires') q WHERE r.environment = $1 AND "
                       "r.model = $2 AND q IN (SELECT jsonb_array_elements_text($3::jsonb)) "
                       "ORDER BY r.resource_id COLLATE \"C\", q COLLATE \"C\" LIMIT 1",
                       env, v, removedJson);
  if (!open.empty())
    throw StoreFailure{ErrorCode::BadRequest, std::string(open[0][0].c_str()) + " requires " +
                                                  open[0][1].c_str() + ", which is not in this version"};
}

} // namespace

llvm::Error PgStore::putDeltaVersion(const DeltaVersionInput& d) {
  return withTxVoid(db_, "storing a delta version", [&](pqxx::work& tx) {
    const VersionInput& in = d.version;
    const std::string& env = in.environment;
    const int64_t v = in.version;
    beginVersion(tx, in); // locks, reserved/defined checks, the configurationmodel row (fields updated below)
    checkBase(tx, d);
    std::vector<std::string> changed;
    changed.reserve(in.resources.size());
    for (const ResourceRow& r : in.resources) changed.push_back(r.resourceId);
    const std::string changedJson = nlohmann::json(changed).dump();
    const std::string removedJson = nlohmann::json(d.removed).dump();
    checkRemoved(tx, d, removedJson);

    // The kept rows: one set-based copy in primary-key order (rightmost-leaf inserts), counted as inserted.
    nlohmann::json dropped = nlohmann::json(d.removed);
    for (const std::string& id : changed) dropped.push_back(id);
    pqxx::result kept = tx.exec_params(
        "WITH ins AS (INSERT INTO resource (environment, model, resource_id, resource_type, agent, "
        "resource_id_value, attributes, attribute_hash, is_undefined, resource_set) SELECT environment, $2, "
        "resource_id, resource_type, agent, resource_id_value, attributes, attribute_hash, is_undefined, "
        "resource_set FROM resource WHERE environment = $1 AND model = $3 AND resource_id NOT IN (SELECT "
        "jsonb_array_elements_text($4::jsonb)) ORDER BY resource_id RETURNING resource_set IS NOT NULL AS "
        "in_set) SELECT count(*), count(*) FILTER (WHERE in_set) FROM ins",
        env, v, d.base, dropped.dump());
    int64_t total = kept[0][0].as<int64_t>() + int64_t(in.resources.size());
    int64_t inSets = kept[0][1].as<int64_t>();
    // The new and changed rows (ids unique: the service checked; a clash with a kept row cannot happen, as
    // the copy left every id of `resources` out).
    copyResources(tx, env, v, in.resources);
    for (const ResourceRow& r : in.resources)
      if (r.resourceSet) ++inSets;
    checkClosure(tx, d, changedJson, removedJson);

    // undeployable: the base's, without the ids this delta drops or replaces, plus the new undefined ones.
    VersionInput out = in; // the version fields for finishVersion, with the derived ones
    out.resources.clear();
    out.undeployable.clear();
    pqxx::result baseRow = tx.exec_params(
        "SELECT to_json(undeployable)::text FROM configurationmodel WHERE environment = $1 AND version = $2",
        env, d.base);
    std::set<std::string> gone(d.removed.begin(), d.removed.end());
    gone.insert(changed.begin(), changed.end());
    for (const auto& id : nlohmann::json::parse(baseRow[0][0].c_str()))
      if (!gone.count(id.get<std::string>())) out.undeployable.push_back(id.get<std::string>());
    for (const ResourceRow& r : in.resources)
      if (r.undefined) out.undeployable.push_back(r.resourceId);
    std::sort(out.undeployable.begin(), out.undeployable.end());
    // The graph queries join the fresh rows: statistics first for a large version (as putVersionStreamed).
    bool joins = !out.undeployable.empty() || inSets > 0;
    if (joins && total > 2000) tx.exec("ANALYZE resource (environment, model, resource_id)");
    out.skippedForUndeployable.clear();
    if (!out.undeployable.empty()) out.skippedForUndeployable = skippedForUndeployable(tx, env, v);
    out.suitableForPartial = inSets == 0 || suitableForPartial(tx, env, v);
    // Agents: the kept rows' agents exist since the base was stored (retention keeps an agent while a row of
    // any version names it); only the changed rows can bring new ones.
    std::set<std::string> agents;
    for (const ResourceRow& r : in.resources) agents.insert(r.agent);
    out.agents.assign(agents.begin(), agents.end());
    tx.exec_params("UPDATE configurationmodel SET total = $3, is_suitable_for_partial_compiles = $4, "
                   "undeployable = ARRAY(SELECT jsonb_array_elements_text($5::jsonb)), "
                   "skipped_for_undeployable = ARRAY(SELECT jsonb_array_elements_text($6::jsonb)) "
                   "WHERE environment = $1 AND version = $2",
                   env, v, total, out.suitableForPartial, nlohmann::json(out.undeployable).dump(),
                   nlohmann::json(out.skippedForUndeployable).dump());
    finishVersion(tx, out);
  });
}

llvm::Expected<nlohmann::json> PgStore::deltaBase(const std::string& env) {
  return withTx<nlohmann::json>(db_, "reading the delta base", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    pqxx::result r = tx.exec_params("SELECT version, content_token::text FROM configurationmodel WHERE "
                                    "environment = $1 ORDER BY version DESC LIMIT 1",
                                    env);
    if (r.empty()) return nlohmann::json{{"version", 0}, {"token", nullptr}};
    return nlohmann::json{{"version", r[0][0].as<int64_t>()}, {"token", r[0][1].c_str()}};
  });
}

} // namespace inm::store

// Action queries, the handler helpers of orchestrator.md §6.6, the compliance report, the scheduler's status
// and the revocable-token registry on PostgreSQL (see PgStore.h). Filters are bound parameters; an empty
// string means "no filter", so each query is one fixed statement.
#include "PgStore.h"
#include "model/Ids.h"

namespace inm::store {

using model::ErrorCode;

namespace {

nlohmann::json parseFirst(const pqxx::result& r) { return nlohmann::json::parse(r[0][0].c_str()); }

/// One resourceaction row `ra` as the API's ResourceAction object.
constexpr const char* kActionJson =
    "json_build_object('action_id', ra.action_id, 'environment', ra.environment, 'version', ra.version, "
    "'resource_version_ids', to_json(ra.resource_version_ids), 'action', ra.action, 'started', ra.started, "
    "'finished', ra.finished, 'status', ra.status, 'messages', ra.messages, 'change', ra.change, 'changes', "
    "ra.changes, 'send_event', ra.send_event)";

} // namespace

llvm::Expected<nlohmann::json> PgStore::queryActions(const std::string& env, const ActionQuery& q) {
  return withTx<nlohmann::json>(db_, "querying resource actions", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    // A page after first_timestamp is selected oldest first (the rows nearest to it), then shown newest
    // first.
    bool forward = !q.firstTimestamp.empty();
    std::string sql =
        std::string(
            "SELECT coalesce(json_agg(x.o ORDER BY x.started DESC, x.aid DESC), '[]')::text FROM (SELECT ") +
        kActionJson +
        " AS o, ra.started, ra.action_id::text AS aid FROM resourceaction ra WHERE ra.environment = $1 "
        "AND (($2 = '' AND $3 = '' AND $4 = '') OR EXISTS (SELECT 1 FROM resourceaction_resource rar JOIN "
        "resource r "
        "ON r.environment = rar.environment AND r.resource_id = rar.resource_id AND r.model = "
        "rar.resource_version "
        "WHERE rar.environment = $1 AND rar.resource_action_id = ra.action_id AND ($2 = '' OR "
        "r.resource_type = $2) "
        "AND ($3 = '' OR r.agent = $3) AND ($4 = '' OR r.attributes->>$4 = $5)) "
        // a `store` action covers its version's resources (no resourceaction_resource rows, migration 004)
        "OR (ra.action = 'store' AND EXISTS (SELECT 1 FROM resource r WHERE r.environment = $1 AND r.model = "
        "ra.version AND ($2 = '' OR r.resource_type = $2) AND ($3 = '' OR r.agent = $3) AND ($4 = '' OR "
        "r.attributes->>$4 = $5)))) "
        "AND ($6 = '' OR EXISTS (SELECT 1 FROM json_array_elements(ra.messages) m WHERE upper(m->>'level') "
        "= $6)) "
        "AND coalesce(ra.change, '') NOT IN (SELECT jsonb_array_elements_text($7::jsonb)) "
        "AND ($8 = '' OR ra.started > NULLIF($8, '')::timestamptz OR ($10 <> '' AND ra.started = NULLIF($8, "
        "'')::timestamptz AND "
        "ra.action_id::text > $10)) "
        "AND ($9 = '' OR ra.started < NULLIF($9, '')::timestamptz OR ($10 <> '' AND ra.started = NULLIF($9, "
        "'')::timestamptz AND "
        "ra.action_id::text < $10)) ORDER BY ra.started " +
        (forward ? "ASC, ra.action_id ASC" : "DESC, ra.action_id DESC") + " LIMIT $11) x";
    return parseFirst(tx.exec_params(sql, env, q.resourceType, q.agent, q.attribute, q.attributeValue,
                                     q.logSeverity, nlohmann::json(q.excludeChanges).dump(), q.firstTimestamp,
                                     q.lastTimestamp, q.actionId, q.limit));
  });
}

llvm::Expected<nlohmann::json> PgStore::dependencyEvents(const std::string& env, const std::string& rid,
                                                         int64_t version) {
  return withTx<nlohmann::json>(db_, "reading dependency events", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    pqxx::result res = tx.exec_params(
        "SELECT coalesce(attributes->'requires', '[]'::jsonb)::text FROM resource WHERE environment = $1 AND "
        "resource_id = $2 AND model = $3",
        env, rid, version);
    if (res.empty())
      throw StoreFailure{ErrorCode::NotFound,
                         "resource " + model::resourceVersionId(rid, version) + " not found"};
    return parseFirst(tx.exec_params(
        std::string(
            "WITH ls AS (SELECT (SELECT last_success FROM resource_persistent_state WHERE environment = $1 "
            "AND resource_id = $2) AS t) SELECT coalesce(json_object_agg(q.id, coalesce((SELECT json_agg(") +
            kActionJson +
            " ORDER BY ra.started DESC) FROM resourceaction_resource rar JOIN resourceaction ra ON "
            "ra.action_id = "
            "rar.resource_action_id, ls WHERE rar.environment = $1 AND rar.resource_id = q.id AND ra.action "
            "= 'deploy' "
            "AND ra.finished IS NOT NULL AND (ls.t IS NULL OR ra.started > ls.t)), '[]'::json)), '{}')::text "
            "FROM jsonb_array_elements_text($3::jsonb) q(id)",
        env, rid, std::string(res[0][0].c_str())));
  });
}

llvm::Expected<nlohmann::json> PgStore::complianceReport(const std::string& env,
                                                         const std::vector<std::string>& rids) {
  return withTx<nlohmann::json>(db_, "building the compliance report", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    nlohmann::json out = parseFirst(tx.exec_params(
        std::string(
            "SELECT coalesce(json_object_agg(x.resource_id, x.o), '{}')::text FROM (SELECT DISTINCT ON "
            "(r.resource_id) r.resource_id, json_build_object('resource_id', r.resource_id, 'version', "
            "r.model, "
            "'status', ") +
            kStatusSql +
            ", 'compliance', CASE WHEN rps.orphaned_after IS NOT NULL THEN 'orphaned' "
            "WHEN rps.is_undefined OR rps.blocked = 'BLOCKED' THEN 'undefined' "
            "WHEN rps.last_deployed_attribute_hash IS NULL OR rps.current_intent_attribute_hash IS DISTINCT "
            "FROM "
            "rps.last_deployed_attribute_hash THEN 'has_update' "
            "WHEN rps.last_handler_run_compliant IS FALSE OR rps.last_non_deploying_status = 'non_compliant' "
            "THEN "
            "'non_compliant' WHEN rps.last_handler_run = 'SUCCESSFUL' THEN 'compliant' ELSE 'non_compliant' "
            "END, "
            "'report_only', coalesce(r.attributes->'report_only' = 'true'::jsonb, false), 'last_deploy', "
            "rps.last_handler_run_at, 'last_deployed_version', rps.last_deployed_version, "
            "'last_handler_run', "
            "rps.last_handler_run, 'diff', rps.non_compliant_diff) AS o FROM resource_persistent_state rps "
            "JOIN resource r "
            "ON r.environment = rps.environment AND r.resource_id = rps.resource_id JOIN configurationmodel "
            "cm ON "
            "cm.environment = r.environment AND cm.version = r.model AND cm.released WHERE rps.environment = "
            "$1 AND "
            "($2 = '[]' OR rps.resource_id IN (SELECT jsonb_array_elements_text($2::jsonb))) "
            "ORDER BY r.resource_id, r.model DESC) x",
        env, nlohmann::json(rids).dump()));
    for (const auto& rid : rids)
      if (!out.contains(rid))
        throw StoreFailure{ErrorCode::NotFound,
                           "resource " + rid + " was never released in this environment"};
    return out;
  });
}

llvm::Expected<nlohmann::json> PgStore::schedulerStatus(const std::string& env) {
  return withTx<nlohmann::json>(db_, "reading the scheduler status", [&](pqxx::work& tx) {
    bool halted = requireEnvironment(tx, env);
    nlohmann::json out = parseFirst(tx.exec_params(
        std::string(
            "SELECT json_build_object("
            "'last_processed_model_version', (SELECT last_processed_model_version FROM scheduler WHERE "
            "environment = $1), "
            "'latest_released_version', (SELECT max(version) FROM configurationmodel WHERE environment = $1 "
            "AND released), "
            "'pending_requests', (SELECT count(*) FROM scheduler_request WHERE environment = $1), "
            "'oldest_pending_request', (SELECT min(created) FROM scheduler_request WHERE environment = $1), "
            "'pending_by_kind', (SELECT coalesce(json_object_agg(kind, n), '{}') FROM (SELECT kind, count(*) "
            "AS n "
            "FROM scheduler_request WHERE environment = $1 GROUP BY kind) k), "
            "'resource_counts', (SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT ") +
            kStatusSql +
            " AS status, count(*) AS n FROM resource_persistent_state rps WHERE rps.environment = $1 GROUP "
            "BY 1) s), "
            "'paused_agents', (SELECT count(*) FROM agent WHERE environment = $1 AND paused AND name <> "
            "'$__scheduler'))::text",
        env));
    out["halted"] = halted;
    return out;
  });
}

llvm::Error PgStore::recordToken(const std::string& jti, const std::string& env,
                                 const std::vector<std::string>& clientTypes, int64_t expireSeconds) {
  return withTxVoid(db_, "recording a token", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    tx.exec_params(
        "INSERT INTO token (jti, environment, client_types, expire) VALUES ($1, $2, "
        "ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), CASE WHEN $4::bigint > 0 THEN now() + "
        "make_interval(secs => $4::bigint::double precision) END)",
        jti, env, nlohmann::json(clientTypes).dump(), expireSeconds);
  });
}

llvm::Expected<std::optional<bool>> PgStore::tokenRevoked(const std::string& jti) {
  return withTx<std::optional<bool>>(db_, "checking a token", [&](pqxx::work& tx) -> std::optional<bool> {
    pqxx::result r = tx.exec_params("SELECT revoked FROM token WHERE jti = $1", jti);
    if (r.empty()) return std::nullopt;
    return r[0][0].as<bool>();
  });
}

llvm::Error PgStore::revokeToken(const std::string& env, const std::string& jti) {
  return withTxVoid(db_, "revoking a token", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    if (tx.exec_params("UPDATE token SET revoked = true WHERE environment = $1 AND jti = $2", env, jti)
            .affected_rows() == 0)
      throw StoreFailure{ErrorCode::NotFound, "token " + jti + " not found in environment " + env};
  });
}

llvm::Expected<nlohmann::json> PgStore::tokens(const std::string& env) {
  return withTx<nlohmann::json>(db_, "listing tokens", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return parseFirst(tx.exec_params(
        "SELECT coalesce(json_agg(json_build_object('jti', jti, 'environment', environment, 'client_types', "
        "to_json(client_types), 'issued', issued, 'expire', expire, 'revoked', revoked) ORDER BY issued "
        "DESC, jti), "
        "'[]')::text FROM token WHERE environment = $1",
        env));
  });
}

} // namespace inm::store

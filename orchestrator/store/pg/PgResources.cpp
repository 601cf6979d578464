// Resources, parameters/facts, agents and dry runs on PostgreSQL (see PgStore.h). The current state of a
// resource is its resource_persistent_state row (created at release, owned by the scheduler afterwards)
// joined with the resource row of the newest released version holding it; its public status is kStatusSql
// (§5.2).
#include "PgStore.h"
#include "model/Ids.h"

#include <llvm/Support/ConvertUTF.h>

namespace inm::store {

using model::ErrorCode;

namespace {

nlohmann::json parseFirst(const pqxx::result& r) { return nlohmann::json::parse(r[0][0].c_str()); }

std::string latestSql(bool withAttributes, const char* extraWhere) {
  return std::string(
             "SELECT coalesce(json_agg(x ORDER BY x.resource_id), '[]')::text FROM (SELECT DISTINCT ON "
             "(r.resource_id) r.resource_id, r.resource_type, r.agent, r.resource_id_value, "
             "coalesce(r.attributes->'requires', '[]'::jsonb) AS requires, ") +
         kStatusSql + " AS status, r.model, rps.last_handler_run_at AS last_deploy, r.is_undefined" +
         (withAttributes ? ", r.attributes" : "") +
         " FROM resource_persistent_state rps JOIN resource r ON r.environment = rps.environment AND "
         "r.resource_id = rps.resource_id JOIN configurationmodel cm ON cm.environment = r.environment AND "
         "cm.version = r.model AND cm.released WHERE rps.environment = $1 " +
         extraWhere + " ORDER BY r.resource_id, r.model DESC) x";
}

} // namespace

namespace {

/// Bound parameters of one statement, numbered as they are added.
struct Params {
  std::vector<std::string> values;
  std::string add(std::string v) {
    values.push_back(std::move(v));
    return "$" + std::to_string(values.size());
  }
};

/// Whether `s` can be a bound text parameter as it is: valid UTF-8 without NUL (else PostgreSQL refuses it or
/// libpq cuts it at the NUL).
bool plainText(const std::string& s) {
  if (s.find('\0') != std::string::npos) return false;
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(s.data());
  return llvm::isLegalUTF8String(&begin, begin + s.size());
}

/// `s` as the text of a bytea parameter (`\x` and hex digits).
std::string byteaText(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\\x";
  for (unsigned char c : s) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

/// SQL for "`column` contains `needle`" with the byte semantics of std::string::find: strpos for plain text,
/// a bytea search for a needle PostgreSQL text cannot hold.
std::string containsSql(Params& p, const std::string& column, const std::string& needle) {
  if (plainText(needle)) return "strpos(" + column + ", " + p.add(needle) + ") > 0";
  return "position(" + p.add(byteaText(needle)) + "::bytea in convert_to(" + column + ", 'UTF8')) > 0";
}

/// A value compared in byte order with text columns: `text` is the operand for text, `bytes` for bytea (used
/// when the value is not plain text).
struct Operand {
  bool plain = true;
  std::string text;
};

Operand operand(Params& p, const std::string& v) {
  if (plainText(v)) return {true, p.add(v) + "::text COLLATE \"C\""};
  return {false, p.add(byteaText(v)) + "::bytea"};
}

/// `column op value` in byte order.
std::string compareSql(const std::string& column, const char* op, const Operand& value) {
  if (value.plain) return column + " COLLATE \"C\" " + op + " " + value.text;
  return "convert_to(" + column + ", 'UTF8') " + op + " " + value.text;
}

} // namespace

llvm::Expected<nlohmann::json> PgStore::resourcePage(const std::string& env, const ResourcePageQuery& q) {
  return withTx<nlohmann::json>(db_, "listing resources", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    // The join below hashes the latest released version's ids (100k: ~8 MB): in memory, not in batches on
    // disk; and no JIT compilation, whose start-up costs more than this statement.
    tx.exec("SET LOCAL work_mem = '64MB'");
    tx.exec("SET LOCAL jit = off");
    Params p;
    const std::string e = p.add(env);
    const std::string& sortField = q.sortField;
    if (sortField != "resource_type" && sortField != "agent" && sortField != "resource_id_value" &&
        sortField != "status")
      throw StoreFailure{ErrorCode::BadRequest, "cannot sort resources on '" + sortField + "'"};
    // Listed: the rps rows with a resource row in a released version. Most are in the latest released version
    // (one hash join over its ids); only the others are looked up among the older released versions.
    std::string base =
        std::string("SELECT rps.resource_id, rps.resource_type, rps.agent, rps.resource_id_value, ") +
        kStatusSql +
        "::text AS status FROM resource_persistent_state rps LEFT JOIN resource l ON l.environment = "
        "rps.environment AND l.model = (SELECT max(version) FROM configurationmodel WHERE environment = " +
        e + " AND released) AND l.resource_id = rps.resource_id WHERE rps.environment = " + e +
        " AND (l.resource_id IS NOT NULL OR EXISTS (SELECT 1 FROM resource r JOIN configurationmodel cm ON "
        "cm.environment = r.environment AND cm.version = r.model AND cm.released WHERE r.environment = " +
        e + " AND r.resource_id = rps.resource_id))";
    std::vector<std::string> where;
    for (const auto& [field, values] : q.substrings) {
      if (field != "resource_type" && field != "agent" && field != "resource_id_value")
        throw StoreFailure{ErrorCode::BadRequest, "cannot filter resources on '" + field + "'"};
      std::string any;
      for (const auto& v : values) any += (any.empty() ? "" : " OR ") + containsSql(p, "b." + field, v);
      where.push_back("(" + (any.empty() ? std::string("false") : any) + ")");
    }
    if (!q.statusIn.empty()) {
      std::string any;
      for (const auto& v : q.statusIn)
        any += (any.empty() ? "" : " OR ") + (plainText(v) ? "b.status = " + p.add(v) : std::string("false"));
      where.push_back("(" + any + ")");
    } else {
      where.push_back("b.status <> 'orphaned'"); // orphans only when asked for by status
    }
    for (const auto& v : q.statusOut)
      if (plainText(v)) where.push_back("b.status <> " + p.add(v));
    std::string filtered = "SELECT b.resource_id AS id, b." + sortField + " AS v FROM (" + base + ") b";
    for (size_t i = 0; i < where.size(); ++i) filtered += (i ? " AND " : " WHERE ") + where[i];

    // The cursor: rows strictly past (value, id) in the listing's order (forward), or strictly before it.
    const bool asc = q.ascending;
    std::string known = "true", past = "true", cursorCte;
    if (q.direction != 0) {
      const char* op = (q.direction > 0) == asc ? ">" : "<";
      const char* idOp = q.direction > 0 ? ">" : "<";
      std::optional<Operand> cid;
      if (q.cursorId) cid = operand(p, *q.cursorId);
      std::optional<Operand> given;
      if (q.cursorValue) given = operand(p, *q.cursorValue);
      if (given && !given->plain) {
        // A value PostgreSQL text cannot hold never equals a stored one: the bytes alone decide.
        past = compareSql("f.v", op, *given);
        cursorCte = ", c AS (SELECT NULL::text AS v)";
      } else {
        if (!given && !cid)
          throw StoreFailure{ErrorCode::BadRequest, "a cursor needs a value or a resource id"};
        // Without a value, the cursor row's own, from the listing itself (status cannot be read from an id).
        std::string value =
            given ? given->text : "(SELECT v FROM f WHERE " + compareSql("id", "=", *cid) + ")";
        cursorCte = ", c AS (SELECT " + value + " AS v)";
        known = "(SELECT v IS NOT NULL FROM c)";
        past = "f.v COLLATE \"C\" " + std::string(op) + " c.v COLLATE \"C\"";
        if (cid) past = "(" + past + " OR (f.v = c.v AND " + compareSql("f.id", idOp, *cid) + "))";
      }
    }
    const char* dir = asc ? "ASC" : "DESC";
    const char* rdir = asc ? "DESC" : "ASC";
    bool backward = q.direction < 0;
    std::string order = backward ? std::string("f.v COLLATE \"C\" ") + rdir + ", f.id COLLATE \"C\" DESC"
                                 : std::string("f.v COLLATE \"C\" ") + dir + ", f.id COLLATE \"C\" ASC";
    std::string from = q.direction != 0 ? "f, c WHERE " + past : std::string("f");
    std::string limit = p.add(std::to_string(q.limit));
    std::string sql =
        "WITH f AS MATERIALIZED (" + filtered + ")" + cursorCte +
        " SELECT json_build_object('total', (SELECT count(*) FROM f), 'past', (SELECT count(*) FROM " + from +
        "), 'cursor_known', " + known +
        ", 'rows', (SELECT coalesce(json_agg(json_build_object('resource_id', rps.resource_id, "
        "'resource_type', "
        "rps.resource_type, 'agent', rps.agent, 'resource_id_value', rps.resource_id_value, 'status', " +
        kStatusSql +
        ", 'model', x.model, 'requires', x.requires) ORDER BY pg.n), '[]') FROM (SELECT f.id, "
        "row_number() OVER () AS n FROM (SELECT f.id FROM " +
        from + " ORDER BY " + order + " LIMIT " + limit +
        "::bigint) f) pg JOIN resource_persistent_state rps ON rps.environment = " + e +
        " AND rps.resource_id = pg.id CROSS JOIN LATERAL (SELECT r.model, coalesce(r.attributes->'requires', "
        "'[]'::jsonb) AS requires FROM resource r JOIN configurationmodel cm ON cm.environment = "
        "r.environment "
        "AND cm.version = r.model AND cm.released WHERE r.environment = " +
        e + " AND r.resource_id = pg.id ORDER BY r.model DESC LIMIT 1) x)";
    if (q.deploySummary)
      sql += ", 'summary', (SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT b.status, "
             "count(*) AS "
             "n FROM (" +
             base + ") b WHERE b.status <> 'orphaned' GROUP BY b.status) s)";
    sql += ")::text";
    return parseFirst(tx.exec_params(sql, pqxx::prepare::make_dynamic_params(p.values)));
  });
}

llvm::Expected<nlohmann::json> PgStore::resourceDetails(const std::string& env, const std::string& rid) {
  return withTx<nlohmann::json>(db_, "reading a resource", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    nlohmann::json rows = parseFirst(tx.exec_params(latestSql(true, "AND rps.resource_id = $2"), env, rid));
    if (rows.empty()) throw StoreFailure{ErrorCode::NotFound, "resource " + rid + " not found"};
    nlohmann::json out = rows[0];
    pqxx::result first = tx.exec_params(
        "SELECT r.model, cm.date FROM resource r JOIN configurationmodel cm ON cm.environment = "
        "r.environment AND "
        "cm.version = r.model WHERE r.environment = $1 AND r.resource_id = $2 ORDER BY r.model LIMIT 1",
        env, rid);
    out["first_generated_version"] = first[0][0].as<int64_t>();
    out["first_generated_time"] = first[0][1].c_str();
    pqxx::result req = tx.exec_params(
        std::string(
            "SELECT coalesce(json_object_agg(q.id, coalesce(s.status, 'available')), '{}')::text FROM "
            "jsonb_array_elements_text($2::jsonb) q(id) LEFT JOIN (SELECT rps.resource_id, ") +
            kStatusSql +
            " AS status FROM resource_persistent_state rps WHERE rps.environment = $1) s ON s.resource_id = "
            "q.id",
        env, out["requires"].dump());
    out["requires_status"] = parseFirst(req);
    return out;
  });
}

llvm::Expected<nlohmann::json> PgStore::resourceHistory(const std::string& env, const std::string& rid) {
  return withTx<nlohmann::json>(db_, "reading resource history", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return parseFirst(
        tx.exec_params("SELECT coalesce(json_agg(json_build_object('resource_id', x.resource_id, 'date', "
                       "x.date, 'attribute_hash', "
                       "x.attribute_hash, 'attributes', x.attributes, 'requires', "
                       "coalesce(x.attributes->'requires', '[]'::jsonb), "
                       "'version', x.model) ORDER BY x.model DESC), '[]')::text FROM (SELECT r.resource_id, "
                       "r.model, r.attribute_hash, "
                       "r.attributes, cm.date, lag(r.attribute_hash) OVER (ORDER BY r.model) AS previous "
                       "FROM resource r JOIN "
                       "configurationmodel cm ON cm.environment = r.environment AND cm.version = r.model "
                       "WHERE r.environment = $1 "
                       "AND r.resource_id = $2) x WHERE x.previous IS NULL OR x.previous <> x.attribute_hash",
                       env, rid));
  });
}

llvm::Expected<nlohmann::json> PgStore::resourceActions(const std::string& env, const std::string& rid) {
  return withTx<nlohmann::json>(db_, "reading resource actions", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    // Actions listing the resource in resourceaction_resource, plus the `store` actions of the versions that
    // hold it (they have no such rows, migration 004): through its resource row while the version exists,
    // through resource_version_ids once it was deleted.
    return parseFirst(tx.exec_params(
        std::string(
            "SELECT coalesce(json_agg(json_build_object('action_id', ra.action_id, 'action', ra.action, "
            "'started', ra.started, 'finished', ra.finished, 'status', ra.status, 'messages', ra.messages, "
            "'change', ra.change, 'changes', ra.changes, 'version', x.version, 'send_event', ra.send_event) "
            "ORDER BY ra.started DESC), '[]')::text FROM (SELECT rar.resource_action_id AS aid, "
            "rar.resource_version AS version FROM resourceaction_resource rar WHERE rar.environment = $1 AND "
            "rar.resource_id = $2 UNION ALL SELECT s.action_id, s.version FROM resourceaction s WHERE "
            "s.environment = $1 AND s.action = 'store' AND (EXISTS (SELECT 1 FROM resource r WHERE "
            "r.environment = $1 AND r.model = s.version AND r.resource_id = $2) OR (NOT EXISTS (SELECT 1 "
            "FROM "
            "configurationmodel cm WHERE cm.environment = $1 AND cm.version = s.version) AND ") +
            model::sqlResourceVersionId("$2", "s.version") +
            " = ANY (s.resource_version_ids)))) x JOIN resourceaction ra ON ra.action_id = x.aid",
        env, rid));
  });
}

namespace {
/// One `parameter` row as its JSON object (the shape of every parameter answer).
constexpr const char* kParameterJson =
    "json_build_object('id', id, 'name', name, 'value', value, 'source', source, 'resource_id', resource_id, "
    "'updated', updated, 'metadata', metadata, 'expires', expires, 'environment', environment)";
} // namespace

llvm::Expected<nlohmann::json> PgStore::parameters(const std::string& env,
                                                   const std::optional<std::string>& rid) {
  return withTx<nlohmann::json>(db_, "reading parameters", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return parseFirst(tx.exec_params(
        std::string("SELECT coalesce(json_agg(") + kParameterJson +
            " ORDER BY resource_id, name), '[]')::text FROM parameter WHERE environment = $1 AND "
            "($2 = '*' OR resource_id = $2)",
        env, rid ? *rid : std::string("*")));
  });
}

llvm::Expected<nlohmann::json> PgStore::parameterFreshness(const std::string& env, const std::string& name,
                                                           const std::string& rid, int64_t expireSeconds) {
  return withTx<nlohmann::json>(db_, "reading a parameter", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return parseFirst(tx.exec_params(
        std::string("WITH p AS (SELECT * FROM parameter WHERE environment = $1 AND name = $2 AND "
                    "resource_id = $3) SELECT json_build_object('parameter', (SELECT ") +
            kParameterJson +
            " FROM p), 'fresh', coalesce((SELECT NOT expires OR updated > now() - make_interval(secs => $4) "
            "FROM p), false))::text",
        env, name, rid, double(expireSeconds)));
  });
}

llvm::Error PgStore::requestFacts(const std::string& env, const std::vector<std::string>& resourceIds) {
  return withTxVoid(db_, "requesting facts", [&](pqxx::work& tx) {
    for (const auto& rid : resourceIds)
      insertSchedulerRequest(tx, env, model::SchedulerRequestKind::GetFact, {{"resource_id", rid}});
  });
}

llvm::Expected<nlohmann::json> PgStore::factsToRenew(int64_t olderThanSeconds) {
  return withTx<nlohmann::json>(db_, "finding facts to renew", [&](pqxx::work& tx) {
    return parseFirst(tx.exec_params(
        "SELECT coalesce(json_agg(json_build_array(environment, resource_id) ORDER BY environment, "
        "resource_id), '[]')::text FROM (SELECT environment, resource_id FROM parameter WHERE source = "
        "'fact' "
        "AND expires AND resource_id <> '' AND updated <= now() - make_interval(secs => $1) UNION SELECT "
        "environment, resource_id FROM unknownparameter WHERE NOT resolved AND resource_id <> '') r WHERE "
        "environment IN (SELECT id FROM environment WHERE NOT halted)",
        double(olderThanSeconds)));
  });
}

llvm::Expected<nlohmann::json> PgStore::setParameter(const std::string& env, const nlohmann::json& p) {
  return withTx<nlohmann::json>(db_, "setting a parameter", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    std::string name = p.at("name"), rid = p.value("resource_id", "");
    pqxx::result r = tx.exec_params(
        "INSERT INTO parameter (id, environment, name, value, source, resource_id, metadata, expires) VALUES "
        "(gen_random_uuid(), $1, $2, $3, $4, $5, $6::jsonb, $7) ON CONFLICT (environment, name, resource_id) "
        "DO UPDATE "
        "SET value = EXCLUDED.value, source = EXCLUDED.source, metadata = EXCLUDED.metadata, expires = "
        "EXCLUDED.expires, updated = now() RETURNING json_build_object('id', id, 'name', name, 'value', "
        "value, "
        "'source', source, 'resource_id', resource_id, 'updated', updated, 'metadata', metadata, 'expires', "
        "expires, "
        "'environment', environment)::text",
        env, name, p.value("value", ""), p.value("source", "user"), rid,
        p.value("metadata", nlohmann::json()).dump(),
        p.value("expires", p.value("source", "user") == "fact"));
    // A value for an unknown resolves it (orchestrator.md §3.5).
    tx.exec_params("UPDATE unknownparameter SET resolved = true WHERE environment = $1 AND name = $2 AND "
                   "resource_id = $3",
                   env, name, rid);
    return parseFirst(r);
  });
}

llvm::Error PgStore::deleteParameter(const std::string& env, const std::string& name,
                                     const std::string& rid) {
  return withTxVoid(db_, "deleting a parameter", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    if (tx.exec_params("DELETE FROM parameter WHERE environment = $1 AND name = $2 AND resource_id = $3", env,
                       name, rid)
            .affected_rows() == 0)
      throw StoreFailure{ErrorCode::NotFound,
                         "parameter " + name + (rid.empty() ? "" : " of " + rid) + " not found"};
  });
}

llvm::Expected<nlohmann::json> PgStore::agents(const std::string& env) {
  return withTx<nlohmann::json>(db_, "listing agents", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return parseFirst(tx.exec_params(
        "SELECT coalesce(json_agg(json_build_object('name', a.name, 'environment', a.environment, 'paused', "
        "a.paused, "
        "'last_failover', a.last_failover, 'unpause_on_resume', a.unpause_on_resume, "
        // external agents (migration 003): who claimed it, and whether that session is live
        "'process_name', x.holder, 'external', x.name IS NOT NULL, 'connected', coalesce(x.connected, "
        "false), "
        // failover (migration 010): the processes waiting to take over, in promotion order
        "'standbys', coalesce(x.standbys, '[]'::jsonb)) "
        "ORDER BY a.name), '[]')::text "
        "FROM agent a LEFT JOIN external_agent x ON x.environment = a.environment AND x.name = a.name "
        "WHERE a.environment = $1",
        env));
  });
}

llvm::Error PgStore::agentAction(const std::string& env, const std::optional<std::string>& name,
                                 const std::string& action) {
  return withTxVoid(db_, "changing agents", [&](pqxx::work& tx) {
    bool halted = requireEnvironment(tx, env);
    std::string set;
    if (action == "pause" || action == "unpause") {
      if (halted)
        throw StoreFailure{ErrorCode::Conflict,
                           "the environment is halted: agents cannot be " + action + "d until it is resumed"};
      set = action == "pause" ? "paused = true" : "paused = false";
    } else if (action == "keep_paused_on_resume") {
      set = "unpause_on_resume = false";
    } else if (action == "unpause_on_resume") {
      set = "unpause_on_resume = true";
    } else {
      throw StoreFailure{ErrorCode::BadRequest,
                         "unknown agent action '" + action +
                             "' (pause, unpause, keep_paused_on_resume, unpause_on_resume)"};
    }
    pqxx::result r = tx.exec_params("UPDATE agent SET " + set +
                                        " WHERE environment = $1 AND ($2 = '' OR name = $2) "
                                        "AND ($2 <> '' OR name <> '$__scheduler')",
                                    env, name ? *name : std::string());
    if (name && r.affected_rows() == 0)
      throw StoreFailure{ErrorCode::NotFound, "agent " + *name + " not found"};
    insertSchedulerRequest(tx, env, model::SchedulerRequestKind::AgentsChanged,
                           {{"agent", name ? nlohmann::json(*name) : nlohmann::json()}, {"action", action}});
  });
}

llvm::Expected<nlohmann::json> PgStore::createDryrun(const std::string& env, int64_t version) {
  return withTx<nlohmann::json>(db_, "requesting a dry run", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    if (tx.exec_params("SELECT 1 FROM configurationmodel WHERE environment = $1 AND version = $2", env,
                       version)
            .empty())
      throw StoreFailure{ErrorCode::NotFound, "version " + std::to_string(version) + " not found"};
    // Undefined resources and their dependents cannot be dry-run: their entries are final at once.
    pqxx::result r = tx.exec_params(
        "WITH cm AS (SELECT * FROM configurationmodel WHERE environment = $1 AND version = $2), "
        "res AS (SELECT " +
            model::sqlResourceVersionId("r.resource_id", "r.model") +
            " AS rvid, CASE WHEN r.is_undefined THEN 'undefined' "
            "WHEN r.resource_id::text = ANY(cm.skipped_for_undeployable) THEN 'skipped_for_undefined' ELSE "
            "NULL "
            "END AS done "
            "FROM resource r CROSS JOIN cm WHERE r.environment = $1 AND r.model = $2) "
            "INSERT INTO dryrun (id, environment, model, total, todo, resources) SELECT gen_random_uuid(), "
            "$1, "
            "$2, "
            "(SELECT count(*) FROM res), (SELECT count(*) FROM res WHERE done IS NULL), "
            "coalesce((SELECT jsonb_object_agg(rvid, jsonb_build_object('changes', '{}'::jsonb, "
            "'diff_status', "
            "coalesce(done, 'unmodified'), 'done', done IS NOT NULL)) FROM res), '{}'::jsonb) "
            "RETURNING json_build_object('id', id, 'environment', environment, 'model', model, 'date', date, "
            "'total', "
            "total, 'todo', todo, 'resources', resources)::text",
        env, version);
    nlohmann::json row = parseFirst(r);
    insertSchedulerRequest(tx, env, model::SchedulerRequestKind::Dryrun,
                           {{"id", row["id"]}, {"version", version}});
    return row;
  });
}

llvm::Expected<nlohmann::json> PgStore::dryruns(const std::string& env, std::optional<int64_t> version) {
  return withTx<nlohmann::json>(db_, "listing dry runs", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    return parseFirst(tx.exec_params("SELECT coalesce(json_agg(json_build_object('id', id, 'environment', "
                                     "environment, 'model', model, 'date', "
                                     "date, 'total', total, 'todo', todo) ORDER BY date DESC), '[]')::text "
                                     "FROM dryrun WHERE environment = $1 "
                                     "AND ($2 < 0 OR model = $2)",
                                     env, version ? *version : int64_t(-1)));
  });
}

llvm::Expected<nlohmann::json> PgStore::dryrun(const std::string& env, const std::string& id) {
  return withTx<nlohmann::json>(db_, "reading a dry run", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    pqxx::result r = tx.exec_params(
        "SELECT json_build_object('id', id, 'environment', environment, 'model', model, 'date', date, "
        "'total', total, "
        "'todo', todo, 'resources', resources)::text FROM dryrun WHERE environment = $1 AND id = $2::uuid",
        env, id);
    if (r.empty()) throw StoreFailure{ErrorCode::NotFound, "dry run " + id + " not found"};
    return parseFirst(r);
  });
}

} // namespace inm::store

// Reading versions on PostgreSQL (see PgStore.h and orchestrator.md §4): a version's resources as JSON, the
// `resources` text of GET /api/v1/version/<v> spliced from the stored jsonb text and handed on in pieces (a
// cursor, one batch of rows at a time), and the resources whose attribute hash, requires or provides differ
// between two versions (a full join in SQL). Split from PgVersions.cpp, which writes them. Invariant: the
// resource lists come in resource_id order (the database's), as the answers list them; the changed resources
// come unordered (the service sorts them).
#include "PgStore.h"
#include "model/Ids.h"

#include <string>
#include <string_view>

namespace inm::store {

using model::ErrorCode;

namespace {

/// Throws NotFound unless version `version` of `env` exists.
void requireVersion(pqxx::work& tx, const std::string& env, int64_t version) {
  if (tx.exec_params("SELECT 1 FROM configurationmodel WHERE environment = $1 AND version = $2", env, version)
          .empty())
    throw StoreFailure{ErrorCode::NotFound, "version " + std::to_string(version) + " not found"};
}

/// `s` as a JSON string literal.
void appendJsonString(std::string& out, std::string_view s) { out += nlohmann::json(std::string(s)).dump(); }

} // namespace

llvm::Expected<nlohmann::json> PgStore::versionResources(const std::string& env, int64_t version) {
  return withTx<nlohmann::json>(db_, "reading the resources of a version", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    requireVersion(tx, env, version);
    pqxx::result r = tx.exec_params(
        std::string("SELECT coalesce(json_agg(json_build_object('resource_id', r.resource_id, "
                    "'resource_type', r.resource_type, "
                    "'agent', r.agent, 'resource_id_value', r.resource_id_value, 'attributes', r.attributes, "
                    "'attribute_hash', r.attribute_hash, 'is_undefined', r.is_undefined, 'resource_set', "
                    "r.resource_set, 'status', ") +
            kStatusSql +
            ") ORDER BY r.resource_id), '[]')::text FROM resource r LEFT JOIN resource_persistent_state rps "
            "ON rps.environment = r.environment AND rps.resource_id = r.resource_id WHERE r.environment = $1 "
            "AND r.model = $2",
        env, version);
    return nlohmann::json::parse(r[0][0].c_str());
  });
}

llvm::Error PgStore::versionAnswerPieces(const std::string& env, int64_t version,
                                         const std::function<bool(std::string& piece)>& sink) {
  return withTxVoid(db_, "reading the resources of a version", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    requireVersion(tx, env, version);
    // Each row's attributes leave as jsonb text without requires, version and id (the answer sets those
    // three); they are spliced into the answer as they are, only the short requires lists are parsed. The
    // rows come through a cursor, kBatch at a time, each batch's text handed on before the next is read;
    // the cursor gets the plan of a whole read (cursor_tuple_fraction), not a fast-start one.
    tx.exec("SET LOCAL cursor_tuple_fraction = 1.0");
    tx.exec(std::string("DECLARE inm_version_answer NO SCROLL CURSOR FOR SELECT r.resource_id, "
                        "r.resource_type, r.agent, r.resource_id_value, r.attribute_hash, ") +
            kStatusSql +
            ", (r.attributes - 'requires' - 'version' - 'id')::text, (r.attributes->'requires')::text FROM "
            "resource r LEFT JOIN resource_persistent_state rps ON rps.environment = r.environment AND "
            "rps.resource_id = r.resource_id WHERE r.environment = " +
            tx.quote(env) + " AND r.model = " + std::to_string(version) + " ORDER BY r.resource_id");
    constexpr int kBatch = 1000;
    const std::string fetch = "FETCH FORWARD " + std::to_string(kBatch) + " FROM inm_version_answer";
    const std::string v = std::to_string(version);
    std::string rvid; // one buffer for every resource version id printed below
    auto versioned = [&](std::string_view id) -> const std::string& {
      rvid.clear();
      model::appendResourceVersionId(rvid, id, model::VersionNumber{version});
      return rvid;
    };
    std::string envJson;
    appendJsonString(envJson, env);
    std::string out = "[";
    bool first = true;
    auto handOn = [&] {
      if (!sink(out))
        throw StoreFailure{ErrorCode::Unavailable,
                           "the reader of version " + v + " went away before its answer was complete"};
      out.clear();
    };
    for (;;) {
      pqxx::result rows = tx.exec(fetch);
      size_t total = 0;
      for (const auto& row : rows) total += row[6].size() + 2 * row[0].size() + 400;
      out.reserve(out.size() + total + 1);
      for (const auto& row : rows) {
        std::string_view rid(row[0].c_str(), row[0].size());
        if (!first) out += ',';
        first = false;
        out += "{\"environment\":" + envJson + ",\"model\":" + v + ",\"resource_id\":";
        appendJsonString(out, rid);
        out += ",\"resource_version_id\":";
        appendJsonString(out, versioned(rid));
        out += ",\"resource_type\":";
        appendJsonString(out, row[1].c_str());
        out += ",\"agent\":";
        appendJsonString(out, row[2].c_str());
        out += ",\"resource_id_value\":";
        appendJsonString(out, row[3].c_str());
        out += ",\"attributes\":";
        std::string_view attrs(row[6].c_str(), row[6].size()); // a jsonb object's text: "{...}"
        if (attrs.size() >= 2 && attrs != "{}") {
          out.append(attrs.data(), attrs.size() - 1);
          out += ", ";
        } else {
          out += '{';
        }
        out += "\"requires\": [";
        if (!row[7].is_null()) {
          nlohmann::json reqs = nlohmann::json::parse(row[7].c_str());
          bool firstReq = true;
          auto add = [&](const nlohmann::json& q) {
            if (!firstReq) out += ", ";
            firstReq = false;
            appendJsonString(out, versioned(q.get_ref<const std::string&>()));
          };
          if (reqs.is_array())
            for (const auto& q : reqs) add(q);
        }
        out += "], \"version\": " + v + ", \"id\": ";
        appendJsonString(out, versioned(rid));
        out += "},\"attribute_hash\":";
        appendJsonString(out, row[4].c_str());
        out += ",\"status\":";
        if (row[5].is_null())
          out += "null";
        else
          appendJsonString(out, row[5].c_str());
        out += ",\"id_fields\":{}}";
      }
      if (rows.size() < size_t(kBatch)) break;
      handOn();
    }
    out += ']';
    handOn();
    tx.exec("CLOSE inm_version_answer");
  });
}

llvm::Expected<nlohmann::json> PgStore::changedResources(const std::string& env, int64_t from, int64_t to) {
  return withTx<nlohmann::json>(db_, "comparing two versions", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    requireVersion(tx, env, from);
    requireVersion(tx, env, to);
    // The attribute hash is md5 over the id and the Python JSON text of every attribute but requires,
    // provides (and id, version, never stored): equal hashes mean equal attributes apart from those two, so
    // only they are compared there, and an unchanged row's jsonb never leaves PostgreSQL or is compared
    // whole (VersionBody.cpp computes every stored hash from the stored attributes; partial merges copy
    // both). The hash also sees number kinds jsonb `=` does not (float 1e16 equals int 10000000000000000
    // there): a differing hash lists the row even when the jsonb compares equal (docs/limits.md "Floats in
    // jsonb").
    pqxx::result r = tx.exec_params(
        "SELECT coalesce(json_agg(json_build_object('resource_id', coalesce(a.resource_id, b.resource_id), "
        "'from', a.attributes, 'to', b.attributes, 'same_hash', a.attribute_hash = b.attribute_hash)), "
        "'[]')::text FROM (SELECT resource_id, attributes, attribute_hash FROM resource "
        "WHERE environment = $1 AND model = $2) a FULL JOIN (SELECT resource_id, attributes, attribute_hash "
        "FROM resource WHERE environment = $1 AND model = $3) b ON a.resource_id = b.resource_id "
        "WHERE a.attribute_hash IS DISTINCT FROM b.attribute_hash "
        "OR a.attributes->'requires' IS DISTINCT FROM b.attributes->'requires' "
        "OR a.attributes->'provides' IS DISTINCT FROM b.attributes->'provides'",
        env, from, to);
    return nlohmann::json::parse(r[0][0].c_str());
  });
}

} // namespace inm::store

// Projects, environments, settings, files and scheduler requests on PostgreSQL (see PgStore.h). Rows are
// shaped into JSON by PostgreSQL itself (json_build_object), so the API's field names live in one place.
#include "PgStore.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <unistd.h>

namespace inm::store {

using model::ErrorCode;

namespace {

constexpr const char* kEnvJson =
    "json_build_object('id', e.id, 'name', e.name, 'project_id', e.project, 'repo_url', e.repo_url, "
    "'repo_branch', e.repo_branch, 'settings', e.settings, 'halted', e.halted, "
    "'is_marked_for_deletion', e.is_marked_for_deletion, 'description', e.description, 'icon', e.icon, "
    "'protected_settings', to_json(e.protected_settings))";

std::string projectJsonSql(const char* where) {
  return std::string("SELECT json_build_object('id', p.id, 'name', p.name, 'environments', coalesce((SELECT "
                     "json_agg(") +
         kEnvJson +
         " ORDER BY e.name) FROM environment e WHERE e.project = p.id), '[]'::json))::text "
         "FROM project p " +
         where;
}

nlohmann::json one(const pqxx::result& r, const std::string& what) {
  if (r.empty()) throw StoreFailure{ErrorCode::NotFound, what};
  return nlohmann::json::parse(r[0][0].c_str());
}

} // namespace

const char* const kStatusSql =
    "(CASE WHEN rps.resource_id IS NULL THEN 'available' "
    "WHEN rps.orphaned_after IS NOT NULL THEN 'orphaned' "
    "WHEN rps.is_deploying THEN 'deploying' "
    "WHEN rps.is_undefined THEN 'undefined' "
    "WHEN rps.blocked = 'BLOCKED' THEN 'skipped_for_undefined' "
    "WHEN rps.current_intent_attribute_hash IS NOT NULL AND rps.last_deployed_attribute_hash IS NOT NULL "
    "AND rps.current_intent_attribute_hash <> rps.last_deployed_attribute_hash THEN 'available' "
    "ELSE rps.last_non_deploying_status END)";

void insertSchedulerRequest(pqxx::work& tx, const std::string& env, model::SchedulerRequestKind kind,
                            const nlohmann::json& payload) {
  tx.exec_params("INSERT INTO scheduler_request (environment, kind, payload) VALUES ($1, $2, $3::jsonb)", env,
                 std::string(model::spelling(kind)), payload.dump());
  tx.exec_params("SELECT pg_notify('inmanta_scheduler', $1)", env);
}

bool requireEnvironment(pqxx::work& tx, const std::string& env) {
  pqxx::result r = tx.exec_params("SELECT halted FROM environment WHERE id = $1", env);
  if (r.empty()) throw StoreFailure{ErrorCode::NotFound, "environment " + env + " not found"};
  return r[0][0].as<bool>();
}

void lockEnvironmentShared(pqxx::work& tx, const std::string& env) {
  if (tx.exec_params("SELECT 1 FROM environment WHERE id = $1 FOR KEY SHARE", env).empty())
    throw StoreFailure{ErrorCode::NotFound, "environment " + env + " not found"};
}

void lockEnvironmentExclusive(pqxx::work& tx, const std::string& env) {
  if (tx.exec_params("SELECT 1 FROM environment WHERE id = $1 FOR UPDATE", env).empty())
    throw StoreFailure{ErrorCode::NotFound, "environment " + env + " not found"};
}

llvm::Error PgStore::ping() {
  return withTxVoid(db_, "ping", [](pqxx::work& tx) { tx.exec("SELECT 1"); });
}

llvm::Expected<nlohmann::json> PgStore::createProject(const std::string& id, const std::string& name) {
  return withTx<nlohmann::json>(db_, "creating a project", [&](pqxx::work& tx) {
    if (!tx.exec_params("SELECT 1 FROM project WHERE name = $1", name).empty())
      throw StoreFailure{ErrorCode::Conflict, "a project with name '" + name + "' already exists"};
    tx.exec_params("INSERT INTO project (id, name) VALUES ($1, $2)", id, name);
    return one(tx.exec_params(projectJsonSql("WHERE p.id = $1"), id), "project " + id + " not found");
  });
}

llvm::Expected<nlohmann::json> PgStore::listProjects() {
  return withTx<nlohmann::json>(db_, "listing projects", [&](pqxx::work& tx) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : tx.exec(projectJsonSql("ORDER BY p.name")))
      out.push_back(nlohmann::json::parse(row[0].c_str()));
    return out;
  });
}

llvm::Expected<nlohmann::json> PgStore::getProject(const std::string& id) {
  return withTx<nlohmann::json>(db_, "reading a project", [&](pqxx::work& tx) {
    return one(tx.exec_params(projectJsonSql("WHERE p.id = $1"), id), "project " + id + " not found");
  });
}

llvm::Expected<nlohmann::json> PgStore::updateProject(const std::string& id, const std::string& name) {
  return withTx<nlohmann::json>(db_, "modifying a project", [&](pqxx::work& tx) {
    if (!tx.exec_params("SELECT 1 FROM project WHERE name = $1 AND id <> $2", name, id).empty())
      throw StoreFailure{ErrorCode::Conflict, "a project with name '" + name + "' already exists"};
    if (tx.exec_params("UPDATE project SET name = $2 WHERE id = $1", id, name).affected_rows() == 0)
      throw StoreFailure{ErrorCode::NotFound, "project " + id + " not found"};
    return one(tx.exec_params(projectJsonSql("WHERE p.id = $1"), id), "project " + id + " not found");
  });
}

llvm::Error PgStore::deleteProject(const std::string& id) {
  return withTxVoid(db_, "deleting a project", [&](pqxx::work& tx) {
    // The environments' rows are locked first, then the rows without a foreign key to their environment
    // are deleted (see deleteEnvironment).
    tx.exec_params("SELECT 1 FROM environment WHERE project::text = $1 ORDER BY id FOR UPDATE", id);
    for (const char* table : {"resource", "module_files", "resourceaction_resource", "resourceaction",
                              "resource_persistent_state", "agent"})
      tx.exec_params(std::string("DELETE FROM ") + table +
                         " WHERE environment IN (SELECT e.id FROM environment e WHERE e.project::text = $1)",
                     id);
    if (tx.exec_params("DELETE FROM project WHERE id = $1", id).affected_rows() == 0)
      throw StoreFailure{ErrorCode::NotFound, "project " + id + " not found"};
  });
}

llvm::Expected<nlohmann::json> PgStore::createEnvironment(const nlohmann::json& spec) {
  return withTx<nlohmann::json>(db_, "creating an environment", [&](pqxx::work& tx) {
    std::string id = spec.at("id"), project = spec.at("project_id"), name = spec.at("name");
    if (tx.exec_params("SELECT 1 FROM project WHERE id = $1", project).empty())
      throw StoreFailure{ErrorCode::NotFound, "project " + project + " not found"};
    if (!tx.exec_params("SELECT 1 FROM environment WHERE project = $1 AND name = $2", project, name).empty())
      throw StoreFailure{ErrorCode::Conflict,
                         "project " + project + " already has an environment named '" + name + "'"};
    if (!tx.exec_params("SELECT 1 FROM environment WHERE id = $1", id).empty())
      throw StoreFailure{ErrorCode::Conflict, "an environment with id " + id + " already exists"};
    tx.exec_params("INSERT INTO environment (id, name, project, repo_url, repo_branch, description, icon) "
                   "VALUES ($1, $2, $3, $4, $5, $6, $7)",
                   id, name, project, spec.value("repo_url", ""), spec.value("repo_branch", ""),
                   spec.value("description", ""), spec.value("icon", ""));
    tx.exec_params("INSERT INTO agent (environment, name) VALUES ($1, '$__scheduler')", id);
    return one(
        tx.exec_params(std::string("SELECT ") + kEnvJson + "::text FROM environment e WHERE e.id = $1", id),
        "environment " + id + " not found");
  });
}

llvm::Expected<nlohmann::json> PgStore::listEnvironments() {
  return withTx<nlohmann::json>(db_, "listing environments", [&](pqxx::work& tx) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row :
         tx.exec(std::string("SELECT ") + kEnvJson + "::text FROM environment e ORDER BY e.name, e.id"))
      out.push_back(nlohmann::json::parse(row[0].c_str()));
    return out;
  });
}

llvm::Expected<nlohmann::json> PgStore::getEnvironment(const std::string& id) {
  return withTx<nlohmann::json>(db_, "reading an environment", [&](pqxx::work& tx) {
    return one(
        tx.exec_params(std::string("SELECT ") + kEnvJson + "::text FROM environment e WHERE e.id = $1", id),
        "environment " + id + " not found");
  });
}

llvm::Expected<nlohmann::json> PgStore::updateEnvironment(const std::string& id,
                                                          const nlohmann::json& changes) {
  return withTx<nlohmann::json>(db_, "modifying an environment", [&](pqxx::work& tx) {
    pqxx::result cur = tx.exec_params("SELECT project, name FROM environment WHERE id = $1 FOR UPDATE", id);
    if (cur.empty()) throw StoreFailure{ErrorCode::NotFound, "environment " + id + " not found"};
    std::string project = changes.value("project_id", cur[0][0].c_str());
    std::string name = changes.value("name", cur[0][1].c_str());
    if (tx.exec_params("SELECT 1 FROM project WHERE id = $1", project).empty())
      throw StoreFailure{ErrorCode::NotFound, "project " + project + " not found"};
    if (!tx.exec_params("SELECT 1 FROM environment WHERE project = $1 AND name = $2 AND id <> $3", project,
                        name, id)
             .empty())
      throw StoreFailure{ErrorCode::Conflict,
                         "project " + project + " already has an environment named '" + name + "'"};
    tx.exec_params("UPDATE environment SET name = $2, project = $3, "
                   "repo_url = coalesce($4::jsonb->>'repo_url', repo_url), "
                   "repo_branch = coalesce($4::jsonb->>'repo_branch', repo_branch), "
                   "description = coalesce($4::jsonb->>'description', description), "
                   "icon = coalesce($4::jsonb->>'icon', icon) WHERE id = $1",
                   id, name, project, changes.dump());
    return one(
        tx.exec_params(std::string("SELECT ") + kEnvJson + "::text FROM environment e WHERE e.id = $1", id),
        "environment " + id + " not found");
  });
}

llvm::Error PgStore::deleteEnvironment(const std::string& id) {
  return withTxVoid(db_, "deleting an environment", [&](pqxx::work& tx) {
    // The lock first: a writer in flight commits before the deletes below take their snapshots, and one
    // arriving later finds no environment (lockEnvironmentShared). Deleting cascades over every table keyed
    // by the environment; the rows without a foreign key to it are deleted explicitly.
    lockEnvironmentExclusive(tx, id);
    tx.exec_params("DELETE FROM resource WHERE environment = $1", id);
    tx.exec_params("DELETE FROM module_files WHERE environment = $1", id);
    tx.exec_params("DELETE FROM resourceaction_resource WHERE environment = $1", id);
    tx.exec_params("DELETE FROM resourceaction WHERE environment = $1", id);            // migration 005
    tx.exec_params("DELETE FROM resource_persistent_state WHERE environment = $1", id); // migration 004
    tx.exec_params("DELETE FROM agent WHERE environment = $1", id);                     // migration 006
    tx.exec_params("DELETE FROM environment WHERE id = $1", id);
  });
}

llvm::Error PgStore::clearEnvironment(const std::string& id) {
  return withTxVoid(db_, "clearing an environment", [&](pqxx::work& tx) {
    // As deleteEnvironment; the new generation tells a scheduler that loaded the environment before the
    // clear that its state is gone (SchedulerStore::write drops its writes and the process restarts).
    lockEnvironmentExclusive(tx, id);
    tx.exec_params("UPDATE environment SET generation = generation + 1 WHERE id = $1", id);
    for (const char* table :
         {"resource", "module_files", "resourceaction_resource", "unknownparameter", "agent_modules",
          "version_code", "configurationmodel", "resource_persistent_state", "scheduler", "resourceaction",
          "agent", "inmanta_module", "parameter", "compile", "dryrun", "notification"})
      tx.exec_params(std::string("DELETE FROM ") + table + " WHERE environment = $1", id);
    tx.exec_params("INSERT INTO agent (environment, name) VALUES ($1, '$__scheduler')", id);
    insertSchedulerRequest(tx, id, model::SchedulerRequestKind::ReadVersion, nlohmann::json::object());
  });
}

llvm::Error PgStore::setHalted(const std::string& id, bool halted) {
  return withTxVoid(db_, halted ? "halting an environment" : "resuming an environment", [&](pqxx::work& tx) {
    bool was = requireEnvironment(tx, id);
    if (was == halted) return;
    if (halted) {
      // Remember which agents to unpause on resume, then pause them all (orchestrator.md §6.10).
      tx.exec_params("UPDATE agent SET unpause_on_resume = NOT paused, paused = true WHERE environment = $1",
                     id);
    } else {
      tx.exec_params(
          "UPDATE agent SET paused = NOT coalesce(unpause_on_resume, true), unpause_on_resume = NULL "
          "WHERE environment = $1",
          id);
    }
    tx.exec_params("UPDATE environment SET halted = $2 WHERE id = $1", id, halted);
    insertSchedulerRequest(tx, id,
                           halted ? model::SchedulerRequestKind::Halt : model::SchedulerRequestKind::Resume,
                           nlohmann::json::object());
  });
}

llvm::Expected<nlohmann::json> PgStore::getSettings(const std::string& env) {
  return withTx<nlohmann::json>(db_, "reading settings", [&](pqxx::work& tx) {
    pqxx::result r = tx.exec_params(
        "SELECT json_build_object('settings', settings, 'protected', to_json(protected_settings))::text "
        "FROM environment WHERE id = $1",
        env);
    return one(r, "environment " + env + " not found");
  });
}

llvm::Error PgStore::writeSetting(const std::string& env, const std::string& key,
                                  const std::optional<nlohmann::json>& value) {
  return withTxVoid(db_, "writing a setting", [&](pqxx::work& tx) {
    pqxx::result r = tx.exec_params(
        "SELECT $2 = ANY(protected_settings) FROM environment WHERE id = $1 FOR UPDATE", env, key);
    if (r.empty()) throw StoreFailure{ErrorCode::NotFound, "environment " + env + " not found"};
    if (r[0][0].as<bool>())
      throw StoreFailure{ErrorCode::Forbidden,
                         "setting '" + key +
                             "' is protected (set by project.yml) and cannot be changed through the API"};
    if (value)
      tx.exec_params("UPDATE environment SET settings = settings || jsonb_build_object($2::text, $3::jsonb) "
                     "WHERE id = $1",
                     env, key, value->dump());
    else
      tx.exec_params("UPDATE environment SET settings = settings - $2::text WHERE id = $1", env, key);
    insertSchedulerRequest(tx, env, model::SchedulerRequestKind::SettingsChanged, {{"key", key}});
  });
}

llvm::Error PgStore::protectSettings(const std::string& env, const nlohmann::json& settings) {
  return withTxVoid(db_, "protecting settings", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    nlohmann::json keys = nlohmann::json::array();
    for (auto it = settings.begin(); it != settings.end(); ++it) keys.push_back(it.key());
    tx.exec_params("UPDATE environment SET settings = settings || $2::jsonb, "
                   "protected_settings = ARRAY(SELECT jsonb_array_elements_text($3::jsonb)) WHERE id = $1",
                   env, settings.dump(), keys.dump());
    insertSchedulerRequest(tx, env, model::SchedulerRequestKind::SettingsChanged, {{"keys", keys}});
  });
}

llvm::Expected<std::vector<std::string>> PgStore::missingFiles(const std::vector<std::string>& hashes) {
  return withTx<std::vector<std::string>>(db_, "checking files", [&](pqxx::work& tx) {
    std::vector<std::string> out;
    pqxx::result r = tx.exec_params("SELECT h FROM jsonb_array_elements_text($1::jsonb) h WHERE NOT EXISTS "
                                    "(SELECT 1 FROM file WHERE content_hash = h)",
                                    nlohmann::json(hashes).dump());
    for (const auto& row : r) out.push_back(row[0].c_str());
    return out;
  });
}

llvm::Error PgStore::putFile(const std::string& hash, const std::string& content) {
  return withTxVoid(db_, "storing a file", [&](pqxx::work& tx) {
    pqxx::binarystring bytes(content.data(), content.size());
    tx.exec_params("INSERT INTO file (content_hash, content) VALUES ($1, $2) ON CONFLICT DO NOTHING", hash,
                   bytes);
  });
}

llvm::Error PgStore::putFiles(const std::vector<std::pair<std::string, std::string>>& files) {
  if (files.empty()) return llvm::Error::success();
  return withTxVoid(db_, "storing files", [&](pqxx::work& tx) {
    // Multi-row INSERTs of up to kRows files (a statement takes at most 65535 parameters); bytea travels in
    // its hex text form ("\\x…") so every parameter is text.
    static const char kHex[] = "0123456789abcdef";
    constexpr size_t kRows = 4000;
    for (size_t start = 0; start < files.size(); start += kRows) {
      size_t end = std::min(files.size(), start + kRows);
      std::string sql = "INSERT INTO file (content_hash, content) VALUES ";
      std::vector<std::string> params;
      params.reserve((end - start) * 2);
      for (size_t i = 0; i < end - start; ++i) {
        const std::string& bytes = files[start + i].second;
        std::string hex;
        hex.reserve(2 + 2 * bytes.size());
        hex += "\\x";
        for (unsigned char c : bytes) {
          hex += kHex[c >> 4];
          hex += kHex[c & 15];
        }
        params.push_back(files[start + i].first);
        params.push_back(std::move(hex));
        sql +=
            (i ? ", ($" : "($") + std::to_string(2 * i + 1) + ", $" + std::to_string(2 * i + 2) + "::bytea)";
      }
      sql += " ON CONFLICT DO NOTHING";
      tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
    }
  });
}

llvm::Expected<std::optional<std::string>> PgStore::getFile(const std::string& hash) {
  return withTx<std::optional<std::string>>(
      db_, "reading a file", [&](pqxx::work& tx) -> std::optional<std::string> {
        pqxx::result r = tx.exec_params("SELECT content FROM file WHERE content_hash = $1", hash);
        if (r.empty()) return std::nullopt;
        return pqxx::binarystring(r[0][0]).str();
      });
}

llvm::Error PgStore::putCode(const std::string& env, int64_t cmVersion, const nlohmann::json& modules) {
  return withTxVoid(db_, "storing handler code", [&](pqxx::work& tx) {
    lockEnvironmentShared(tx, env);
    // The version's code is what this upload names (a re-upload for the same version replaces the link).
    tx.exec_params("DELETE FROM version_code WHERE environment = $1 AND cm_version = $2", env, cmVersion);
    for (const auto& m : modules) {
      std::string name = m.at("name"), version = m.at("version");
      tx.exec_params(
          "INSERT INTO version_code (environment, cm_version, inmanta_module_name, inmanta_module_version) "
          "VALUES ($1, $2, $3, $4)",
          env, cmVersion, name, version);
      pqxx::result ins =
          tx.exec_params("INSERT INTO inmanta_module (environment, name, version, requirements) "
                         "VALUES ($1, $2, $3, ARRAY(SELECT jsonb_array_elements_text($4::jsonb))) ON "
                         "CONFLICT DO NOTHING RETURNING 1",
                         env, name, version, m.value("requirements", nlohmann::json::array()).dump());
      if (ins.empty()) continue; // the same module version is registered already, with its files
      for (const auto& f : m.at("files")) {
        std::string hash = f.at("hash");
        if (tx.exec_params("SELECT 1 FROM file WHERE content_hash = $1", hash).empty())
          throw StoreFailure{ErrorCode::BadRequest, "module " + name + ": file " + hash + " (" +
                                                        f.value("python_module", std::string()) +
                                                        ") was not uploaded"};
        tx.exec_params("INSERT INTO module_files (environment, inmanta_module_name, inmanta_module_version, "
                       "file_content_hash, python_module_name, is_byte_code, file_path) VALUES ($1, $2, $3, "
                       "$4, $5, $6, $7)",
                       env, name, version, hash, f.value("python_module", std::string()),
                       f.value("is_byte_code", false), f.value("path", std::string()));
      }
    }
  });
}

llvm::Error PgStore::requestScheduler(const std::string& env, model::SchedulerRequestKind kind,
                                      const nlohmann::json& payload) {
  return withTxVoid(db_, "requesting the scheduler", [&](pqxx::work& tx) {
    requireEnvironment(tx, env);
    insertSchedulerRequest(tx, env, kind, payload);
  });
}

std::unique_ptr<Store> openPgStore(const DbSettings& db) { return std::make_unique<PgStore>(db); }

namespace {

class PgServerLock final : public ServerLock {
 public:
  explicit PgServerLock(DbSettings db) : db_(std::move(db)), owner_(randomOwner()) {}
  llvm::Expected<bool> acquire() override {
    if (lost_) return false;
    try {
      if (!conn_ || !conn_->is_open()) conn_ = std::make_unique<pqxx::connection>(db_.connectionString());
      held_ = false;
      {
        pqxx::nontransaction tx{*conn_};
        if (!tx.exec_params("SELECT pg_try_advisory_lock($1)", kKey)[0][0].as<bool>()) return false;
      }
      // Claim the owner row before anything is served; it waits for the transactions of a previous owner
      // still in flight (migration 012). A re-take after a restart fails if another server claimed it.
      pqxx::work tx{*conn_};
      bool claimed = tx.exec_params("SELECT inm_server_claim($1, $2)", owner_, claimedOnce_)[0][0].as<bool>();
      tx.commit();
      if (!claimed) {
        lost_ = true;
        pqxx::nontransaction unlock{*conn_};
        unlock.exec_params("SELECT pg_advisory_unlock($1)", kKey);
        return false;
      }
      claimedOnce_ = held_ = true;
      return true;
    } catch (...) {
      conn_.reset();
      held_ = false;
      return translateCurrentException("taking the server lock");
    }
  }
  llvm::Expected<bool> check() override {
    try {
      if (conn_ && conn_->is_open()) {
        pqxx::nontransaction tx{*conn_};
        tx.exec("SELECT 1");
        if (held_) return true;
      }
    } catch (...) {
      conn_.reset();
      held_ = false;
    }
    return acquire();
  }
  const std::string& owner() const override { return owner_; }

 private:
  static std::string randomOwner() {
    std::random_device rd;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x-%d", rd(), rd(), rd(), rd(), int(::getpid()));
    return buf;
  }
  static constexpr int64_t kKey = 0x696e6d616e746132; // "inmanta2"
  DbSettings db_;
  std::string owner_;
  std::unique_ptr<pqxx::connection> conn_;
  bool held_ = false;
  bool claimedOnce_ = false; // a later acquire() is a re-take
  bool lost_ = false;        // another server claimed the database: never serve again
};

} // namespace

std::unique_ptr<ServerLock> makeServerLock(const DbSettings& db) {
  return std::make_unique<PgServerLock>(db);
}

} // namespace inm::store

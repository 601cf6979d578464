// Use cases for projects, environments, settings and files (see Service.h). Versions are in
// ServiceVersions.cpp.
#include "service/Service.h"

#include "FileBatch.h"
#include "Util.h"
#include "artifact/Artifact.h"
#include "model/Ids.h"
#include "model/Settings.h"
#include "service/Log.h"
#include "support/Base64.h"

#include <random>

namespace inm::service {

using model::ErrorCode;

Result Result::error(ErrorCode code, std::string message) {
  Result r;
  r.ok = false;
  r.code = code;
  r.message = std::move(message);
  return r;
}

Result Result::error(llvm::Error err) {
  auto [code, msg] = model::describe(std::move(err));
  return error(code, msg.empty() ? "internal error" : msg);
}

namespace {

Result fromExpected(llvm::Expected<nlohmann::json> v) {
  if (!v) return Result::error(v.takeError());
  return Result::of(std::move(*v));
}

Result fromError(llvm::Error e, nlohmann::json ok = nullptr) {
  if (e) return Result::error(std::move(e));
  return Result::of(std::move(ok));
}

} // namespace

std::string newUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t a = rng(), b = rng();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", unsigned(a >> 32),
                unsigned((a >> 16) & 0xffff), unsigned(a & 0xffff), unsigned(b >> 48),
                (unsigned long long)(b & 0xffffffffffffULL));
  return buf;
}

std::string lowerUuid(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool decodeBase64(const std::string& in, std::string& out) {
  auto bytes = support::base64Decode(in, {support::Base64Alphabet::Either, /*skipWhitespace=*/true});
  if (!bytes) return false;
  out = std::move(*bytes);
  return true;
}

std::string encodeBase64(const std::string& in) { return support::base64Encode(in); }

Service::Service(store::Store& store, asio::thread_pool& pool, SchedulerControl* scheduler,
                 ServiceOptions options)
    : store_(store), pool_(pool), scheduler_(scheduler), options_(options),
      fileBatch_(std::make_shared<FileBatch>(store)) {}

asio::awaitable<Result> Service::health() {
  llvm::Error e = co_await blocking([&] { return store_.ping(); });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(nlohmann::json{{"status", "healthy"}});
}

asio::awaitable<Result> Service::createProject(std::string name, std::optional<std::string> id) {
  if (name.empty()) co_return Result::error(ErrorCode::BadRequest, "'name' must be a non-empty string");
  if (id && !isUuid(*id))
    co_return Result::error(ErrorCode::BadRequest, "'project_id' is not a uuid: " + *id);
  std::string pid = id ? lowerUuid(*id) : newUuid();
  co_return fromExpected(co_await blocking([&] { return store_.createProject(pid, name); }));
}

asio::awaitable<Result> Service::listProjects() {
  co_return fromExpected(co_await blocking([&] { return store_.listProjects(); }));
}

asio::awaitable<Result> Service::getProject(std::string id) {
  co_return fromExpected(co_await blocking([&] { return store_.getProject(lowerUuid(id)); }));
}

asio::awaitable<Result> Service::modifyProject(std::string id, std::string name) {
  if (name.empty()) co_return Result::error(ErrorCode::BadRequest, "'name' must be a non-empty string");
  co_return fromExpected(co_await blocking([&] { return store_.updateProject(lowerUuid(id), name); }));
}

asio::awaitable<Result> Service::deleteProject(std::string id) {
  auto project = co_await blocking([&] { return store_.getProject(lowerUuid(id)); });
  if (!project) co_return Result::error(project.takeError());
  for (const auto& env : (*project)["environments"]) {
    if (model::decodeEnvironmentSettings(env["settings"]).settings.protectedEnvironment)
      co_return Result::error(ErrorCode::Forbidden, "project " + id + " holds protected environment " +
                                                        env["id"].get<std::string>() +
                                                        " and cannot be deleted");
  }
  if (scheduler_)
    for (const auto& env : (*project)["environments"]) scheduler_->stop(env["id"]);
  co_return fromError(co_await blocking([&] { return store_.deleteProject(lowerUuid(id)); }));
}

namespace {

/// Fills in the settings a stored environment does not hold with their defaults.
void withDefaultSettings(nlohmann::json& env) {
  nlohmann::json& s = env["settings"];
  if (!s.is_object()) s = nlohmann::json::object();
  for (const auto& d : model::settingDefs())
    if (!s.contains(d.name)) s[d.name] = d.defaultValue;
}

/// Reads an optional string field of a request body under any of its names.
llvm::Expected<std::optional<std::string>> stringField(const nlohmann::json& body,
                                                       std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = body.find(n);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_string())
      return model::fail(ErrorCode::BadRequest, std::string("'") + n + "' must be a string");
    return std::optional<std::string>(it->get<std::string>());
  }
  return std::optional<std::string>();
}

} // namespace

asio::awaitable<Result> Service::createEnvironment(nlohmann::json in) {
  nlohmann::json spec = nlohmann::json::object();
  struct F {
    const char* out;
    std::initializer_list<const char*> names;
  };
  for (const F& f :
       {F{"project_id", {"project_id", "project"}}, F{"name", {"name"}},
        F{"repo_url", {"repository", "repo_url"}}, F{"repo_branch", {"branch", "repo_branch"}},
        F{"id", {"environment_id", "id"}}, F{"description", {"description"}}, F{"icon", {"icon"}}}) {
    auto v = stringField(in, f.names);
    if (!v) co_return Result::error(v.takeError());
    if (*v) spec[f.out] = **v;
  }
  if (!spec.contains("project_id"))
    co_return Result::error(ErrorCode::BadRequest, "'project_id' is required");
  if (!isUuid(spec["project_id"]))
    co_return Result::error(ErrorCode::BadRequest, "'project_id' is not a uuid");
  if (!spec.contains("name") || spec["name"].get<std::string>().empty())
    co_return Result::error(ErrorCode::BadRequest, "'name' is required");
  if (spec.contains("id") && !isUuid(spec["id"]))
    co_return Result::error(ErrorCode::BadRequest, "'environment_id' is not a uuid");
  if (spec.contains("repo_url") != spec.contains("repo_branch") &&
      !(spec.value("repo_url", "").empty() && spec.value("repo_branch", "").empty()))
    co_return Result::error(ErrorCode::BadRequest, "'repository' and 'branch' must be given together");
  spec["project_id"] = lowerUuid(spec["project_id"]);
  spec["id"] = spec.contains("id") ? lowerUuid(spec["id"]) : newUuid();
  auto env = co_await blocking([&] { return store_.createEnvironment(spec); });
  if (!env) co_return Result::error(env.takeError());
  withDefaultSettings(*env);
  logLine("info", "environment_created", {{"environment", (*env)["id"]}, {"name", (*env)["name"]}});
  if (scheduler_) scheduler_->ensureRunning((*env)["id"]);
  co_return Result::of(std::move(*env));
}

asio::awaitable<Result> Service::listEnvironments() {
  auto envs = co_await blocking([&] { return store_.listEnvironments(); });
  if (!envs) co_return Result::error(envs.takeError());
  for (auto& e : *envs) withDefaultSettings(e);
  co_return Result::of(std::move(*envs));
}

asio::awaitable<Result> Service::getEnvironment(std::string id) {
  auto env = co_await blocking([&] { return store_.getEnvironment(lowerUuid(id)); });
  if (!env) co_return Result::error(env.takeError());
  withDefaultSettings(*env);
  co_return Result::of(std::move(*env));
}

asio::awaitable<Result> Service::modifyEnvironment(std::string id, nlohmann::json in) {
  nlohmann::json changes = nlohmann::json::object();
  struct F {
    const char* out;
    std::initializer_list<const char*> names;
  };
  for (const F& f : {F{"project_id", {"project_id"}}, F{"name", {"name"}},
                     F{"repo_url", {"repository", "repo_url"}}, F{"repo_branch", {"branch", "repo_branch"}},
                     F{"description", {"description"}}, F{"icon", {"icon"}}}) {
    auto v = stringField(in, f.names);
    if (!v) co_return Result::error(v.takeError());
    if (*v) changes[f.out] = **v;
  }
  if (changes.contains("name") && changes["name"].get<std::string>().empty())
    co_return Result::error(ErrorCode::BadRequest, "'name' must be a non-empty string");
  if (changes.contains("project_id")) {
    if (!isUuid(changes["project_id"]))
      co_return Result::error(ErrorCode::BadRequest, "'project_id' is not a uuid");
    changes["project_id"] = lowerUuid(changes["project_id"]);
  }
  auto env = co_await blocking([&] { return store_.updateEnvironment(lowerUuid(id), changes); });
  if (!env) co_return Result::error(env.takeError());
  withDefaultSettings(*env);
  co_return Result::of(std::move(*env));
}

asio::awaitable<Result> Service::deleteEnvironment(std::string id) {
  id = lowerUuid(id);
  auto env = co_await blocking([&] { return store_.getEnvironment(id); });
  if (!env) co_return Result::error(env.takeError());
  if (model::decodeEnvironmentSettings((*env)["settings"]).settings.protectedEnvironment)
    co_return Result::error(ErrorCode::Forbidden,
                            "environment " + id +
                                " is protected (protected_environment) and cannot be deleted");
  if (scheduler_) scheduler_->stop(id);
  logLine("info", "environment_deleted", {{"environment", id}});
  co_return fromError(co_await blocking([&] { return store_.deleteEnvironment(id); }));
}

asio::awaitable<Result> Service::clearEnvironment(std::string id) {
  id = lowerUuid(id);
  auto env = co_await blocking([&] { return store_.getEnvironment(id); });
  if (!env) co_return Result::error(env.takeError());
  if (model::decodeEnvironmentSettings((*env)["settings"]).settings.protectedEnvironment)
    co_return Result::error(ErrorCode::Forbidden,
                            "environment " + id +
                                " is protected (protected_environment) and cannot be cleared");
  bool halted = (*env)["halted"].get<bool>();
  if (scheduler_) scheduler_->stop(id);
  llvm::Error e = co_await blocking([&] { return store_.clearEnvironment(id); });
  if (e) co_return Result::error(std::move(e));
  if (scheduler_ && !halted) scheduler_->ensureRunning(id);
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::halt(std::string env) {
  env = lowerUuid(env);
  llvm::Error e = co_await blocking([&] { return store_.setHalted(env, true); });
  if (e) co_return Result::error(std::move(e));
  if (scheduler_) scheduler_->stop(env);
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::resume(std::string env) {
  env = lowerUuid(env);
  llvm::Error e = co_await blocking([&] { return store_.setHalted(env, false); });
  if (e) co_return Result::error(std::move(e));
  if (scheduler_) scheduler_->ensureRunning(env);
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::listSettings(std::string env) {
  auto s = co_await blocking([&] { return store_.getSettings(lowerUuid(env)); });
  if (!s) co_return Result::error(s.takeError());
  nlohmann::json settings = (*s)["settings"], definition = nlohmann::json::object();
  const nlohmann::json& prot = (*s)["protected"];
  for (const auto& d : model::settingDefs()) {
    bool isProtected = std::find(prot.begin(), prot.end(), nlohmann::json(d.name)) != prot.end();
    definition[d.name] = model::settingDefinitionJson(d, isProtected);
    if (!settings.contains(d.name)) settings[d.name] = d.defaultValue;
  }
  co_return Result::of(nlohmann::json{{"settings", settings}, {"definition", definition}});
}

asio::awaitable<Result> Service::getSetting(std::string env, std::string key) {
  const model::SettingDef* def = model::findSetting(key);
  if (!def) co_return Result::error(ErrorCode::NotFound, model::unknownSettingMessage(key));
  auto s = co_await blocking([&] { return store_.getSettings(lowerUuid(env)); });
  if (!s) co_return Result::error(s.takeError());
  const nlohmann::json& prot = (*s)["protected"];
  bool isProtected = std::find(prot.begin(), prot.end(), nlohmann::json(key)) != prot.end();
  nlohmann::json value = (*s)["settings"].contains(key) ? (*s)["settings"][key] : def->defaultValue;
  co_return Result::of(
      nlohmann::json{{"value", value}, {"definition", model::settingDefinitionJson(*def, isProtected)}});
}

asio::awaitable<Result> Service::setSetting(std::string env, std::string key, nlohmann::json value) {
  const model::SettingDef* def = model::findSetting(key);
  if (!def) co_return Result::error(ErrorCode::NotFound, model::unknownSettingMessage(key));
  auto typed = model::coerceSetting(*def, value);
  if (!typed) co_return Result::error(typed.takeError());
  std::optional<nlohmann::json> v = std::move(*typed);
  co_return fromError(co_await blocking([&] { return store_.writeSetting(lowerUuid(env), key, v); }));
}

asio::awaitable<Result> Service::resetSetting(std::string env, std::string key) {
  if (!model::findSetting(key))
    co_return Result::error(ErrorCode::NotFound, model::unknownSettingMessage(key));
  co_return fromError(
      co_await blocking([&] { return store_.writeSetting(lowerUuid(env), key, std::nullopt); }));
}

asio::awaitable<Result> Service::protectSettings(std::string env, nlohmann::json settings) {
  if (!settings.is_object()) co_return Result::error(ErrorCode::BadRequest, "'settings' must be an object");
  nlohmann::json typed = nlohmann::json::object();
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    const model::SettingDef* def = model::findSetting(it.key());
    if (!def) co_return Result::error(ErrorCode::NotFound, model::unknownSettingMessage(it.key()));
    auto v = model::coerceSetting(*def, it.value());
    if (!v) co_return Result::error(v.takeError());
    typed[it.key()] = *v;
  }
  co_return fromError(co_await blocking([&] { return store_.protectSettings(lowerUuid(env), typed); }));
}

asio::awaitable<Result> Service::missingFiles(nlohmann::json hashes) {
  if (!hashes.is_array())
    co_return Result::error(ErrorCode::BadRequest, "'files' must be a list of sha1 hashes");
  std::vector<std::string> list;
  for (const auto& h : hashes) {
    if (!h.is_string()) co_return Result::error(ErrorCode::BadRequest, "'files' must be a list of strings");
    list.push_back(h.get<std::string>());
  }
  auto missing = co_await blocking([&] { return store_.missingFiles(list); });
  if (!missing) co_return Result::error(missing.takeError());
  co_return Result::of(nlohmann::json(*missing));
}

asio::awaitable<Result> Service::uploadFile(std::string hash, std::string base64Content) {
  // Decoding and the sha1 check run on the pool (not the io thread); the insert joins the group commit.
  llvm::Error e = co_await blocking([&]() -> llvm::Error {
    std::string bytes;
    if (!decodeBase64(base64Content, bytes))
      return model::fail(ErrorCode::BadRequest, "'content' is not valid base64");
    std::string actual = artifact::sha1Hex(bytes);
    if (actual != hash)
      return model::fail(ErrorCode::BadRequest,
                         "file hash mismatch: 'id' is " + hash + " but the content has sha1 " + actual);
    return fileBatch_->submit(hash, std::move(bytes));
  });
  co_return fromError(std::move(e));
}

asio::awaitable<Result> Service::uploadFiles(std::vector<std::pair<std::string, std::string>> files) {
  // Decoding and hashing run on the pool; the batch is one transaction of its own (no group commit needed).
  llvm::Error e = co_await blocking([&]() -> llvm::Error {
    for (auto& [hash, content] : files) {
      std::string bytes;
      if (!decodeBase64(content, bytes))
        return model::fail(ErrorCode::BadRequest, "file " + hash + ": the content is not valid base64");
      std::string actual = artifact::sha1Hex(bytes);
      if (actual != hash)
        return model::fail(ErrorCode::BadRequest,
                           "file hash mismatch: file " + hash + " has content with sha1 " + actual);
      content = std::move(bytes);
    }
    return store_.putFiles(files);
  });
  co_return fromError(std::move(e));
}

asio::awaitable<Result> Service::fileExists(std::string hash) {
  auto f = co_await blocking([&] { return store_.getFile(hash); });
  if (!f) co_return Result::error(f.takeError());
  co_return Result::of(f->has_value());
}

asio::awaitable<Result> Service::getFile(std::string hash) {
  auto f = co_await blocking([&] { return store_.getFile(hash); });
  if (!f) co_return Result::error(f.takeError());
  if (!f->has_value()) co_return Result::error(ErrorCode::NotFound, "file " + hash + " not found");
  co_return Result::of(encodeBase64(**f));
}

} // namespace inm::service

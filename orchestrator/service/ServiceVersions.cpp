// Use cases for versions (orchestrator.md §3.4, §4): put_version validation and hashing, release with
// auto_deploy, version listings, the desired-state statuses and the per-attribute diff. put_version turns the
// request into store rows on the blocking pool (it is CPU work proportional to the version), then stores them
// in one transaction.
#include "PipedBody.h"
#include "StreamInput.h"
#include "Util.h"
#include "VersionBody.h"
#include "artifact/Artifact.h"
#include "artifact/AttributeHash.h"
#include "artifact/ResourceId.h"
#include "model/Ids.h"
#include "model/JsonNumbers.h"
#include "model/Settings.h"
#include "service/Log.h"
#include "service/Service.h"

#include <boost/asio/this_coro.hpp>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/Allocator.h>

#include <chrono>
#include <map>
#include <set>
#include <unordered_map>

namespace inm::service {

using model::ErrorCode;

namespace {

std::string compareString(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_object() || v.is_array()) return artifact::pythonJsonDumps(v, 4);
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return v.get<std::string>();
  return artifact::pythonJsonDumps(v);
}

} // namespace

asio::awaitable<Result> Service::reserveVersion(std::string env) {
  auto v = co_await blocking([&] { return store_.reserveVersion(lowerUuid(env)); });
  if (!v) co_return Result::error(v.takeError());
  co_return Result::of(*v);
}

asio::awaitable<bool> Service::autoDeploy(const std::string& env) {
  auto s = co_await blocking([&] { return store_.getSettings(env); });
  if (!s) {
    llvm::consumeError(s.takeError());
    co_return false;
  }
  co_return model::decodeEnvironmentSettings((*s)["settings"]).settings.autoDeploy;
}

asio::awaitable<Result> Service::putVersion(std::string env, std::shared_ptr<const nlohmann::json> body) {
  env = lowerUuid(env);
  auto started = std::chrono::steady_clock::now();
  int64_t buildMs = 0;
  llvm::Error stored = co_await blocking([&]() -> llvm::Error {
    llvm::Expected<Built> built = parseVersion(env, *body, false);
    buildMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
            .count();
    if (!built) return built.takeError();
    return store_.putVersion(built->in);
  });
  if (stored) co_return Result::error(std::move(stored));
  int64_t version = (*body)["version"].is_string() ? std::stoll((*body)["version"].get<std::string>())
                                                   : (*body)["version"].get<int64_t>();
  logLine("info", "version_stored",
          {{"environment", env},
           {"version", std::to_string(version)},
           {"resources", std::to_string((*body)["resources"].size())},
           {"build_ms", std::to_string(buildMs)},
           {"ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - started)
                                     .count())}});
  co_await afterStore(env, version);
  co_return Result::of(version);
}

asio::awaitable<Result> Service::putVersionFile(std::string env, std::string bodyFile) {
  env = lowerUuid(env);
  auto started = std::chrono::steady_clock::now();
  size_t count = 0;
  int64_t version = 0;
  llvm::Error stored = co_await blocking([&]() -> llvm::Error {
    FileChunks in(bodyFile);
    if (!in.ok()) return model::fail(ErrorCode::Internal, "cannot read the spooled request body " + bodyFile);
    return store_.putVersionStreamed(
        env, [&](store::ResourceSink& sink) -> llvm::Expected<store::StreamedVersion> {
          llvm::Expected<store::StreamedVersion> sv = streamVersion(in, sink, count);
          if (sv) version = sv->head.version;
          return sv;
        });
  });
  if (stored) co_return Result::error(std::move(stored));
  logLine("info", "version_stored",
          {{"environment", env},
           {"version", std::to_string(version)},
           {"resources", std::to_string(count)},
           {"streamed", "true"},
           {"ms", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - started)
                                     .count())}});
  co_await afterStore(env, version);
  co_return Result::of(version);
}

asio::awaitable<void> Service::afterStore(const std::string& env, int64_t version) {
  if (co_await autoDeploy(env)) {
    Result r = co_await release(env, version);
    if (!r.ok)
      logLine("warning", "auto_deploy_failed",
              {{"environment", env}, {"version", std::to_string(version)}, {"error", r.message}});
  }
  // Retention (orchestrator.md §4): keep available_versions_to_keep plus the latest released version.
  auto s = co_await blocking([&] { return store_.getSettings(env); });
  if (s) {
    int64_t keep = model::decodeEnvironmentSettings((*s)["settings"]).settings.availableVersionsToKeep;
    auto purged = co_await blocking([&] { return store_.purgeVersions(env, keep); });
    if (!purged) llvm::consumeError(purged.takeError());
  } else {
    llvm::consumeError(s.takeError());
  }
}

asio::awaitable<Result> Service::putPartialVersion(std::string env,
                                                   std::shared_ptr<const nlohmann::json> body) {
  env = lowerUuid(env);
  if (!body->is_object())
    co_return Result::error(ErrorCode::BadRequest, "the request body must be a JSON object");
  std::set<std::string> removed;
  if (auto r = body->find("removed_resource_sets"); r != body->end() && !r->is_null()) {
    if (!r->is_array())
      co_return Result::error(ErrorCode::BadRequest, "'removed_resource_sets' must be a list");
    for (const auto& x : *r) {
      if (!x.is_string())
        co_return Result::error(ErrorCode::BadRequest, "'removed_resource_sets' must hold set names");
      removed.insert(x.get<std::string>());
    }
  }
  bool allowCodeUpdate = false;
  if (auto a = body->find("allow_handler_code_update"); a != body->end() && !a->is_null()) {
    if (a->is_boolean())
      allowCodeUpdate = a->get<bool>();
    else if (a->is_string() && (*a == "true" || *a == "True" || *a == "false" || *a == "False"))
      allowCodeUpdate = *a == "true" || *a == "True";
    else
      co_return Result::error(ErrorCode::BadRequest, "'allow_handler_code_update' must be a boolean");
  }
  // Partial exports of one environment run one at a time (a mutex held on the pool thread around base lookup,
  // version reservation and store), so concurrent partials get consecutive versions and each sees the other's
  // sets. In the store they take the exclusive environment lock and re-check the base: a full put_version
  // that landed in between makes it retry here with the new base.
  std::shared_ptr<std::mutex> envMutex;
  {
    std::lock_guard<std::mutex> lock(partialMutex_);
    auto& m = partialLocks_[env];
    if (!m) m = std::make_shared<std::mutex>();
    envMutex = m;
  }
  int64_t version = 0, baseVersion = 0;
  llvm::Error stored = co_await blocking([&]() -> llvm::Error {
    std::lock_guard<std::mutex> envLock(*envMutex);
    for (int attempt = 0;; ++attempt) {
      llvm::Expected<int64_t> base = store_.partialBase(env);
      if (!base) return base.takeError();
      nlohmann::json baseResources = nlohmann::json::array();
      if (*base > 0) {
        llvm::Expected<nlohmann::json> rows = store_.versionResources(env, *base);
        if (!rows) return rows.takeError();
        baseResources = std::move(*rows);
      }
      llvm::Expected<int64_t> reserved = store_.reserveVersion(env);
      if (!reserved) return reserved.takeError();
      version = *reserved;
      baseVersion = *base;
      nlohmann::json copy = *body;
      copy["version"] = version;
      llvm::Expected<Built> built = parseVersion(env, copy, true);
      if (!built) return built.takeError();
      if (llvm::Error e = mergePartial(*built, baseResources, removed)) return e;
      built->in.partial = true;
      built->in.allowHandlerCodeUpdate = allowCodeUpdate;
      if (*base > 0) built->in.partialBase = *base;
      llvm::Error e = store_.putVersion(built->in);
      if (!e || attempt >= 4) return e;
      auto [code, message] = model::describe(std::move(e));
      if (code != ErrorCode::Conflict || message.rfind(store::kPartialBaseChanged, 0) != 0)
        return model::fail(code, message);
    }
  });
  if (stored) co_return Result::error(std::move(stored));
  logLine(
      "info", "partial_version_stored",
      {{"environment", env}, {"version", std::to_string(version)}, {"base", std::to_string(baseVersion)}});
  co_await afterStore(env, version);
  co_return Result::of(version);
}

asio::awaitable<Result> Service::release(std::string env, int64_t version) {
  env = lowerUuid(env);
  auto row = co_await blocking([&] { return store_.releaseVersion(env, version); });
  if (!row) co_return Result::error(row.takeError());
  logLine("info", "version_released", {{"environment", env}, {"version", std::to_string(version)}});
  if (scheduler_) {
    // A halted environment's scheduler stays stopped until resume.
    auto e = co_await blocking([&] { return store_.getEnvironment(env); });
    if (!e)
      llvm::consumeError(e.takeError());
    else if (!(*e)["halted"].get<bool>())
      scheduler_->ensureRunning(env);
  }
  co_return Result::of(std::move(*row));
}

asio::awaitable<Result> Service::listVersions(std::string env, int64_t start, int64_t limit) {
  if (start < 0 || limit <= 0)
    co_return Result::error(ErrorCode::BadRequest, "'start' must be >= 0 and 'limit' > 0");
  auto v = co_await blocking([&] { return store_.listVersions(lowerUuid(env), start, limit); });
  if (!v) co_return Result::error(v.takeError());
  co_return Result::of(std::move(*v));
}

asio::awaitable<Result> Service::getVersion(std::string env, int64_t version, bool includeLogs) {
  env = lowerUuid(env);
  auto row = co_await blocking([&] { return store_.getVersion(env, version); });
  if (!row) co_return Result::error(row.takeError());
  if (!includeLogs) {
    // The big part, the resources, comes as text from the database and is spliced in: at 100k resources
    // parsing it into a tree, rebuilding each entry and dumping it again took ~6 s. It is read in batches
    // and written as it comes (PipedBody): the 75 MB of a 100k version are never whole in memory.
    auto unknowns = co_await blocking([&] { return store_.versionUnknowns(env, version); });
    if (!unknowns) co_return Result::error(unknowns.takeError());
    std::string head = "{\"model\":" + row->dump() + ",\"resources\":";
    std::string tail = ",\"unknowns\":" + unknowns->dump() + "}";
    store::Store& store = store_;
    asio::any_io_executor reader = co_await asio::this_coro::executor;
    auto body = PipedBody::start(
        pool_, reader,
        [&store, env, version, head = std::move(head),
         tail = std::move(tail)](const PipedBody::Sink& sink) mutable -> llvm::Error {
          bool first = true;
          if (llvm::Error e = store.versionAnswerPieces(env, version, [&](std::string& piece) {
                if (first) piece.insert(0, head);
                first = false;
                return sink(piece);
              }))
            return e;
          if (!sink(tail))
            return model::fail(ErrorCode::Unavailable, "the reader of version " + std::to_string(version) +
                                                           " went away before its answer was complete");
          return llvm::Error::success();
        });
    // Until the first piece is there a failure (the version deleted meanwhile, the database down) is still an
    // error status; after it, a truncated transfer (BodyStream.h).
    llvm::Error started = co_await body->ready();
    if (started) co_return Result::error(std::move(started));
    co_return Result::ofStream(std::move(body));
  }
  auto res = co_await blocking([&] { return store_.versionResources(env, version); });
  if (!res) co_return Result::error(res.takeError());
  auto unknowns = co_await blocking([&] { return store_.versionUnknowns(env, version); });
  if (!unknowns) co_return Result::error(unknowns.takeError());
  nlohmann::json actions = nlohmann::json::object();
  if (includeLogs) {
    auto a = co_await blocking([&] { return store_.versionActions(env, version); });
    if (!a) co_return Result::error(a.takeError());
    actions = std::move(*a);
  }
  nlohmann::json resources = nlohmann::json::array();
  for (auto& r : *res) {
    nlohmann::json attrs = r["attributes"];
    std::string rid = r["resource_id"];
    std::string rvid = model::resourceVersionId(rid, version);
    nlohmann::json reqs = nlohmann::json::array();
    for (const auto& q : attrs.value("requires", nlohmann::json::array()))
      reqs.push_back(model::resourceVersionId(q.get_ref<const std::string&>(), version));
    attrs["requires"] = reqs;
    attrs["version"] = version;
    attrs["id"] = rvid;
    nlohmann::json out = {{"environment", env},
                          {"model", version},
                          {"resource_id", rid},
                          {"resource_version_id", rvid},
                          {"resource_type", r["resource_type"]},
                          {"agent", r["agent"]},
                          {"resource_id_value", r["resource_id_value"]},
                          {"attributes", attrs},
                          {"attribute_hash", r["attribute_hash"]},
                          {"status", r["status"]},
                          {"id_fields", nlohmann::json::object()}};
    if (includeLogs) out["actions"] = actions.value(rid, nlohmann::json::array());
    resources.push_back(std::move(out));
  }
  co_return Result::of(nlohmann::json{
      {"model", std::move(*row)}, {"resources", std::move(resources)}, {"unknowns", std::move(*unknowns)}});
}

asio::awaitable<Result> Service::deleteVersion(std::string env, int64_t version) {
  llvm::Error e = co_await blocking([&] { return store_.deleteVersion(lowerUuid(env), version); });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(nullptr);
}

asio::awaitable<Result> Service::desiredStates(std::string env) {
  auto v = co_await blocking([&] { return store_.desiredStates(lowerUuid(env)); });
  if (!v) co_return Result::error(v.takeError());
  co_return Result::of(std::move(*v));
}

asio::awaitable<Result> Service::desiredStateResources(std::string env, int64_t version) {
  auto res = co_await blocking([&] { return store_.versionResources(lowerUuid(env), version); });
  if (!res) co_return Result::error(res.takeError());
  nlohmann::json out = nlohmann::json::array();
  for (auto& r : *res) {
    std::string rid = r["resource_id"];
    llvm::Expected<artifact::ResourceId> id = artifact::parseResourceId(rid);
    std::string attribute = id ? id->attribute : std::string();
    if (!id) llvm::consumeError(id.takeError());
    out.push_back({{"resource_id", rid},
                   {"resource_version_id", model::resourceVersionId(rid, version)},
                   {"id_details",
                    {{"resource_type", r["resource_type"]},
                     {"agent", r["agent"]},
                     {"attribute", attribute},
                     {"resource_id_value", r["resource_id_value"]}}},
                   {"requires", r["attributes"].value("requires", nlohmann::json::array())},
                   {"status", r["status"]},
                   {"resource_set", r["resource_set"]}});
  }
  co_return Result::of(std::move(out));
}

asio::awaitable<Result> Service::diff(std::string env, int64_t from, int64_t to) {
  if (from >= to)
    co_return Result::error(ErrorCode::BadRequest, "the diff needs from < to (got " + std::to_string(from) +
                                                       " and " + std::to_string(to) + ")");
  env = lowerUuid(env);
  // Only the resources whose attributes differ come back from the database (and are parsed); at 100k
  // resources reading and parsing both versions whole took 5-9 s.
  auto changed = co_await blocking([&] { return store_.changedResources(env, from, to); });
  if (!changed) co_return Result::error(changed.takeError());
  std::map<std::string, const nlohmann::json*> byId; // byte order of the ids, as the answer lists them
  for (const auto& c : *changed) byId[c["resource_id"].get<std::string>()] = &c;
  nlohmann::json out = nlohmann::json::array();
  static const nlohmann::json kEmpty = nlohmann::json::object();
  for (const auto& [id, c] : byId) {
    const nlohmann::json& fromAttrs = (*c)["from"];
    const nlohmann::json& toAttrs = (*c)["to"];
    bool l = !fromAttrs.is_null(), r = !toAttrs.is_null();
    const char* status = !l ? "added" : !r ? "deleted" : "modified";
    const nlohmann::json& la = l ? fromAttrs : kEmpty;
    const nlohmann::json& ra = r ? toAttrs : kEmpty;
    std::set<std::string> keys;
    for (auto it = la.begin(); it != la.end(); ++it) keys.insert(it.key());
    for (auto it = ra.begin(); it != ra.end(); ++it) keys.insert(it.key());
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto& k : keys) {
      nlohmann::json fv = la.contains(k) ? la[k] : nlohmann::json(),
                     tv = ra.contains(k) ? ra[k] : nlohmann::json();
      if (l && r && model::sameJson(fv, tv)) continue; // a float never equals an int here
      attrs[k] = {{"from_value", fv},
                  {"to_value", tv},
                  {"from_value_compare", compareString(fv)},
                  {"to_value_compare", compareString(tv)}};
    }
    // Equal attributes under a different hash: a change the stored jsonb cannot show (-0.0 read back as 0.0),
    // still redeployed, so still listed (modified, no attributes); equal hash and attributes: left out.
    if (l && r && attrs.empty() && (*c)["same_hash"] != false) continue;
    out.push_back({{"resource_id", id}, {"status", status}, {"attributes", attrs}});
  }
  co_return Result::of(std::move(out));
}

namespace {

/// `plugins/a/b.py` or `plugins/a/b/__init__.py` for `inmanta_plugins.<module>.a.b`, by whether `sourcePath`
/// names an __init__.py; "" (refused later as unsafe) when the name is not under inmanta_plugins.
std::string moduleRelativePath(const std::string& pyModule, const std::string& sourcePath) {
  if (pyModule.rfind("inmanta_plugins.", 0) != 0) return "";
  std::string rest = pyModule.substr(16);
  size_t dot = rest.find('.');
  std::string sub = dot == std::string::npos ? "" : rest.substr(dot + 1);
  std::replace(sub.begin(), sub.end(), '.', '/');
  bool package =
      sourcePath.size() >= 12 && sourcePath.compare(sourcePath.size() - 12, 12, "/__init__.py") == 0;
  if (sub.empty()) return "plugins/__init__.py";
  return "plugins/" + sub + (package ? "/__init__.py" : ".py");
}

} // namespace

asio::awaitable<Result> Service::uploadCode(std::string env, int64_t version, nlohmann::json resources) {
  if (!resources.is_object()) co_return Result::error(ErrorCode::BadRequest, "'resources' must be an object");
  // Group the files by Inmanta module (the second part of inmanta_plugins.<module>...).
  std::map<std::string, nlohmann::json> modules;
  for (auto t = resources.begin(); t != resources.end(); ++t) {
    if (!t->is_object())
      co_return Result::error(ErrorCode::BadRequest, "resources." + t.key() + " must be an object");
    for (auto f = t->begin(); f != t->end(); ++f) {
      if (!f->is_array() || f->size() < 2 || !(*f)[1].is_string())
        co_return Result::error(ErrorCode::BadRequest, "resources." + t.key() + "." + f.key() +
                                                           " must be [path, module, requirements]");
      std::string pyModule = (*f)[1];
      std::string mod = pyModule;
      if (mod.rfind("inmanta_plugins.", 0) == 0) mod = mod.substr(16);
      mod = mod.substr(0, mod.find('.'));
      auto& m = modules[mod];
      if (m.is_null())
        m = {{"name", mod}, {"files", nlohmann::json::object()}, {"requirements", nlohmann::json::array()}};
      std::string path = (*f)[0].is_string() ? (*f)[0].get<std::string>() : std::string();
      // Inmanta's own exporter sends each file's absolute source path (…/libs/std/plugins/x.py or
      // …/site-packages/inmanta_plugins/std/x.py): the module-relative path follows from the Python module
      // name, the file name telling a package (__init__.py) from a plain module.
      if (!path.empty() && path[0] == '/') path = moduleRelativePath(pyModule, path);
      m["files"][f.key()] = {
          {"hash", f.key()}, {"python_module", pyModule}, {"is_byte_code", false}, {"path", path}};
      if (f->size() > 2 && (*f)[2].is_array())
        for (const auto& q : (*f)[2])
          if (std::find(m["requirements"].begin(), m["requirements"].end(), q) == m["requirements"].end())
            m["requirements"].push_back(q);
    }
  }
  nlohmann::json list = nlohmann::json::array();
  for (auto& [name, m] : modules) {
    // The module version is the sha1 of its sorted file hashes and paths: the same code registers once.
    std::string joined;
    nlohmann::json files = nlohmann::json::array();
    for (auto it = m["files"].begin(); it != m["files"].end(); ++it) {
      joined += it.key() + ":" + it.value().value("path", std::string()) + ";";
      files.push_back(it.value());
    }
    list.push_back({{"name", name},
                    {"version", artifact::sha1Hex(joined)},
                    {"requirements", m["requirements"]},
                    {"files", files}});
  }
  env = lowerUuid(env);
  llvm::Error e = co_await blocking([&] { return store_.putCode(env, version, list); });
  if (e) co_return Result::error(std::move(e));
  co_return Result::of(nullptr);
}

} // namespace inm::service

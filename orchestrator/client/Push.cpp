// The export push sequence (see include/client/Push.h). The artifact text is rewritten in one pass
// (artifact/PutVersion.h: our `undefined` key moves to `resource_state`, `requires` get the `,v=<version>`
// suffix the 11.5.5 exporter sends) and spliced into the put_version body: the resources are never parsed
// into a tree.
// TODO(#10): read the artifact through the shared artifact/ library once it lands on main.
#include "client/Push.h"

#include "artifact/PutVersion.h"
#include "client/DeltaState.h"
#include "model/Ids.h"
#include "model/Vocabulary.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>

namespace inm::client {

namespace {

llvm::Error fail(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The unversioned id of a (possibly) versioned one.
std::string stripVersion(const std::string& id) { return std::string(model::withoutVersion(id)); }

/// "<what> took N.NNN s" on `log`, for the -vv/-vvv phase log.
class PhaseLog {
 public:
  explicit PhaseLog(llvm::raw_ostream* log) : log_(log), t_(std::chrono::steady_clock::now()) {}
  void done(const std::string& what) {
    auto now = std::chrono::steady_clock::now();
    if (log_) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double>(now - t_).count());
      *log_ << "  push: " << what << " took " << buf << " s\n";
    }
    t_ = now;
  }

 private:
  llvm::raw_ostream* log_;
  std::chrono::steady_clock::time_point t_;
};

/// Our extensions a server announces in serverstatus' features (docs/server.md): the file-batch limit (0:
/// none) and delta versions. A reference server, or ours with an extension off, announces none.
struct ServerFeatures {
  uint64_t fileBatchLimit = 0;
  bool deltaVersions = false;
};

ServerFeatures serverFeatures(Client& client) {
  ServerFeatures out;
  auto status = client.call("GET", "/api/v1/serverstatus");
  if (!status) {
    llvm::consumeError(status.takeError());
    return out;
  }
  auto data = status->find("data");
  if (data == status->end() || !data->is_object()) return out;
  auto features = data->find("features");
  if (features == data->end() || !features->is_array()) return out;
  for (const nlohmann::json& f : *features) {
    if (!f.is_object()) continue;
    std::string name = f.value("name", "");
    if (name == "file_batch" && f.contains("value") && f["value"].is_number_unsigned())
      out.fileBatchLimit = f["value"].get<uint64_t>();
    if (name == "delta_version" && f.value("value", 0) == 1) out.deltaVersions = true;
  }
  return out;
}

/// The reference protocol: one `PUT /api/v1/file/<hash>` per file, over parallel keep-alive connections.
std::vector<Request> singleUploads(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<Request> out;
  out.reserve(files.size());
  for (const auto& [hash, b64] : files) {
    Request up;
    up.method = "PUT";
    up.path = "/api/v1/file/" + encodeSegment(hash);
    up.body = nlohmann::json{{"id", hash}, {"content", b64}}.dump();
    out.push_back(std::move(up));
  }
  return out;
}

/// Uploads `files`: in batches of `PUT /api/v1/files` when the server announces the extension (a file too
/// large for a batch goes alone), else — or when the first batch meets a 404/405 — one request per file.
llvm::Error uploadFiles(Client& client, const std::vector<std::pair<std::string, std::string>>& files,
                        const PushOptions& options, uint64_t batchLimit, PushResult& result) {
  uint64_t limit = options.fileBatches ? batchLimit : 0;
  std::vector<std::pair<std::string, std::string>> singles;
  std::vector<Request> batches;
  if (limit == 0) {
    singles = files;
  } else {
    // Smaller than the limit so that several batches travel (and are hashed and stored) at once: about a
    // half of the files each (two cores' worth of server and PostgreSQL work at once), at most 2 MiB, at
    // least 256 KiB.
    uint64_t total = 0;
    for (const auto& f : files) total += f.second.size();
    uint64_t target = std::min<uint64_t>(limit, std::clamp<uint64_t>(total / 2 + 1, 256u << 10, 2u << 20));
    std::string body;
    uint64_t size = 0;
    auto flush = [&]() {
      if (size == 0 && body.empty()) return;
      Request r;
      r.method = "PUT";
      r.path = "/api/v1/files";
      r.body = body + "}}";
      batches.push_back(std::move(r));
      body.clear();
      size = 0;
    };
    for (const auto& [hash, b64] : files) {
      if (b64.size() > target) {
        singles.emplace_back(hash, b64);
        continue;
      }
      if (size + b64.size() > target) flush();
      // Escaped like any JSON string, although sha1 hex and base64 never need it.
      body += body.empty() ? "{\"files\": {" : ", ";
      body += nlohmann::json(hash).dump();
      body += ": ";
      body += nlohmann::json(b64).dump();
      size += b64.size();
    }
    flush();
  }
  if (!batches.empty()) {
    // Four in flight keep the server's pool busy; more would only hold more batches in its memory. All at
    // once: a batch is idempotent, so a server that announced the extension but does not route it (a proxy in
    // between?) answers 404/405 to each and everything goes again by the reference protocol.
    if (llvm::Error e = client.sendAll(batches, std::min(4u, options.parallelUploads))) {
      Failure f = takeFailure(std::move(e));
      if (f.status != 404 && f.status != 405) return fail(f.text);
      batches.clear();
      singles = files;
    } else {
      result.fileBatches = batches.size();
    }
  }
  if (!singles.empty())
    if (llvm::Error e = client.sendAll(singleUploads(singles), options.parallelUploads)) return e;
  return llvm::Error::success();
}

/// Stats the artifact's files and uploads the missing ones (step 2 of the push) over its own client: it runs
/// on a thread of its own while the caller rewrites the resources. Fills the file counts of `result` and
/// `hashes` with every file of the artifact. Files in `known` (stored by an earlier push of this exporter
/// to the version a delta is based on; the server never deletes files) are not even asked about.
llvm::Error pushFiles(const Endpoint& endpoint, const std::string& artifact, const PushOptions& options,
                      uint64_t batchLimit, const std::unordered_set<std::string>* known,
                      std::vector<std::string>& hashes, PushResult& result) {
  auto parsed = artifact::artifactFiles(artifact);
  if (!parsed) return parsed.takeError();
  const nlohmann::json& files = *parsed;
  for (auto it = files.begin(); it != files.end(); ++it) hashes.push_back(it.key());
  nlohmann::json stat = {{"files", nlohmann::json::array()}};
  for (const std::string& h : hashes)
    if (!known || !known->count(h)) stat["files"].push_back(h);
  if (stat["files"].empty()) {
    result.filesKnown = files.size();
    return llvm::Error::success();
  }
  Client client(endpoint);
  auto missing = client.call("POST", "/api/v1/file", &stat);
  if (!missing) return missing.takeError();
  std::vector<std::pair<std::string, std::string>> uploads; // (hash, base64 content)
  std::set<std::string> asked;                              // a hash the server lists twice is uploaded once
  if ((*missing).contains("files") && (*missing)["files"].is_array()) {
    for (const nlohmann::json& h : (*missing)["files"]) {
      if (!h.is_string() || !files.contains(h.get<std::string>()))
        return fail("the server asked for a file this export does not have: " + h.dump());
      const std::string& hash = h.get_ref<const std::string&>();
      if (!asked.insert(hash).second) continue;
      const nlohmann::json& content = files[hash];
      std::string b64;
      if (content.is_string())
        b64 = base64(content.get_ref<const std::string&>());
      else if (content.is_object() && content.contains("base64") && content["base64"].is_string())
        b64 = content["base64"].get<std::string>();
      else
        return fail("the export artifact's file " + hash + " is neither a string nor {\"base64\": …}");
      uploads.emplace_back(hash, std::move(b64));
    }
  }
  result.filesUploaded = uploads.size();
  result.filesKnown = files.size() - uploads.size();
  if (uploads.empty()) return llvm::Error::success();
  return uploadFiles(client, uploads, options, batchLimit, result);
}

/// Joins a thread when the scope ends, also on an early return.
struct Joiner {
  std::thread& thread;
  ~Joiner() {
    if (thread.joinable()) thread.join();
  }
};

} // namespace

llvm::Expected<int64_t> reserveVersion(Client& client) {
  nlohmann::json body = nlohmann::json::object();
  auto res = client.call("POST", "/api/v2/reserve_version", &body);
  if (!res) return res.takeError();
  const nlohmann::json& data = (*res)["data"];
  if (data.is_number_integer()) return data.get<int64_t>();
  if (data.is_string()) {
    try {
      return std::stoll(data.get<std::string>());
    } catch (...) {
    }
  }
  return fail("reserve_version answered without an integer `data`: " + res->dump().substr(0, 200));
}

namespace {

/// The remembered state when it describes the environment's latest version on this server (same content
/// token), else nullopt: the push is then a whole one.
std::optional<DeltaState> deltaBaseState(Client& client, const PushOptions& options, const ServerFeatures& f,
                                         std::string& why) {
  if (options.partial || options.deltaStatePath.empty() || !f.deltaVersions) return std::nullopt;
  std::optional<DeltaState> prev = readDeltaState(options.deltaStatePath);
  if (!prev || prev->token.empty() || prev->server != client.endpoint().address() ||
      prev->environment != lower(client.endpoint().environment))
    return std::nullopt;
  auto base = client.call("GET", "/api/v2/version/delta_base");
  if (!base) {
    llvm::consumeError(base.takeError());
    return std::nullopt;
  }
  const nlohmann::json& data = (*base)["data"];
  if (!data.is_object() || !data["version"].is_number_integer()) return std::nullopt;
  int64_t latest = data["version"].get<int64_t>();
  if (latest != prev->version || !data["token"].is_string() ||
      data["token"].get<std::string>() != prev->token) {
    why = "the environment's latest version is " + std::to_string(latest) + ", not version " +
          std::to_string(prev->version) +
          " as this exporter pushed it last (another export, a deleted version " +
          "or a cleared environment); pushing the whole version";
    return std::nullopt;
  }
  return prev;
}

/// What changed against the base: indexes into parts.entries of the new and changed resources (another
/// fingerprint or resource set), and the ids the base has and the artifact has not.
struct Delta {
  std::vector<size_t> changed;
  std::vector<std::string> removed;
};

Delta computeDelta(const artifact::PutVersionParts& parts, const nlohmann::json& setOf,
                   const DeltaState& base) {
  Delta d;
  size_t matched = 0;
  for (size_t i = 0; i < parts.entries.size(); ++i) {
    const artifact::PutVersionEntry& e = parts.entries[i];
    auto set = setOf.find(e.id);
    std::string setName = set != setOf.end() ? set->get<std::string>() : std::string();
    auto it = base.resources.find(e.id);
    if (it != base.resources.end()) ++matched;
    if (it == base.resources.end() || it->second.fingerprint[0] != e.fingerprint[0] ||
        it->second.fingerprint[1] != e.fingerprint[1] || it->second.resourceSet != setName)
      d.changed.push_back(i);
  }
  if (matched < base.resources.size()) {
    std::unordered_set<std::string_view> now;
    now.reserve(parts.entries.size());
    for (const auto& e : parts.entries) now.insert(e.id);
    for (const auto& [id, r] : base.resources)
      if (!now.count(id)) d.removed.push_back(id);
    std::sort(d.removed.begin(), d.removed.end());
  }
  return d;
}

/// The state to remember after `version` was stored whole or as a delta.
DeltaState nextState(Client& client, const artifact::PutVersionParts& parts, const nlohmann::json& setOf,
                     int64_t version, std::string token, std::vector<std::string>& files) {
  DeltaState st;
  st.server = client.endpoint().address();
  st.environment = lower(client.endpoint().environment);
  st.version = version;
  st.token = std::move(token);
  st.resources.reserve(parts.entries.size());
  for (const auto& e : parts.entries) {
    DeltaResource r;
    r.fingerprint[0] = e.fingerprint[0];
    r.fingerprint[1] = e.fingerprint[1];
    if (auto set = setOf.find(e.id); set != setOf.end()) r.resourceSet = set->get<std::string>();
    st.resources.emplace(e.id, std::move(r));
  }
  st.files.insert(files.begin(), files.end());
  return st;
}

} // namespace

llvm::Expected<PushResult> pushArtifact(Client& client, const std::string& artifact, int64_t version,
                                        const PushOptions& options, llvm::raw_ostream* log) {
  PushResult result;
  PhaseLog phase(log);
  // 1. The server's extensions, and whether the remembered state is its latest version (a delta is then
  // possible: docs/server.md "Delta versions").
  ServerFeatures features = serverFeatures(client);
  std::optional<DeltaState> base = deltaBaseState(client, options, features, result.deltaFallback);
  if (log && !result.deltaFallback.empty()) *log << "  push: " << result.deltaFallback << "\n";
  // 2. Files (stat, then upload the missing ones) on a thread and connections of their own, while this thread
  // rewrites the resources and serialises the put_version body: the uploads are server and PostgreSQL work,
  // the rewrite is this process's. Every file is stored before the version is sent (below), as with the
  // reference exporter, so no server ever sees a version whose files are still missing.
  PushResult files;
  std::vector<std::string> fileHashes;   // every file of the artifact (for the next delta state)
  std::optional<llvm::Error> filesError; // set by the uploader
  double filesSeconds = 0;
  std::thread uploader([&] {
    auto started = std::chrono::steady_clock::now();
    filesError = pushFiles(client.endpoint(), artifact, options, features.fileBatchLimit,
                           base ? &base->files : nullptr, fileHashes, files);
    filesSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  });
  Joiner joinUploader{uploader};
  auto parts = artifact::toPutVersionBody(artifact, version, /*withFiles=*/false);
  if (!parts) {
    uploader.join();
    if (filesError) llvm::consumeError(std::move(*filesError));
    return parts.takeError();
  }
  std::set<std::string>& types = parts->types;
  result.resources = parts->resources;
  phase.done("reading the artifact");

  // 4. The version.
  nlohmann::json resourceSets = nlohmann::json::object();
  for (auto it = parts->resourceSets.begin(); it != parts->resourceSets.end(); ++it)
    if (it.value().is_array())
      for (const nlohmann::json& id : it.value())
        if (id.is_string()) resourceSets[stripVersion(id.get<std::string>())] = it.key();
  // The body is assembled as text around the rewritten resources array, which is never parsed.
  nlohmann::json tail = nlohmann::json::object();
  tail["resource_state"] = std::move(parts->resourceState);
  tail["resource_sets"] = std::move(resourceSets);
  const nlohmann::json& setOf = tail["resource_sets"]; // unversioned id -> set name
  tail["unknowns"] = nlohmann::json::array();
  tail["version_info"] = {{"export_metadata", options.exportMetadata}};
  if (options.partial) {
    nlohmann::json removed = nlohmann::json::array();
    for (const std::string& s : options.removedResourceSets) removed.push_back(s);
    tail["removed_resource_sets"] = std::move(removed);
  } else {
    tail["compiler_version"] = options.compilerVersion;
  }
  tail["pip_config"] = {{"index_url", nullptr},
                        {"extra_index_url", nlohmann::json::array()},
                        {"pre", nullptr},
                        {"use_system_config", false}};
  auto assemble = [&]() {
    std::string rest = tail.dump(); // "{...}": splice its members after the resources
    std::string body;
    body.reserve(parts->resourcesJson.size() + rest.size() + 64);
    body += '{';
    if (!options.partial) body += "\"version\": " + std::to_string(version) + ", ";
    body += "\"resources\": ";
    body += parts->resourcesJson;
    if (rest.size() > 2) {
      body += ", ";
      body.append(rest, 1, rest.size() - 1);
    } else {
      body += '}';
    }
    return body;
  };

  // Compressed here, not when sent: this thread would otherwise only wait for the file uploads.
  auto compress = [](Request& r) {
    if (r.body.size() < 1024) return; // the size from which Client gzips a body (orchestrator.md §18)
    r.body = gzip(r.body, r.body.size() > (1u << 20) ? 1 : 6);
    r.gzipped = true;
  };
  Request put;
  put.method = "PUT";
  put.path = options.partial ? "/api/v2/version/partial" : "/api/v1/version";
  Request deltaPut;
  std::optional<Delta> delta;
  if (base) {
    delta = computeDelta(*parts, setOf, *base);
    // Worth it unless most of a large version changed (the whole one is then about as small and simpler).
    if ((delta->changed.size() + delta->removed.size()) * 2 > parts->entries.size() &&
        parts->entries.size() >= 1000)
      delta.reset();
  }
  if (delta) {
    // The delta body: put_version's fields, the changed resources' texts cut out of the rewritten array, and
    // resource_state/resource_sets of those resources only (the kept ones keep the base's).
    nlohmann::json deltaTail = nlohmann::json::object();
    for (auto it = tail.begin(); it != tail.end(); ++it)
      if (it.key() != "resource_state" && it.key() != "resource_sets") deltaTail[it.key()] = it.value();
    deltaTail["resource_state"] = nlohmann::json::object();
    deltaTail["resource_sets"] = nlohmann::json::object();
    for (size_t i : delta->changed) {
      const artifact::PutVersionEntry& e = parts->entries[i];
      if (e.undefined)
        deltaTail["resource_state"][e.id] = std::string(model::spelling(model::DeployStatus::Undefined));
      if (auto set = setOf.find(e.id); set != setOf.end()) deltaTail["resource_sets"][e.id] = *set;
    }
    deltaTail["base_version"] = base->version;
    deltaTail["base_token"] = base->token;
    deltaTail["removed_resources"] = delta->removed;
    std::string& b = deltaPut.body;
    b = "{\"version\": " + std::to_string(version) + ", \"resources\": [";
    for (size_t k = 0; k < delta->changed.size(); ++k) {
      const artifact::PutVersionEntry& e = parts->entries[delta->changed[k]];
      if (k) b += ",\n";
      b.append(parts->resourcesJson, e.begin, e.end - e.begin);
    }
    std::string rest = deltaTail.dump();
    b += "], ";
    b.append(rest, 1, rest.size() - 1);
    deltaPut.method = "PUT";
    deltaPut.path = "/api/v2/version/delta";
    size_t bytes = b.size();
    compress(deltaPut);
    phase.done("serialising the delta against version " + std::to_string(base->version) + " (" +
               std::to_string(delta->changed.size()) + " changed, " + std::to_string(delta->removed.size()) +
               " removed, " + std::to_string(bytes) + " bytes)");
  } else {
    put.body = assemble();
    size_t bodyBytes = put.body.size();
    compress(put);
    phase.done("serialising put_version (" + std::to_string(bodyBytes) + " bytes)");
  }

  uploader.join();
  if (*filesError) return std::move(*filesError);
  result.filesUploaded = files.filesUploaded;
  result.filesKnown = files.filesKnown;
  result.fileBatches = files.fileBatches;
  if (log) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", filesSeconds);
    *log << "  push: uploading " << result.filesUploaded << " files (" << result.filesKnown
         << " already on the server; " << result.fileBatches << " batches) took " << buf
         << " s (alongside the rewrite)\n";
  }
  phase.done("waiting for the file uploads");

  // 3. Handler code: the modules' Python sources of the artifact's python_code (their contents went up with
  // the files above), registered for every resource type like the reference; without Python code the types
  // get empty sources so a server that insists on code for the version (11.5.5 aborts on a non-200 here) has
  // its rows.
  if (!options.partial) {
    nlohmann::json sources = artifact::codeSources(parts->pythonCode);
    nlohmann::json code = {{"id", version}, {"resources", nlohmann::json::object()}};
    for (const std::string& t : types) code["resources"][t] = sources;
    auto res = client.call("PUT", "/api/v1/codebatched/" + std::to_string(version), &code);
    if (!res) return res.takeError();
    phase.done("codebatched");
  }

  std::optional<std::string> newToken; // the stored version's content token, when known
  std::thread stateWriter;             // writes the next delta state (below)
  llvm::Error stateError = llvm::Error::success();
  Joiner joinStateWriter{stateWriter};
  if (delta) {
    auto sent = client.send(deltaPut);
    if (sent) {
      auto j = sent->json();
      if (j && (*j)["data"].is_object() && (*j)["data"]["token"].is_string())
        newToken = (*j)["data"]["token"].get<std::string>();
      else if (!j)
        llvm::consumeError(j.takeError());
      result.delta = true;
      result.deltaBase = base->version;
      result.changed = delta->changed.size();
      result.removed = delta->removed.size();
    } else {
      // Refused (the base is no longer the latest, was deleted, or anything else the server did not take):
      // the whole version goes up instead. Authentication and an unreachable database fail either way.
      Failure f = takeFailure(sent.takeError());
      if (f.status == 401 || f.status == 403 || f.status == 503 || f.status == 0) return fail(f.text);
      result.deltaFallback = "the server refused the delta against version " + std::to_string(base->version) +
                             " (" + std::to_string(f.status) + ": " + f.message +
                             "); pushing the whole version";
      if (log) *log << "  push: " << result.deltaFallback << "\n";
      put.body = assemble();
      compress(put);
      delta.reset();
    }
    phase.done("delta put_version");
  }
  auto stored = delta ? llvm::Expected<Response>(Response{}) : client.send(put);
  if (!stored) {
    Failure f = takeFailure(stored.takeError());
    // An older server that does not know pip_config: the reference exporter retries without it.
    if (f.status != 400 || f.message.find("pip_config") == std::string::npos) return fail(f.text);
    tail.erase("pip_config");
    put.body = assemble();
    if (put.gzipped) put.body = gzip(put.body, put.body.size() > (1u << 20) ? 1 : 6);
    stored = client.send(put);
    if (!stored) return stored.takeError();
  }
  if (options.partial) {
    auto j = stored->json();
    if (!j) return j.takeError();
    if (!(*j)["data"].is_number_integer())
      return fail("the partial export's answer has no integer `data`: " + stored->body.substr(0, 200));
    version = (*j)["data"].get<int64_t>();
  }
  result.version = version;
  if (!delta) phase.done("put_version");
  // Remember what the server now has, for the next export's delta (a whole push asks for the token).
  if (!options.partial && !options.deltaStatePath.empty() && features.deltaVersions) {
    if (!newToken) {
      auto latest = client.call("GET", "/api/v2/version/delta_base");
      if (latest && (*latest)["data"].is_object() &&
          (*latest)["data"].value("version", int64_t(-1)) == version &&
          (*latest)["data"]["token"].is_string())
        newToken = (*latest)["data"]["token"].get<std::string>();
      else if (!latest)
        llvm::consumeError(latest.takeError());
    }
    // Built and written on a thread of its own, alongside the release (joined before returning).
    stateWriter = std::thread([&, token = newToken.value_or("")] {
      DeltaState next = nextState(client, *parts, setOf, version, token, fileHashes);
      stateError = writeDeltaState(options.deltaStatePath, next);
    });
  }

  // 5. -d: release it.
  if (options.release) {
    nlohmann::json body = {{"id", version}, {"push", false}};
    auto rel = client.call("POST", "/api/v1/version/" + std::to_string(version), &body);
    if (!rel) {
      // auto_deploy (on by default) releases a stored version at once: the version is stored and deploying,
      // so the 409 "already released" answer is a success for -d, as for the reference's exporter.
      Failure f = takeFailure(rel.takeError());
      if (f.status != 409 || f.message.find("already released") == std::string::npos) return fail(f.text);
      result.releasedByServer = true;
    }
    phase.done("release");
  }
  if (stateWriter.joinable()) {
    stateWriter.join();
    phase.done("writing the delta state (alongside the release)");
  }
  // Only the next export's speed depends on the state: without it, that one pushes the whole version.
  if (stateError && log)
    *log << "  push: " << llvm::toString(std::move(stateError)) << "\n";
  else
    llvm::consumeError(std::move(stateError));
  return result;
}

} // namespace inm::client

// The export push sequence (see include/client/Push.h). The artifact is parsed once with nlohmann; its
// resources array is edited in place (our `undefined` key moves to `resource_state`, `requires` get the
// `,v=<version>` suffix the 11.5.5 exporter sends) and moved into the put_version payload, which is dumped once.
// TODO(#10): read the artifact through the shared artifact/ library once it lands on main.
#include "client/Push.h"

#include <set>

namespace inm::client {

namespace {

llvm::Error fail(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

/// The unversioned id: the versioned one without the trailing ",v=<digits>" after the closing ']'.
std::string stripVersion(const std::string& id) {
  size_t p = id.rfind("],v=");
  return p == std::string::npos ? id : id.substr(0, p + 1);
}

/// The resource type of an id: everything before the first '['.
std::string resourceType(const std::string& id) {
  return id.substr(0, id.find('['));
}

}  // namespace

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

llvm::Expected<PushResult> pushArtifact(Client& client, const std::string& artifact, int64_t version,
                                        const PushOptions& options, llvm::raw_ostream* log) {
  PushResult result;
  nlohmann::json doc = nlohmann::json::parse(artifact, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return fail("the export artifact is not a JSON object");
  if (doc.value("format_version", 0) != 1)
    return fail("the export artifact has format_version " + doc.value("format_version", nlohmann::json()).dump() +
                ", this client reads 1");
  nlohmann::json& resources = doc["resources"];
  if (!resources.is_array()) return fail("the export artifact has no `resources` array");
  const std::string suffix = ",v=" + std::to_string(version);

  // 1. Resources: the envelope edits, and the state / type maps the other calls need.
  nlohmann::json resourceState = nlohmann::json::object();
  std::set<std::string> types;
  for (nlohmann::json& r : resources) {
    if (!r.is_object() || !r.contains("id") || !r["id"].is_string())
      return fail("the export artifact has a resource without a string `id`");
    const std::string& id = r["id"].get_ref<const std::string&>();
    types.insert(resourceType(id));
    auto undef = r.find("undefined");
    if (undef != r.end()) {
      if (undef->is_boolean() && undef->get<bool>()) resourceState[stripVersion(id)] = "undefined";
      r.erase(undef);
    }
    auto req = r.find("requires");
    if (req != r.end() && req->is_array())
      for (nlohmann::json& dep : *req)
        if (dep.is_string()) dep.get_ref<std::string&>() += suffix;
  }
  result.resources = resources.size();

  // 2. Files: stat which are missing, upload those (base64) over parallel connections.
  const nlohmann::json& files = doc["files"];
  if (files.is_object() && !files.empty()) {
    nlohmann::json stat = {{"files", nlohmann::json::array()}};
    for (auto it = files.begin(); it != files.end(); ++it) stat["files"].push_back(it.key());
    auto missing = client.call("POST", "/api/v1/file", &stat);
    if (!missing) return missing.takeError();
    std::vector<Request> uploads;
    if ((*missing).contains("files") && (*missing)["files"].is_array()) {
      for (const nlohmann::json& h : (*missing)["files"]) {
        if (!h.is_string() || !files.contains(h.get<std::string>()))
          return fail("the server asked for a file this export does not have: " + h.dump());
        const std::string& hash = h.get_ref<const std::string&>();
        const nlohmann::json& content = files[hash];
        std::string b64;
        if (content.is_string())
          b64 = base64(content.get_ref<const std::string&>());
        else if (content.is_object() && content.contains("base64") && content["base64"].is_string())
          b64 = content["base64"].get<std::string>();
        else
          return fail("the export artifact's file " + hash + " is neither a string nor {\"base64\": …}");
        Request up;
        up.method = "PUT";
        up.path = "/api/v1/file/" + encodeSegment(hash);
        up.body = nlohmann::json{{"id", hash}, {"content", std::move(b64)}}.dump();
        uploads.push_back(std::move(up));
      }
    }
    result.filesUploaded = uploads.size();
    result.filesKnown = files.size() - uploads.size();
    if (!uploads.empty())
      if (llvm::Error e = client.sendAll(uploads, options.parallelUploads)) return std::move(e);
  }
  if (log)
    *log << "Uploaded " << result.filesUploaded << " files (" << result.filesKnown << " already on the server)\n";

  // 3. Handler code: we have no Python code to send; register the resource types with empty sources so a
  // server that insists on code for the version (11.5.5 aborts on a non-200 here) has its rows.
  if (!options.partial) {
    nlohmann::json code = {{"id", version}, {"resources", nlohmann::json::object()}};
    for (const std::string& t : types) code["resources"][t] = nlohmann::json::object();
    auto res = client.call("PUT", "/api/v1/codebatched/" + std::to_string(version), &code);
    if (!res) return res.takeError();
  }

  // 4. The version.
  nlohmann::json resourceSets = nlohmann::json::object();
  nlohmann::json setNames = nlohmann::json::array();
  if (doc.contains("resource_sets") && doc["resource_sets"].is_object())
    for (auto it = doc["resource_sets"].begin(); it != doc["resource_sets"].end(); ++it) {
      setNames.push_back(it.key());
      if (it.value().is_array())
        for (const nlohmann::json& id : it.value())
          if (id.is_string()) resourceSets[stripVersion(id.get<std::string>())] = it.key();
    }
  nlohmann::json payload = nlohmann::json::object();
  if (!options.partial) payload["version"] = version;
  payload["resources"] = std::move(resources);
  payload["resource_state"] = std::move(resourceState);
  payload["resource_sets"] = std::move(resourceSets);
  payload["unknowns"] = nlohmann::json::array();
  payload["version_info"] = {{"export_metadata", options.exportMetadata}};
  if (options.partial) {
    nlohmann::json removed = nlohmann::json::array();
    for (const std::string& s : options.removedResourceSets) removed.push_back(s);
    payload["removed_resource_sets"] = std::move(removed);
  } else {
    payload["compiler_version"] = options.compilerVersion;
  }
  payload["pip_config"] = {{"index_url", nullptr}, {"extra_index_url", nlohmann::json::array()},
                           {"pre", nullptr}, {"use_system_config", false}};

  Request put;
  put.method = "PUT";
  put.path = options.partial ? "/api/v2/version/partial" : "/api/v1/version";
  put.body = payload.dump();
  auto stored = client.send(put);
  if (!stored) {
    Failure f = takeFailure(stored.takeError());
    // An older server that does not know pip_config: the reference exporter retries without it.
    if (f.status != 400 || f.message.find("pip_config") == std::string::npos) return fail(f.text);
    payload.erase("pip_config");
    put.body = payload.dump();
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

  // 5. -d: release it.
  if (options.release) {
    nlohmann::json body = {{"id", version}, {"push", false}};
    auto rel = client.call("POST", "/api/v1/version/" + std::to_string(version), &body);
    if (!rel) return rel.takeError();
  }
  return result;
}

}  // namespace inm::client

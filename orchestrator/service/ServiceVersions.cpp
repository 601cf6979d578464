// Use cases for versions (orchestrator.md §3.4, §4): put_version validation and hashing, release with
// auto_deploy, version listings, the desired-state statuses and the per-attribute diff. put_version turns the
// request into store rows on the blocking pool (it is CPU work proportional to the version), then stores them
// in one transaction.
#include "StreamInput.h"
#include "Util.h"
#include "artifact/Artifact.h"
#include "artifact/AttributeHash.h"
#include "artifact/ResourceId.h"
#include "model/JsonNumbers.h"
#include "model/Settings.h"
#include "service/Log.h"
#include "service/Service.h"

#include <llvm/ADT/StringSet.h>
#include <llvm/Support/Allocator.h>

#include <chrono>
#include <map>
#include <set>
#include <unordered_map>

namespace inm::service {

using model::ErrorCode;

namespace {

/// A 400 naming what is wrong with the request body.
llvm::Error bad(std::string message) { return model::fail(ErrorCode::BadRequest, std::move(message)); }

/// The body fields after the resources that put_version and its streamed form read alike: unknowns (with
/// unversioned resource ids), version_info, pip_config and module_version_info.
llvm::Error readVersionTail(const nlohmann::json& body, store::VersionInput& in) {
  if (auto u = body.find("unknowns"); u != body.end() && !u->is_null()) {
    if (!u->is_array()) return bad("'unknowns' must be a list");
    for (const auto& x : *u) {
      if (!x.is_object()) return bad("'unknowns' must hold objects");
      nlohmann::json c = x;
      if (c.contains("resource") && c["resource"].is_string())
        c["resource"] = artifact::stripVersion(c["resource"].get<std::string>()).str();
      in.unknowns.push_back(std::move(c));
    }
  }
  in.versionInfo = body.value("version_info", nlohmann::json());
  in.pipConfig = body.value("pip_config", nlohmann::json());
  in.moduleVersionInfo = body.value("module_version_info", nlohmann::json());
  if (!in.moduleVersionInfo.is_null() && !in.moduleVersionInfo.is_object())
    return bad("'module_version_info' must be an object");
  return llvm::Error::success();
}

/// A version being built: the store input plus each resource's unversioned requires (same order).
struct Built {
  store::VersionInput in;
  std::vector<std::vector<std::string>> requiresOf;
};

/// Checks the requires graph is closed and fills undeployable, skipped_for_undeployable and
/// is_suitable_for_partial_compiles from it.
llvm::Error finishGraph(Built& b);

/// One element of put_version's `resources` as a store row (is_undefined and resource_set left for the
/// caller); `reqs` receives its sorted unversioned requires. Failure(BadRequest) names resources[i] and the
/// field. `r` is taken by value and becomes the attributes in place (a streamed body moves each resource in:
/// no copy of its values). `finite`: the caller knows every number in `r` is finite, so the hash's Python
/// text (which writes NaN/Infinity, not JSON) can also be the stored attributes' text.
llvm::Expected<store::ResourceRow> buildRow(nlohmann::json r, size_t i, std::vector<std::string>& reqs,
                                            bool finite = false) {
  std::string where = "resources[" + std::to_string(i) + "]";
  if (!r.is_object()) return bad(where + " must be an object");
  auto id = r.find("id");
  if (id == r.end() || !id->is_string()) return bad(where + ".id must be a string");
  llvm::Expected<artifact::ResourceId> parsed = artifact::parseResourceId(id->get_ref<const std::string&>());
  if (!parsed) return bad(where + ".id: " + llvm::toString(parsed.takeError()));
  store::ResourceRow row;
  row.resourceId = parsed->str();
  row.resourceType = parsed->type;
  row.agent = parsed->agent;
  row.idValue = parsed->value;
  r.erase(id);
  r.erase("version");
  if (auto q = r.find("requires"); q != r.end()) {
    if (!q->is_array()) return bad(where + ".requires must be a list");
    for (const auto& dep : *q) {
      if (!dep.is_string()) return bad(where + ".requires must hold resource ids");
      reqs.push_back(artifact::stripVersion(dep.get_ref<const std::string&>()).str());
    }
    r.erase(q);
  }
  std::sort(reqs.begin(), reqs.end());
  reqs.erase(std::unique(reqs.begin(), reqs.end()), reqs.end());
  if (finite && !r.contains("provides")) {
    // One dump for both: the hash's text, then the same text with the requires added is the stored JSON
    // (jsonb keeps its own key order, so where "requires" goes does not matter).
    std::string text = artifact::pythonJsonDumps(r);
    row.attributeHash = artifact::attributeHashOfDump(row.resourceId, text);
    text.pop_back(); // the closing brace
    text += text.size() > 1 ? ", \"requires\": " : "\"requires\": ";
    text += artifact::pythonJsonDumps(nlohmann::json(reqs));
    text += '}';
    row.attributesJson = std::move(text);
    return row;
  }
  row.attributeHash = artifact::attributeHash(row.resourceId, r);
  r["requires"] = reqs;
  row.attributesJson = r.dump();
  return row;
}

/// Parses a put_version body into store rows; Failure(BadRequest) names the offending field. The graph
/// checks run unless `partial` (a partial export may require resources of its base version).
llvm::Expected<Built> parseVersion(const std::string& env, const nlohmann::json& body, bool partial) {
  if (!body.is_object()) return bad("the request body must be a JSON object");
  store::VersionInput in;
  in.environment = env;
  auto v = body.find("version");
  if (v == body.end()) return bad("'version' is required");
  if (v->is_number_integer())
    in.version = v->get<int64_t>();
  else if (v->is_string()) {
    try {
      size_t n;
      in.version = std::stoll(v->get<std::string>(), &n);
      if (n != v->get<std::string>().size()) throw 0;
    } catch (...) {
      return bad("'version' must be an integer");
    }
  } else
    return bad("'version' must be an integer");
  auto rs = body.find("resources");
  if (rs == body.end() || !rs->is_array()) return bad("'resources' must be a list");
  nlohmann::json state = body.value("resource_state", nlohmann::json::object());
  if (!state.is_object()) return bad("'resource_state' must be an object");
  nlohmann::json sets = body.value("resource_sets", nlohmann::json::object());
  if (!sets.is_object()) return bad("'resource_sets' must be an object");
  std::unordered_map<std::string, std::string> stateById;
  for (auto it = state.begin(); it != state.end(); ++it)
    if (it->is_string()) stateById[artifact::stripVersion(it.key()).str()] = it->get<std::string>();

  std::unordered_map<std::string, size_t> index;
  std::vector<std::vector<std::string>> requiresOf;
  in.resources.reserve(rs->size());
  for (size_t i = 0; i < rs->size(); ++i) {
    std::vector<std::string> reqs;
    llvm::Expected<store::ResourceRow> built = buildRow((*rs)[i], i, reqs);
    if (!built) return built.takeError();
    store::ResourceRow& row = *built;
    std::string where = "resources[" + std::to_string(i) + "]";
    if (!index.emplace(row.resourceId, i).second)
      return bad(where + ": duplicate resource " + row.resourceId);
    auto st = stateById.find(row.resourceId);
    row.undefined = st != stateById.end() && st->second == "undefined";
    if (auto s = sets.find(row.resourceId); s != sets.end() && !s->is_null()) {
      if (!s->is_string()) return bad("resource_sets." + row.resourceId + " must be a string");
      row.resourceSet = s->get<std::string>();
    }
    requiresOf.push_back(std::move(reqs));
    in.resources.push_back(std::move(row));
  }
  for (auto it = sets.begin(); it != sets.end(); ++it)
    if (!index.count(artifact::stripVersion(it.key()).str()))
      return bad("resource_sets names " + it.key() + ", which is not a resource of this version");
  if (llvm::Error e = readVersionTail(body, in)) return std::move(e);
  Built b{std::move(in), std::move(requiresOf)};
  if (!partial)
    if (llvm::Error e = finishGraph(b)) return std::move(e);
  return b;
}

llvm::Error finishGraph(Built& b) {
  store::VersionInput& in = b.in;
  std::vector<std::vector<std::string>>& requiresOf = b.requiresOf;
  std::unordered_map<std::string, size_t> index;
  std::set<std::string> agents;
  for (size_t i = 0; i < in.resources.size(); ++i) {
    index.emplace(in.resources[i].resourceId, i);
    agents.insert(in.resources[i].agent);
  }
  in.undeployable.clear();
  in.skippedForUndeployable.clear();
  in.suitableForPartial = true;
  // The requires graph must be closed; collect the dependents of undefined resources
  // (skipped_for_undeployable).
  std::vector<std::vector<size_t>> provides(in.resources.size());
  for (size_t i = 0; i < in.resources.size(); ++i)
    for (const auto& q : requiresOf[i]) {
      auto t = index.find(q);
      if (t == index.end())
        return bad(in.resources[i].resourceId + " requires " + q + ", which is not in this version");
      provides[t->second].push_back(i);
    }
  std::vector<char> skipped(in.resources.size(), 0);
  std::vector<size_t> work;
  for (size_t i = 0; i < in.resources.size(); ++i)
    if (in.resources[i].undefined) {
      in.undeployable.push_back(in.resources[i].resourceId);
      work.push_back(i);
    }
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    for (size_t d : provides[i])
      if (!skipped[d] && !in.resources[d].undefined) {
        skipped[d] = 1;
        in.skippedForUndeployable.push_back(in.resources[d].resourceId);
        work.push_back(d);
      }
  }
  // Suitable for partial compiles: no requires between different named sets.
  for (size_t i = 0; i < in.resources.size() && in.suitableForPartial; ++i)
    for (const auto& q : requiresOf[i]) {
      const auto& from = in.resources[i].resourceSet;
      const auto& to = in.resources[index[q]].resourceSet;
      if (from && to && *from != *to) {
        in.suitableForPartial = false;
        break;
      }
    }
  in.agents.assign(agents.begin(), agents.end());
  return llvm::Error::success();
}

/// Merges a partial export into its base version's resources (orchestrator.md §3.7); Failure(BadRequest)
/// names the rule that is broken.
llvm::Error mergePartial(Built& b, const nlohmann::json& base, const std::set<std::string>& removedSets) {
  std::set<std::string> exportedSets;
  std::unordered_map<std::string, size_t> fresh;
  for (size_t i = 0; i < b.in.resources.size(); ++i) {
    fresh.emplace(b.in.resources[i].resourceId, i);
    if (b.in.resources[i].resourceSet) exportedSets.insert(*b.in.resources[i].resourceSet);
  }
  for (const auto& r : base) {
    std::string rid = r["resource_id"];
    std::optional<std::string> set;
    if (r["resource_set"].is_string()) set = r["resource_set"].get<std::string>();
    auto f = fresh.find(rid);
    if (set && removedSets.count(*set)) continue;
    if (set && exportedSets.count(*set)) {
      if (f != fresh.end() && b.in.resources[f->second].resourceSet != set &&
          !(b.in.resources[f->second].resourceSet &&
            exportedSets.count(*b.in.resources[f->second].resourceSet)))
        return bad("resource " + rid + " cannot move out of resource set '" + *set + "'");
      continue; // replaced by the exported set
    }
    if (f != fresh.end()) {
      const store::ResourceRow& n = b.in.resources[f->second];
      if (set)
        return bad("resource " + rid + " belongs to resource set '" + *set +
                   "', which this partial export does not contain");
      if (n.resourceSet)
        return bad("shared resource " + rid + " cannot move into resource set '" + *n.resourceSet + "'");
      if (n.attributeHash != r["attribute_hash"].get<std::string>())
        return bad(
            "shared resource " + rid +
            " differs from the base version: a partial export may add shared resources, not change them");
      // Same shared resource: merge the requires of both.
      std::vector<std::string>& reqs = b.requiresOf[f->second];
      for (const auto& q : r["attributes"].value("requires", nlohmann::json::array()))
        reqs.push_back(q.get<std::string>());
      std::sort(reqs.begin(), reqs.end());
      reqs.erase(std::unique(reqs.begin(), reqs.end()), reqs.end());
      nlohmann::json attrs = nlohmann::json::parse(n.attributesJson);
      attrs["requires"] = reqs;
      b.in.resources[f->second].attributesJson = attrs.dump();
      continue;
    }
    store::ResourceRow row;
    row.resourceId = rid;
    row.resourceType = r["resource_type"];
    row.agent = r["agent"];
    row.idValue = r["resource_id_value"];
    row.attributesJson = r["attributes"].dump();
    row.attributeHash = r["attribute_hash"];
    row.undefined = r["is_undefined"].get<bool>();
    row.resourceSet = set;
    std::vector<std::string> reqs;
    for (const auto& q : r["attributes"].value("requires", nlohmann::json::array()))
      reqs.push_back(q.get<std::string>());
    b.in.resources.push_back(std::move(row));
    b.requiresOf.push_back(std::move(reqs));
  }
  return finishGraph(b);
}

/// The version number of a put_version body: an integer or a string holding one.
llvm::Expected<int64_t> versionNumber(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    try {
      size_t n;
      int64_t out = std::stoll(v.get<std::string>(), &n);
      if (n == v.get<std::string>().size()) return out;
    } catch (...) {
    }
  }
  return model::fail(ErrorCode::BadRequest, "'version' must be an integer");
}

/// SAX handler for a put_version body: builds the top-level object as a tree, except the elements of its
/// "resources" array, which go to `onResource` one at a time as they complete and are then dropped, so memory
/// holds one resource, not the version.
class VersionSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit VersionSax(std::function<bool(nlohmann::json&&)> onResource)
      : onResource_(std::move(onResource)) {}
  /// The object built so far (complete after a successful parse).
  const nlohmann::json& top() const { return stack_.empty() ? root : stack_.front().value; }
  nlohmann::json root;
  std::string syntaxError;
  std::string wideInteger; ///< the 400's message for an integer too wide for 64 bits

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t& raw) override {
    if (!model::isWideInteger(raw)) return put(v);
    wideInteger = describeWide(raw); // refused: a double would store a different value
    return false;
  }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(nlohmann::json::binary(std::move(v))); }
  bool start_object(std::size_t) override {
    stack_.push_back({nlohmann::json::object(), {}});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = std::move(k);
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    stack_.push_back({nlohmann::json::array(), {}});
    return true;
  }
  bool end_array() override { return pop(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    syntaxError = e.what();
    return false;
  }

 private:
  struct Frame {
    nlohmann::json value;
    std::string key;
  };
  bool pop() {
    nlohmann::json v = std::move(stack_.back().value);
    stack_.pop_back();
    return put(std::move(v));
  }
  bool put(nlohmann::json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return true;
    }
    if (stack_.size() == 2 && stack_[0].key == "resources" && stack_[1].value.is_array()) {
      ++resources_;
      return onResource_(std::move(v));
    }
    Frame& f = stack_.back();
    if (f.value.is_array())
      f.value.push_back(std::move(v));
    else
      f.value[f.key] = std::move(v);
    return true;
  }
  /// Where the number being read sits (model/JsonNumbers.h's message, with the resource's id when read).
  std::string describeWide(const std::string& raw) const {
    model::WideInteger wide;
    wide.text = raw;
    bool inResources = stack_.size() >= 2 && stack_[0].key == "resources" && stack_[1].value.is_array();
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.value.is_array()) {
        wide.path += "[" + std::to_string(i == 1 && inResources ? resources_ : f.value.size()) + "]";
      } else {
        if (!wide.path.empty()) wide.path += ".";
        wide.path += f.key;
      }
    }
    std::string id;
    if (inResources && stack_.size() >= 3 && stack_[2].value.is_object()) {
      auto it = stack_[2].value.find("id");
      if (it != stack_[2].value.end() && it->is_string()) id = it->get<std::string>();
    }
    return model::wideIntegerMessage(wide, id);
  }
  std::function<bool(nlohmann::json&&)> onResource_;
  std::vector<Frame> stack_;
  size_t resources_ = 0; ///< elements of "resources" handed to onResource_ so far
};

/// Rows per COPY batch of a streamed put_version (the memory bound of the resources in flight).
constexpr size_t kStreamBatch = 2000;

/// Parses a put_version body from `in` for Store::putVersionStreamed: resources are checked, hashed and
/// written to `sink` in batches of kStreamBatch as they are read (held back only while the body has not yet
/// named its version); the rest is checked like parseVersion does.
llvm::Expected<store::StreamedVersion> streamVersion(FileChunks& in, store::ResourceSink& sink,
                                                     size_t& count) {
  std::vector<store::ResourceRow> batch;
  std::optional<llvm::Error> failure;
  bool begun = false;
  count = 0;
  // The ids seen so far, the requires not (yet) among them (both hashed) and the agents: the graph's closure
  // and the agent list without reading the stored rows back.
  HashedSet ids, pending;
  llvm::StringSet<llvm::BumpPtrAllocator> agents;
  VersionSax* saxPtr = nullptr;
  auto flush = [&]() -> bool {
    if (!begun) {
      auto v = saxPtr->top().find("version");
      if (v == saxPtr->top().end())
        return true; // the version comes after the resources: keep them until then
      llvm::Expected<int64_t> n = versionNumber(*v);
      if (!n) {
        failure = n.takeError();
        return false;
      }
      sink.begin(*n);
      begun = true;
    }
    sink.write(batch);
    batch.clear();
    return true;
  };
  VersionSax sax([&](nlohmann::json&& r) -> bool {
    std::vector<std::string> reqs;
    // finite: the parser refuses a number that overflows (400), so no NaN/Infinity reaches the text.
    llvm::Expected<store::ResourceRow> row = buildRow(std::move(r), count, reqs, /*finite=*/true);
    if (!row) {
      failure = row.takeError();
      return false;
    }
    ++count;
    ids.insert(row->resourceId);
    pending.erase(row->resourceId);
    for (const std::string& q : reqs)
      if (!ids.contains(q)) pending.insert(q);
    agents.insert(row->agent);
    batch.push_back(std::move(*row));
    if (batch.size() >= kStreamBatch) return flush();
    return true;
  });
  saxPtr = &sax;
  bool parsed = nlohmann::json::sax_parse(in.begin(), in.end(), &sax);
  // A resource's own error (a 400 naming it) wins over a read error that may have cut the body short.
  if (failure) return std::move(*failure);
  if (!in.ok()) return model::fail(ErrorCode::Internal, "cannot read the spooled request body");
  if (!sax.wideInteger.empty()) return bad(sax.wideInteger);
  if (!parsed)
    return bad("the request body is not valid JSON" +
               (sax.syntaxError.empty() ? std::string() : ": " + sax.syntaxError));
  const nlohmann::json& body = sax.root;
  if (!body.is_object()) return bad("the request body must be a JSON object");
  store::StreamedVersion out;
  store::VersionInput& head = out.head;
  auto v = body.find("version");
  if (v == body.end()) return bad("'version' is required");
  llvm::Expected<int64_t> number = versionNumber(*v);
  if (!number) return number.takeError();
  head.version = *number;
  auto rs = body.find("resources");
  if (rs == body.end() || !rs->is_array()) return bad("'resources' must be a list");
  if (!batch.empty() || !begun) {
    if (!begun) {
      sink.begin(head.version);
      begun = true;
    }
    if (!batch.empty()) sink.write(batch);
    batch.clear();
  }
  nlohmann::json state = body.value("resource_state", nlohmann::json::object());
  if (!state.is_object()) return bad("'resource_state' must be an object");
  for (auto it = state.begin(); it != state.end(); ++it)
    if (it->is_string() && it->get<std::string>() == "undefined")
      out.undefinedIds.push_back(artifact::stripVersion(it.key()).str());
  nlohmann::json sets = body.value("resource_sets", nlohmann::json::object());
  if (!sets.is_object()) return bad("'resource_sets' must be an object");
  for (auto it = sets.begin(); it != sets.end(); ++it) {
    if (it->is_null()) continue;
    std::string rid = artifact::stripVersion(it.key()).str();
    if (!it->is_string()) return bad("resource_sets." + rid + " must be a string");
    out.resourceSets.emplace_back(rid, it->get<std::string>());
  }
  if (llvm::Error e = readVersionTail(body, head)) return std::move(e);
  out.requiresClosed = pending.empty(); // a require met later was erased when its resource came
  out.agentsKnown = true;
  for (const auto& a : agents) head.agents.push_back(a.getKey().str());
  std::sort(head.agents.begin(), head.agents.end());
  return out;
}

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
  const nlohmann::json& settings = (*s)["settings"];
  co_return !settings.contains("auto_deploy") || settings["auto_deploy"] == true;
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
    int64_t keep = (*s)["settings"].value("available_versions_to_keep", options_.defaultVersionsToKeep);
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
    // parsing it into a tree, rebuilding each entry and dumping it again took ~6 s.
    auto text = co_await blocking([&] { return store_.versionAnswerText(env, version); });
    if (!text) co_return Result::error(text.takeError());
    auto unknowns = co_await blocking([&] { return store_.versionUnknowns(env, version); });
    if (!unknowns) co_return Result::error(unknowns.takeError());
    std::string head = "{\"model\":" + row->dump() + ",\"resources\":";
    std::string tail = ",\"unknowns\":" + unknowns->dump() + "}";
    std::string out;
    out.reserve(head.size() + text->size() + tail.size());
    out += head;
    out += *text;
    out += tail;
    co_return Result::ofText(std::move(out));
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
    std::string rvid = rid + ",v=" + std::to_string(version);
    nlohmann::json reqs = nlohmann::json::array();
    for (const auto& q : attrs.value("requires", nlohmann::json::array()))
      reqs.push_back(q.get<std::string>() + ",v=" + std::to_string(version));
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
                   {"resource_version_id", rid + ",v=" + std::to_string(version)},
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
      if (l && r && fv == tv) continue;
      attrs[k] = {{"from_value", fv},
                  {"to_value", tv},
                  {"from_value_compare", compareString(fv)},
                  {"to_value_compare", compareString(tv)}};
    }
    if (l && r && attrs.empty()) continue;
    out.push_back({{"resource_id", id}, {"status", status}, {"attributes", attrs}});
  }
  co_return Result::of(std::move(out));
}

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

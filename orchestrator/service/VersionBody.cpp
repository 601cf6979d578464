// put_version's request body (orchestrator.md §3.4, §3.7): the checks of each resource and of the body's
// other fields, the attribute hashes, the requires graph (closure, undeployable), partial exports merged into
// their base version, and the streamed parse that writes rows in batches as they are read. Pure CPU work on a
// parsed or spooled body; the use cases in ServiceVersions.cpp call it on the blocking pool.
#include "VersionBody.h"

#include "StreamInput.h"
#include "Util.h"
#include "artifact/Artifact.h"
#include "artifact/AttributeHash.h"
#include "artifact/ResourceId.h"
#include "model/JsonNumbers.h"
#include "model/Settings.h"
#include "model/Vocabulary.h"

#include <llvm/ADT/StringSet.h>
#include <llvm/Support/Allocator.h>

#include <map>
#include <set>
#include <unordered_map>

namespace inm::service {

using model::ErrorCode;

namespace {

/// A 400 naming what is wrong with the request body.
llvm::Error bad(std::string message) { return model::fail(ErrorCode::BadRequest, std::move(message)); }

/// The resource_state values put_version accepts (the reference's: a resource is available or undefined).
bool isExportState(const nlohmann::json& v) {
  return v.is_string() && (model::is(v.get_ref<const std::string&>(), model::DeployStatus::Available) ||
                           model::is(v.get_ref<const std::string&>(), model::DeployStatus::Undefined));
}

/// Checks put_version's resource_state: keys are resource ids, values one of isExportState.
llvm::Error checkResourceState(const nlohmann::json& state) {
  for (auto it = state.begin(); it != state.end(); ++it) {
    llvm::Expected<artifact::ResourceId> id = artifact::parseResourceId(it.key());
    if (!id) return bad("resource_state key " + it.key() + ": " + llvm::toString(id.takeError()));
    if (!isExportState(*it))
      return bad("resource_state." + it.key() + " must be \"available\" or \"undefined\", got " +
                 it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return llvm::Error::success();
}

/// A versioned resource id or a resource's `version` key of a put_version must name the body's version
/// (`,v=0`, the unversioned form newer exporters write, is accepted too).
llvm::Error checkIdVersion(const std::string& where, const std::string& id, int64_t idVersion,
                           int64_t version) {
  if (idVersion == 0 || idVersion == version) return llvm::Error::success();
  return bad(where + ".id " + id + " is of version " + std::to_string(idVersion) +
             ", not of the body's version " + std::to_string(version));
}

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

/// Checks the requires graph is closed and fills undeployable, skipped_for_undeployable and
/// is_suitable_for_partial_compiles from it.
llvm::Error finishGraph(Built& b);

/// One element of put_version's `resources` as a store row (is_undefined and resource_set left for the
/// caller); `reqs` receives its sorted unversioned requires. Failure(BadRequest) names resources[i] and the
/// field. `r` is taken by value and becomes the attributes in place (a streamed body moves each resource in:
/// no copy of its values). `finite`: the caller knows every number in `r` is finite, so the hash's Python
/// text (which writes NaN/Infinity, not JSON) can also be the stored attributes' text.
llvm::Expected<store::ResourceRow> buildRow(nlohmann::json r, size_t i, std::vector<std::string>& reqs,
                                            bool finite = false, int64_t* idVersion = nullptr) {
  std::string where = "resources[" + std::to_string(i) + "]";
  if (!r.is_object()) return bad(where + " must be an object");
  auto id = r.find("id");
  if (id == r.end() || !id->is_string()) return bad(where + ".id must be a string");
  llvm::Expected<artifact::ResourceId> parsed = artifact::parseResourceId(id->get_ref<const std::string&>());
  if (!parsed) return bad(where + ".id: " + llvm::toString(parsed.takeError()));
  store::ResourceRow row;
  // Stored as sent (without its version): an id of the reference's with literal backslashes keeps its exact
  // text, which its requires, resource_state keys and later lookups use too.
  row.resourceId = artifact::stripVersion(id->get_ref<const std::string&>()).str();
  if (idVersion) {
    *idVersion = parsed->version;
    // A `version` key must agree with the id (both name the version the resource belongs to).
    if (auto v = r.find("version"); v != r.end() && !v->is_null()) {
      if (!v->is_number_integer())
        return bad(where + ".version must be an integer, got " +
                   v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      if (parsed->hasVersion && parsed->version != 0 && v->get<int64_t>() != parsed->version)
        return bad(where + ".version (" + v->dump() + ") differs from the version in its id " +
                   id->get_ref<const std::string&>());
      if (!parsed->hasVersion || parsed->version == 0) *idVersion = v->get<int64_t>();
    }
  }
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
  // Both lists in byte order of the ids, as the streamed and the delta put_version derive them in SQL.
  std::sort(in.undeployable.begin(), in.undeployable.end());
  std::sort(in.skippedForUndeployable.begin(), in.skippedForUndeployable.end());
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
  std::string nulString;   ///< the 400's message for a string or key holding a NUL byte

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t& raw) override {
    if (!model::isWideInteger(raw)) return put(v);
    wideInteger = describeWide(raw); // refused: a double would store a different value
    return false;
  }
  bool string(string_t& v) override {
    if (v.find('\0') != std::string::npos) return refuseNul("the string at " + where());
    return put(std::move(v));
  }
  bool binary(binary_t& v) override { return put(nlohmann::json::binary(std::move(v))); }
  bool start_object(std::size_t) override {
    stack_.push_back({nlohmann::json::object(), {}});
    return true;
  }
  bool key(string_t& k) override {
    if (k.find('\0') != std::string::npos) return refuseNul("a key in " + where());
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
  bool refuseNul(std::string what) {
    nulString = std::move(what) + " holds a NUL byte (\\u0000), which cannot be stored";
    return false;
  }
  /// The path of the value being read, e.g. resources[3].name ("the top" at the root).
  std::string where() const {
    std::string path;
    bool inResources = stack_.size() >= 2 && stack_[0].key == "resources" && stack_[1].value.is_array();
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.value.is_array()) {
        path += "[" + std::to_string(i == 1 && inResources ? resources_ : f.value.size()) + "]";
      } else {
        if (!path.empty()) path += ".";
        path += f.key;
      }
    }
    return path.empty() ? "the top" : path;
  }
  /// Where the number being read sits (model/JsonNumbers.h's message, with the resource's id when read).
  std::string describeWide(const std::string& raw) const {
    model::WideInteger wide;
    wide.text = raw;
    bool inResources = stack_.size() >= 2 && stack_[0].key == "resources" && stack_[1].value.is_array();
    wide.path = where();
    if (wide.path == "the top") wide.path.clear();
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

} // namespace

/// Parses a put_version body into store rows; Failure(BadRequest) names the offending field. The graph
/// checks run unless `partial` or not `graph` (see VersionBody.h).
llvm::Expected<Built> parseVersion(const std::string& env, const nlohmann::json& body, bool partial,
                                   bool graph) {
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
  if (llvm::Error e = checkResourceState(state)) return e;
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
    int64_t idVersion = 0;
    llvm::Expected<store::ResourceRow> built = buildRow((*rs)[i], i, reqs, false, &idVersion);
    if (!built) return built.takeError();
    store::ResourceRow& row = *built;
    std::string where = "resources[" + std::to_string(i) + "]";
    if (!partial) // a partial export's ids are unversioned; the server picks its version
      if (llvm::Error e = checkIdVersion(where, row.resourceId, idVersion, in.version)) return e;
    if (!index.emplace(row.resourceId, i).second)
      return bad(where + ": duplicate resource " + row.resourceId);
    auto st = stateById.find(row.resourceId);
    row.undefined = st != stateById.end() && model::is(st->second, model::DeployStatus::Undefined);
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
  if (llvm::Error e = readVersionTail(body, in)) return e;
  Built b{std::move(in), std::move(requiresOf)};
  if (!partial && graph)
    if (llvm::Error e = finishGraph(b)) return e;
  return b;
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
  // Resources whose id version is not checked yet (the body had not named its version when they came).
  std::vector<std::pair<size_t, int64_t>> unchecked;
  std::vector<std::string> uncheckedIds;
  int64_t bodyVersion = 0;
  auto checkPending = [&]() -> bool {
    for (size_t k = 0; k < unchecked.size(); ++k)
      if (llvm::Error e = checkIdVersion("resources[" + std::to_string(unchecked[k].first) + "]",
                                         uncheckedIds[k], unchecked[k].second, bodyVersion)) {
        failure = std::move(e);
        return false;
      }
    unchecked.clear();
    uncheckedIds.clear();
    return true;
  };
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
      bodyVersion = *n;
      if (!checkPending()) return false;
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
    int64_t idVersion = 0;
    llvm::Expected<store::ResourceRow> row = buildRow(std::move(r), count, reqs, /*finite=*/true, &idVersion);
    if (!row) {
      failure = row.takeError();
      return false;
    }
    if (begun) {
      if (llvm::Error e = checkIdVersion("resources[" + std::to_string(count) + "]", row->resourceId,
                                         idVersion, bodyVersion)) {
        failure = std::move(e);
        return false;
      }
    } else if (idVersion != 0) {
      unchecked.emplace_back(count, idVersion);
      uncheckedIds.push_back(row->resourceId);
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
  if (!sax.nulString.empty()) return bad(sax.nulString);
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
  bodyVersion = *number;
  if (!checkPending()) return std::move(*failure);
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
  if (llvm::Error e = checkResourceState(state)) return e;
  for (auto it = state.begin(); it != state.end(); ++it)
    if (it->is_string() && model::is(it->get_ref<const std::string&>(), model::DeployStatus::Undefined))
      out.undefinedIds.push_back(artifact::stripVersion(it.key()).str());
  nlohmann::json sets = body.value("resource_sets", nlohmann::json::object());
  if (!sets.is_object()) return bad("'resource_sets' must be an object");
  for (auto it = sets.begin(); it != sets.end(); ++it) {
    if (it->is_null()) continue;
    std::string rid = artifact::stripVersion(it.key()).str();
    if (!it->is_string()) return bad("resource_sets." + rid + " must be a string");
    out.resourceSets.emplace_back(rid, it->get<std::string>());
  }
  if (llvm::Error e = readVersionTail(body, head)) return e;
  out.requiresClosed = pending.empty(); // a require met later was erased when its resource came
  out.agentsKnown = true;
  for (const auto& a : agents) head.agents.push_back(a.getKey().str());
  std::sort(head.agents.begin(), head.agents.end());
  return out;
}

} // namespace inm::service

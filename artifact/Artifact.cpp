// Reading an artifact document (see Artifact.h) through the streaming reader (ArtifactScan.h): each member
// and each resource is parsed on its own as the scan hands it out; checks run as each part is read, and the
// first failure is returned with the JSON path that caused it.
#include "artifact/Artifact.h"

#include "artifact/ArtifactScan.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA1.h>

#include <set>

namespace inm::artifact {

namespace {

llvm::Error fail(const std::string& origin, const std::string& what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", origin.c_str(), what.c_str());
}

} // namespace

std::string sha1Hex(const std::string& bytes) {
  llvm::SHA1 h;
  h.update(llvm::StringRef(bytes));
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

llvm::Expected<Artifact> readArtifact(const std::string& text, const std::string& origin) {
  // The top-level members are parsed one by one as the streaming reader hands them out; each resource is
  // parsed on its own, so the whole document is never one tree.
  Artifact a;
  bool sawFormat = false;
  nlohmann::json sets, files;
  std::string firstError;
  auto keep = [&](const std::string& what) {
    if (firstError.empty()) firstError = what;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", what.c_str());
  };
  auto member = [&](std::string_view key, std::string_view raw) -> llvm::Error {
    if (key != "format_version" && key != "version" && key != "compile" && key != "agents" &&
        key != "resource_sets" && key != "files")
      return llvm::Error::success();
    nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return keep("'" + std::string(key) + "' is not JSON");
    if (key == "format_version") {
      if (!j.is_number_integer()) return keep("'format_version' is missing or not an integer");
      sawFormat = true;
      a.formatVersion = j.get<int>();
      if (a.formatVersion != kFormatVersion)
        return keep("format_version " + std::to_string(a.formatVersion) +
                    " is not supported (this build reads " + std::to_string(kFormatVersion) + ")");
    } else if (key == "version") {
      if (!j.is_number_integer()) return keep("'version' is not an integer");
      a.version = j.get<int64_t>();
    } else if (key == "compile") {
      a.compile = std::move(j);
    } else if (key == "agents") {
      if (!j.is_array()) return keep("'agents' is not a list");
      for (const auto& x : j) {
        if (!x.is_string()) return keep("'agents' holds a non-string");
        a.agents.push_back(x.get<std::string>());
      }
    } else if (key == "resource_sets") {
      sets = std::move(j);
    } else {
      files = std::move(j);
    }
    return llvm::Error::success();
  };
  std::set<std::string> ids;
  auto resource = [&](size_t i, std::string_view raw) -> llvm::Error {
    std::string where = "resources[" + std::to_string(i) + "]";
    nlohmann::json r = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (!r.is_object()) return keep(where + " is not an object");
    auto id = r.find("id");
    if (id == r.end() || !id->is_string()) return keep(where + ".id is missing or not a string");
    llvm::Expected<ResourceId> parsed = parseResourceId(id->get<std::string>());
    if (!parsed) return keep(where + ".id: " + llvm::toString(parsed.takeError()));
    ArtifactResource res;
    res.id = std::move(*parsed);
    res.unversionedId = res.id.str();
    if (!ids.insert(res.unversionedId).second) return keep(where + ": duplicate id " + res.unversionedId);
    res.attributes = nlohmann::json::object();
    for (auto it = r.begin(); it != r.end(); ++it) {
      const std::string& k = it.key();
      if (k == "id" || k == "version") continue;
      if (k == "undefined") {
        if (!it->is_boolean()) return keep(where + ".undefined is not a boolean");
        res.undefined = it->get<bool>();
        continue;
      }
      if (k == "requires") {
        if (!it->is_array()) return keep(where + ".requires is not a list");
        for (const auto& q : *it) {
          if (!q.is_string()) return keep(where + ".requires holds a non-string");
          res.requires_.push_back(stripVersion(q.get<std::string>()).str());
        }
        continue;
      }
      res.attributes[k] = std::move(*it);
    }
    a.resources.push_back(std::move(res));
    return llvm::Error::success();
  };
  if (llvm::Error e = scanArtifact(text, {member, resource})) {
    std::string what =
        firstError.empty() ? llvm::toString(std::move(e)) : (llvm::consumeError(std::move(e)), firstError);
    return fail(origin, what);
  }
  if (!sawFormat) return fail(origin, "'format_version' is missing or not an integer");
  for (const auto& r : a.resources)
    for (const auto& q : r.requires_)
      if (!ids.count(q))
        return fail(origin, r.unversionedId + " requires " + q + ", which is not in the document");
  if (!sets.is_null()) {
    if (!sets.is_object()) return fail(origin, "'resource_sets' is not an object");
    for (auto it = sets.begin(); it != sets.end(); ++it) {
      if (!it->is_array()) return fail(origin, "resource_sets." + it.key() + " is not a list");
      auto& members = a.resourceSets[it.key()];
      for (const auto& m : *it) {
        if (!m.is_string()) return fail(origin, "resource_sets." + it.key() + " holds a non-string");
        if (!ids.count(m.get<std::string>()))
          return fail(origin, "resource_sets." + it.key() + " names " + m.get<std::string>() +
                                  ", which is not a resource");
        members.push_back(m.get<std::string>());
      }
    }
  }
  if (!files.is_null()) {
    if (!files.is_object()) return fail(origin, "'files' is not an object");
    for (auto it = files.begin(); it != files.end(); ++it) {
      if (!it->is_string()) return fail(origin, "files." + it.key() + " is not a string");
      const std::string& content = it->get_ref<const std::string&>();
      std::string actual = sha1Hex(content);
      if (actual != it.key())
        return fail(origin, "files." + it.key() + ": content has sha1 " + actual + ", not its key");
      a.files.emplace(it.key(), content);
    }
  }
  return a;
}

} // namespace inm::artifact

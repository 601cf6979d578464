// Reading an artifact document (see Artifact.h). One pass over the parsed JSON builds the structs; checks run
// as each part is read, and the first failure is returned with the JSON path that caused it.
#include "artifact/Artifact.h"

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
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return fail(origin, "not a JSON document");
  if (!doc.is_object()) return fail(origin, "the document is not a JSON object");
  Artifact a;
  auto fv = doc.find("format_version");
  if (fv == doc.end() || !fv->is_number_integer())
    return fail(origin, "'format_version' is missing or not an integer");
  a.formatVersion = fv->get<int>();
  if (a.formatVersion != kFormatVersion)
    return fail(origin, "format_version " + std::to_string(a.formatVersion) +
                            " is not supported (this build reads " + std::to_string(kFormatVersion) + ")");
  if (auto v = doc.find("version"); v != doc.end()) {
    if (!v->is_number_integer()) return fail(origin, "'version' is not an integer");
    a.version = v->get<int64_t>();
  }
  if (auto c = doc.find("compile"); c != doc.end()) a.compile = *c;
  if (auto ag = doc.find("agents"); ag != doc.end()) {
    if (!ag->is_array()) return fail(origin, "'agents' is not a list");
    for (const auto& x : *ag) {
      if (!x.is_string()) return fail(origin, "'agents' holds a non-string");
      a.agents.push_back(x.get<std::string>());
    }
  }
  auto rs = doc.find("resources");
  if (rs == doc.end() || !rs->is_array()) return fail(origin, "'resources' is missing or not a list");
  std::set<std::string> ids;
  for (size_t i = 0; i < rs->size(); ++i) {
    const auto& r = (*rs)[i];
    std::string where = "resources[" + std::to_string(i) + "]";
    if (!r.is_object()) return fail(origin, where + " is not an object");
    auto id = r.find("id");
    if (id == r.end() || !id->is_string()) return fail(origin, where + ".id is missing or not a string");
    llvm::Expected<ResourceId> parsed = parseResourceId(id->get<std::string>());
    if (!parsed) return fail(origin, where + ".id: " + llvm::toString(parsed.takeError()));
    ArtifactResource res;
    res.id = std::move(*parsed);
    res.unversionedId = res.id.str();
    if (!ids.insert(res.unversionedId).second)
      return fail(origin, where + ": duplicate id " + res.unversionedId);
    res.attributes = nlohmann::json::object();
    for (auto it = r.begin(); it != r.end(); ++it) {
      const std::string& k = it.key();
      if (k == "id" || k == "version") continue;
      if (k == "undefined") {
        if (!it->is_boolean()) return fail(origin, where + ".undefined is not a boolean");
        res.undefined = it->get<bool>();
        continue;
      }
      if (k == "requires") {
        if (!it->is_array()) return fail(origin, where + ".requires is not a list");
        for (const auto& q : *it) {
          if (!q.is_string()) return fail(origin, where + ".requires holds a non-string");
          res.requires_.push_back(stripVersion(q.get<std::string>()).str());
        }
        continue;
      }
      res.attributes[k] = *it;
    }
    a.resources.push_back(std::move(res));
  }
  for (const auto& r : a.resources)
    for (const auto& q : r.requires_)
      if (!ids.count(q))
        return fail(origin, r.unversionedId + " requires " + q + ", which is not in the document");
  if (auto sets = doc.find("resource_sets"); sets != doc.end()) {
    if (!sets->is_object()) return fail(origin, "'resource_sets' is not an object");
    for (auto it = sets->begin(); it != sets->end(); ++it) {
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
  if (auto files = doc.find("files"); files != doc.end()) {
    if (!files->is_object()) return fail(origin, "'files' is not an object");
    for (auto it = files->begin(); it != files->end(); ++it) {
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

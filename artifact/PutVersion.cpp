// The put_version rewrite of PutVersion.h on the streaming reader: the top level through scanArtifact, each
// resource's members through forEachMember (their texts copied as they are), the `requires` strings through
// forEachElement. Small values (files, resource_sets, python_code) are parsed with nlohmann.
#include "artifact/PutVersion.h"

#include "artifact/ArtifactScan.h"
#include "artifact/ResourceId.h"

#include <llvm/Support/xxhash.h>

#include <string_view>

namespace inm::artifact {

namespace {

llvm::Error error(const std::string& what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", what.c_str());
}

/// Rewrites one resource object (raw text) onto `out`; `fp` is scratch for the fingerprint text.
llvm::Error rewriteResource(std::string_view obj, std::string_view suffix, PutVersionParts& parts,
                            std::string& out, std::string& fp) {
  out += '{';
  bool first = true;
  std::string_view id;
  bool undefined = false;
  PutVersionEntry entry;
  entry.begin = out.size() - 1; // at the object's opening brace
  fp.clear();                   // the members but id and version, for the fingerprint
  if (llvm::Error e = support::forEachMember(
          obj, "its object", [&](std::string_view key, std::string_view val) -> llvm::Error {
            if (key != "id" && key != "version") {
              fp += '"'; // the key as JSON text: fingerprints stored by earlier exports stay valid
              fp.append(key);
              fp += '"';
              fp += '\x1f';
              fp.append(val);
              fp += '\x1e';
            }
            if (key == "undefined") {
              undefined = val == "true";
              return llvm::Error::success();
            }
            if (key == "id") id = val;
            if (!first) out += ", ";
            first = false;
            out += '"';
            out += key;
            out += "\": ";
            if (key != "requires" || val.empty() || val.front() != '[') {
              out += val;
              return llvm::Error::success();
            }
            // Each element is a string: insert the suffix before its closing quote.
            out += '[';
            if (llvm::Error e = support::forEachElement(val, "requires",
                                                        [&](size_t i, std::string_view dep) -> llvm::Error {
                                                          if (dep.size() < 2 || dep.front() != '"')
                                                            return error("requires holds a non-string");
                                                          if (i) out += ", ";
                                                          out.append(dep.data(), dep.size() - 1);
                                                          out += suffix;
                                                          out += '"';
                                                          return llvm::Error::success();
                                                        }))
              return e;
            out += ']';
            return llvm::Error::success();
          }))
    return e;
  out += '}';
  if (id.size() < 2 || id.front() != '"') return error("a resource without a string `id`");
  llvm::Expected<std::string> full = support::decodeString(id);
  if (!full) return full.takeError();
  parts.types.insert(full->substr(0, full->find('[')));
  entry.id = stripVersion(*full).str();
  if (undefined) parts.resourceState[entry.id] = std::string(kUndefinedResourceState);
  // Two xxHash64 values (of the text, and of the text behind a marker byte): 128 bits against collisions.
  entry.fingerprint[0] = llvm::xxHash64(fp);
  fp += '\x1d';
  entry.fingerprint[1] = llvm::xxHash64(fp);
  entry.undefined = undefined;
  entry.end = out.size();
  parts.entries.push_back(std::move(entry));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<nlohmann::json> artifactFiles(std::string_view text) {
  nlohmann::json files = nlohmann::json::object();
  if (llvm::Error e = scanArtifact(
          text, {[&](std::string_view key, std::string_view raw) -> llvm::Error {
                   if (key != "files") return llvm::Error::success();
                   files = nlohmann::json::parse(raw, nullptr, false);
                   if (!files.is_object()) return error("the export artifact's files must be an object");
                   return llvm::Error::success();
                 },
                 [](size_t, std::string_view) -> llvm::Error { return llvm::Error::success(); }}))
    return e;
  return files;
}

llvm::Expected<PutVersionParts> toPutVersionBody(std::string_view text, int64_t version, bool withFiles) {
  PutVersionParts parts;
  std::string suffix;
  appendVersionSuffix(suffix, version);
  std::string& out = parts.resourcesJson;
  out.reserve(text.size() + text.size() / 16);
  out += '[';
  std::string fp;
  auto member = [&](std::string_view key, std::string_view val) -> llvm::Error {
    if (key != "format_version" && !(key == "files" && withFiles) && key != "resource_sets" &&
        key != "python_code")
      return llvm::Error::success();
    nlohmann::json j = nlohmann::json::parse(val, nullptr, false);
    if (j.is_discarded()) return error("the export artifact's " + std::string(key) + " is not JSON");
    if (key == "format_version")
      parts.formatVersion = j.is_number_integer() ? j.get<int64_t>() : -1;
    else if (key == "files")
      parts.files = std::move(j);
    else if (key == "resource_sets")
      parts.resourceSets = std::move(j);
    else if (j.is_array())
      parts.pythonCode = std::move(j);
    return llvm::Error::success();
  };
  auto resource = [&](size_t index, std::string_view obj) -> llvm::Error {
    if (parts.resources++) out += ",\n";
    if (llvm::Error e = rewriteResource(obj, suffix, parts, out, fp))
      return error("the export artifact is malformed: resource " + std::to_string(index + 1) + ": " +
                   llvm::toString(std::move(e)));
    return llvm::Error::success();
  };
  if (llvm::Error e = scanArtifact(text, {member, resource})) return e;
  out += ']';
  if (parts.formatVersion != 1)
    return error("the export artifact has format_version " + std::to_string(parts.formatVersion) +
                 ", this client reads 1");
  if (!parts.files.is_object() || !parts.resourceSets.is_object())
    return error("the export artifact's files and resource_sets must be objects");
  return parts;
}

nlohmann::json codeSources(const nlohmann::json& pythonCode) {
  nlohmann::json sources = nlohmann::json::object();
  for (const nlohmann::json& m : pythonCode) {
    if (!m.is_object() || !m.value("module", nlohmann::json()).is_string() ||
        !m.value("files", nlohmann::json()).is_object())
      continue;
    std::string module = m["module"].get<std::string>();
    nlohmann::json requirements = m.value("requirements", nlohmann::json::array());
    for (auto it = m["files"].begin(); it != m["files"].end(); ++it) {
      if (!it.value().is_string()) continue;
      std::string path = it.key(); // "plugins/sub/x.py"
      std::string name = path.rfind("plugins/", 0) == 0 ? path.substr(8) : path;
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0) name.resize(name.size() - 3);
      if (name == "__init__")
        name.clear();
      else if (name.size() > 9 && name.compare(name.size() - 9, 9, "/__init__") == 0)
        name.resize(name.size() - 9);
      for (char& c : name)
        if (c == '/') c = '.';
      std::string pyModule = "inmanta_plugins." + module + (name.empty() ? "" : "." + name);
      sources[it.value().get<std::string>()] = nlohmann::json::array({path, pyModule, requirements});
    }
  }
  return sources;
}

} // namespace inm::artifact

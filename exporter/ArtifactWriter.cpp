// Streams the artifact document (docs/artifact.md, format_version 1) to the output, one resource per
// line, without building an in-memory JSON tree: header (format_version, version, compile metadata,
// agents), resources sorted by id with their keys sorted, resource_sets, files. Only deterministic data
// is written (no time, no paths), so the same model gives the same bytes.
// Invariant: every resource object has exactly the keys id, requires, undefined, version plus its
// registration's fields, in byte order.
#include "ExportState.h"
#include "JsonWriter.h"

#include <algorithm>

#ifndef INM_VERSION
#define INM_VERSION "0.0.0"
#endif

namespace inm::exporter {

namespace {

constexpr int kFormatVersion = 1;

/// One key of a resource object in output order.
struct KeySlot {
  enum Kind : uint8_t { Field, Id, Requires, Undefined, Version } kind;
  llvm::StringRef name;
  uint32_t field = 0;
};

std::vector<KeySlot> keyOrder(const ResourceType& t) {
  std::vector<KeySlot> keys;
  for (uint32_t f = 0; f < t.fields.size(); ++f) keys.push_back({KeySlot::Field, t.fields[f].name, f});
  keys.push_back({KeySlot::Id, "id"});
  keys.push_back({KeySlot::Requires, "requires"});
  keys.push_back({KeySlot::Undefined, "undefined"});
  keys.push_back({KeySlot::Version, "version"});
  std::sort(keys.begin(), keys.end(), [](const KeySlot& a, const KeySlot& b) { return a.name < b.name; });
  return keys;
}

void writeIdList(llvm::raw_ostream& os, const ExportState& s, llvm::ArrayRef<uint32_t> members) {
  os << '[';
  for (size_t i = 0; i < members.size(); ++i) {
    if (i) os << ", ";
    writeJsonString(os, s.resources[members[i]].id);
  }
  os << ']';
}

void writeCompile(llvm::raw_ostream& os, const ExportState& s, const ExportOptions& opts) {
  size_t undefined = 0;
  for (const ExportedResource& r : s.resources) undefined += r.undefined ? 1 : 0;
  const frontend::Project* project = s.model.program().project;
  os << "  \"compile\": {\"agents\": " << s.agents.size()
     << ", \"compiler\": \"inmanta-cpp\", \"compiler_version\": ";
  writeJsonString(os, INM_VERSION);
  os << ", \"environment\": ";
  writeJsonString(os, opts.environment);
  os << ", \"files\": " << s.files.size() << ", \"project\": ";
  writeJsonString(os, project ? llvm::StringRef(project->name) : llvm::StringRef());
  os << ", \"resource_sets\": " << s.sets.size() << ", \"resources\": " << s.resources.size()
     << ", \"undefined\": " << undefined << "},\n";
}

/// `python_code`: per module (sorted by name) its requirements and its files as path -> sha1 (in `files`).
void writeCode(llvm::raw_ostream& os, const ExportOptions& opts) {
  std::vector<const ModuleCode*> mods;
  for (const ModuleCode& m : opts.code) mods.push_back(&m);
  std::sort(mods.begin(), mods.end(),
            [](const ModuleCode* a, const ModuleCode* b) { return a->module < b->module; });
  os << "  \"python_code\": [";
  for (size_t i = 0; i < mods.size(); ++i) {
    os << (i ? ",\n    {\"files\": {" : "\n    {\"files\": {");
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& [path, content] : mods[i]->files) files.emplace_back(path, sha1Hex(content));
    std::sort(files.begin(), files.end());
    for (size_t f = 0; f < files.size(); ++f) {
      if (f) os << ", ";
      writeJsonString(os, files[f].first);
      os << ": ";
      writeJsonString(os, files[f].second);
    }
    os << "}, \"module\": ";
    writeJsonString(os, mods[i]->module);
    os << ", \"requirements\": [";
    for (size_t r = 0; r < mods[i]->requirements.size(); ++r) {
      if (r) os << ", ";
      writeJsonString(os, mods[i]->requirements[r]);
    }
    os << "]}";
  }
  os << (mods.empty() ? "],\n" : "\n  ],\n");
}

} // namespace

void writeArtifact(const ExportState& s, const ExportOptions& opts, llvm::raw_ostream& os) {
  const auto& types = s.bound.registry().types();
  std::vector<std::vector<KeySlot>> orders;
  orders.reserve(types.size());
  for (const ResourceType& t : types) orders.push_back(keyOrder(t));
  const std::string versionSuffix = ",v=" + std::to_string(opts.version);

  os << "{\n  \"format_version\": " << kFormatVersion << ",\n  \"version\": " << opts.version << ",\n";
  writeCompile(os, s, opts);

  os << "  \"agents\": [";
  for (size_t i = 0; i < s.agents.size(); ++i) {
    if (i) os << ", ";
    writeJsonString(os, s.agents[i]);
  }
  os << "],\n";

  os << "  \"resources\": [";
  for (uint32_t r = 0; r < s.resources.size(); ++r) {
    const ExportedResource& res = s.resources[r];
    os << (r ? ",\n    {" : "\n    {");
    bool first = true;
    for (const KeySlot& k : orders[res.type]) {
      if (!first) os << ", ";
      first = false;
      writeJsonString(os, k.name);
      os << ": ";
      switch (k.kind) {
      case KeySlot::Field: writeJsonValue(os, s.fieldValues[res.firstField + k.field]); break;
      case KeySlot::Id:
        // Already escaped as an id; JSON-escaped here as one string.
        writeJsonString(os, res.id + versionSuffix);
        break;
      case KeySlot::Requires: writeIdList(os, s, res.deps); break;
      case KeySlot::Undefined: os << (res.undefined ? "true" : "false"); break;
      case KeySlot::Version: os << opts.version; break;
      }
    }
    os << '}';
  }
  os << (s.resources.empty() ? "],\n" : "\n  ],\n");

  os << "  \"resource_sets\": {";
  bool firstSet = true;
  for (const auto& [name, members] : s.sets) {
    os << (firstSet ? "\n    " : ",\n    ");
    firstSet = false;
    writeJsonString(os, name);
    os << ": ";
    writeIdList(os, s, members);
  }
  os << (s.sets.empty() ? "},\n" : "\n  },\n");

  if (!opts.code.empty()) writeCode(os, opts);

  os << "  \"files\": {";
  bool firstFile = true;
  for (const auto& [hash, content] : s.files.files()) {
    os << (firstFile ? "\n    " : ",\n    ");
    firstFile = false;
    writeJsonString(os, hash);
    os << ": ";
    if (isValidUtf8(content)) {
      writeJsonString(os, content);
    } else {
      os << "{\"base64\": ";
      writeJsonString(os, base64Encode(content));
      os << '}';
    }
  }
  os << ((s.files.size() == 0) ? "}\n" : "\n  }\n");
  os << "}\n";
}

} // namespace inm::exporter

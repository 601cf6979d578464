// Streams the artifact document (docs/artifact.md, format_version 1) to the output, one resource per
// line, without building an in-memory JSON tree: header (format_version, version, compile metadata,
// agents), resources sorted by id with their keys sorted, resource_sets, files. Only deterministic data
// is written (no time, no paths), so the same model gives the same bytes. Threads: a large resource list is
// serialised on two (writeInOrder: this thread and one helper, alternating blocks, reassembled in order).
// Invariant: every resource object has exactly the keys id, requires, undefined, version plus its
// registration's fields, in byte order.
#include "ExportState.h"
#include "JsonWriter.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

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

/// Writes items [0, n) to `os` in order, as `writeOne(out, i)` would one after the other. Large runs are
/// split into blocks that alternate between this thread (written straight to `os`) and one helper thread,
/// which serialises its blocks into at most kAhead buffers ahead of the writer; the bytes are the same as a
/// single-threaded run. `writeOne` must only read shared data.
template <typename WriteOne>
void writeInOrder(llvm::raw_ostream& os, uint32_t n, WriteOne writeOne) {
  constexpr uint32_t kBlock = 512;
  constexpr uint32_t kAhead = 4;
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  if (blocks < 8) { // small exports: no thread
    for (uint32_t i = 0; i < n; ++i) writeOne(os, i);
    return;
  }
  struct Buffer {
    std::string text;
    bool ready = false;
  };
  std::array<Buffer, kAhead> buffers; // the k-th helper block (block 2k+1) goes to buffers[k % kAhead]
  std::mutex mu;
  std::condition_variable cv;
  uint32_t consumed = 0; // helper blocks written to `os`
  auto writeBlock = [&](llvm::raw_ostream& out, uint32_t b) {
    for (uint32_t i = b * kBlock, end = std::min(n, (b + 1) * kBlock); i < end; ++i) writeOne(out, i);
  };
  std::thread helper([&] {
    for (uint32_t b = 1, k = 0; b < blocks; b += 2, ++k) {
      Buffer& buf = buffers[k % kAhead];
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return k < consumed + kAhead; }); // its previous block was written
      }
      buf.text.clear();
      llvm::raw_string_ostream out(buf.text);
      out.SetBufferSize(1 << 16); // unbuffered, every small write would append to the string
      writeBlock(out, b);
      out.flush();
      {
        std::lock_guard<std::mutex> lock(mu);
        buf.ready = true;
      }
      cv.notify_all();
    }
  });
  for (uint32_t b = 0, k = 0; b < blocks; ++b) {
    if (b % 2 == 0) {
      writeBlock(os, b);
      continue;
    }
    Buffer& buf = buffers[k % kAhead];
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return buf.ready; });
    }
    os << buf.text;
    {
      std::lock_guard<std::mutex> lock(mu);
      buf.ready = false;
      ++consumed;
      ++k;
    }
    cv.notify_all();
  }
  helper.join();
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
  writeInOrder(os, uint32_t(s.resources.size()), [&](llvm::raw_ostream& out, uint32_t r) {
    const ExportedResource& res = s.resources[r];
    out << (r ? ",\n    {" : "\n    {");
    bool first = true;
    for (const KeySlot& k : orders[res.type]) {
      if (!first) out << ", ";
      first = false;
      writeJsonString(out, k.name);
      out << ": ";
      switch (k.kind) {
      case KeySlot::Field: writeJsonValue(out, s.fieldValues[res.firstField + k.field]); break;
      case KeySlot::Id:
        // Already escaped as an id; JSON-escaped here as one string.
        writeJsonString(out, (res.id + versionSuffix).str());
        break;
      case KeySlot::Requires: writeIdList(out, s, s.depsOf(res)); break;
      case KeySlot::Undefined: out << (res.undefined ? "true" : "false"); break;
      case KeySlot::Version: out << opts.version; break;
      }
    }
    out << '}';
  });
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

// Streams the artifact document (docs/artifact.md, format_version 1) to the output, one resource per
// line, without building an in-memory JSON tree: header (format_version, version, compile metadata,
// agents), resources sorted by id with their keys sorted, resource_sets, files. Only deterministic data
// is written (no time, no paths), so the same model gives the same bytes. Threads: a large artifact is
// rendered on two (writeJobs: this thread and one helper, alternating jobs, each written in order by its
// renderer). Invariant: every resource object has exactly the keys id, requires, undefined, version plus its
// registration's fields, in byte order.
#include "ExportState.h"
#include "JsonWriter.h"

#include <algorithm>
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

/// Per registration, the resource object as literal pieces between values: `{"key": ` then the value of that
/// key, `, "key": ` then the next value, and so on (keys in byte order).
struct Template {
  struct Piece {
    std::string lead; ///< escaped key text with its separator
    KeySlot::Kind kind;
    uint32_t field;
  };
  std::vector<Piece> pieces;
};

Template makeTemplate(const ResourceType& t) {
  Template tpl;
  for (const KeySlot& k : keyOrder(t)) {
    std::string lead = tpl.pieces.empty() ? "{" : ", ";
    llvm::raw_string_ostream os(lead);
    writeJsonString(os, k.name);
    os << ": ";
    os.flush();
    tpl.pieces.push_back({std::move(lead), k.kind, k.field});
  }
  return tpl;
}

/// Renders the artifact's resource list and writes it to `os` in order. The text is cut into jobs (the header
/// and agents, blocks of resources, the trailer); a large export renders them on two threads (this one and a
/// helper, alternate jobs), each into its own buffer, and each thread writes its buffer when the job before
/// it was written, so the write of one job overlaps the rendering of the next. The bytes are those of one
/// thread rendering every job in turn.
class ResourceListWriter {
 public:
  ResourceListWriter(const ExportState& s, const ExportOptions& opts) : s_(s) {
    for (const ResourceType& t : s.bound.registry().types()) templates_.push_back(makeTemplate(t));
    versionSuffix_ = ",v=" + std::to_string(opts.version);
    versionText_ = std::to_string(opts.version);
  }

  /// Asks for the memory resource `r` will read, in three steps a few resources apart (each needs what the
  /// one before fetched): 0 its instance record and id text, 1 its attribute slots, 2 the text of its string
  /// attributes. Resources are written in id order, which visits the model's instances and strings in no
  /// useful order: without this, rendering waited for a cache miss at nearly every value.
  void prefetch(uint32_t r, int step) const {
    if (r >= s_.resources.size()) return;
    const ExportedResource& res = s_.resources[r];
    if (step == 0) {
      __builtin_prefetch(&s_.model.instance(res.inst));
      __builtin_prefetch(res.id.data());
      return;
    }
    const std::vector<int>& slots = s_.fieldSlots[s_.model.entityOf(res.inst).index];
    for (int slot : slots) {
      if (slot < 0) continue;
      const runtime::Value& v = s_.model.slot(res.inst, uint32_t(slot));
      if (step == 1)
        __builtin_prefetch(&v);
      else if (v.kind == runtime::ValueKind::String)
        __builtin_prefetch(v.s);
    }
  }

  /// Renders resource `r` (with its leading separator).
  void render(TextBuffer& out, uint32_t r) const {
    const ExportedResource& res = s_.resources[r];
    out.append(r ? llvm::StringRef(",\n    ") : llvm::StringRef("\n    "));
    for (const Template::Piece& p : templates_[res.type].pieces) {
      out.append(p.lead);
      switch (p.kind) {
      case KeySlot::Field: appendJsonValue(out, s_.fieldValue(res, p.field)); break;
      case KeySlot::Id: // already escaped as an id; JSON-escaped here as one string with its version
        out.append('"');
        appendJsonStringBody(out, res.id);
        appendJsonStringBody(out, versionSuffix_);
        out.append('"');
        break;
      case KeySlot::Requires: {
        out.append('[');
        bool first = true;
        for (uint32_t d : s_.depsOf(res)) {
          if (!first) out.append(", ");
          first = false;
          appendJsonString(out, s_.resources[d].id);
        }
        out.append(']');
        break;
      }
      case KeySlot::Undefined:
        out.append(res.undefined ? llvm::StringRef("true") : llvm::StringRef("false"));
        break;
      case KeySlot::Version: out.append(versionText_); break;
      }
    }
    out.append('}');
  }

 private:
  const ExportState& s_;
  std::vector<Template> templates_;
  std::string versionSuffix_, versionText_;
};

/// Runs jobs [0, n): `render(buffer, j)` fills a buffer, which is then written to `os`, in job order. With
/// `parallel`, even jobs run on this thread and odd ones on a helper thread, which renders the last job (the
/// trailer, independent of the others) first, while this thread renders the header: otherwise it was rendered
/// alone at the end. `render` must only read shared data.
template <typename Render>
void writeJobs(llvm::raw_ostream& os, uint32_t n, bool parallel, Render render) {
  if (!parallel) {
    TextBuffer buf;
    for (uint32_t j = 0; j < n; ++j) {
      buf.clear();
      render(buf, j);
      os << buf.str();
    }
    return;
  }
  std::mutex mu;
  std::condition_variable cv;
  uint32_t turn = 0; // the next job to write
  auto writeInTurn = [&](uint32_t j, const TextBuffer& buf) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return turn == j; });
    }
    os << buf.str(); // only the thread whose turn it is touches `os`
    {
      std::lock_guard<std::mutex> lock(mu);
      ++turn;
    }
    cv.notify_all();
  };
  auto run = [&](uint32_t first) {
    TextBuffer buf, last;
    if (first == 1) render(last, n - 1);
    for (uint32_t j = first; j < n - 1; j += 2) {
      buf.clear();
      render(buf, j);
      writeInTurn(j, buf);
    }
    if (first == 1) writeInTurn(n - 1, last);
  };
  std::thread helper([&] { run(1); });
  run(0);
  helper.join();
}

/// The text before the resource list: format, version, compile metadata, agents.
void writeHeader(llvm::raw_ostream& os, const ExportState& s, const ExportOptions& opts) {
  os << "{\n  \"format_version\": " << kFormatVersion << ",\n  \"version\": " << opts.version << ",\n";
  writeCompile(os, s, opts);
  os << "  \"agents\": [";
  for (size_t i = 0; i < s.agents.size(); ++i) {
    if (i) os << ", ";
    writeJsonString(os, s.agents[i]);
  }
  os << "],\n";
  os << "  \"resources\": [";
}

/// The text after the resource list: resource sets, Python code, files.
void writeTrailer(llvm::raw_ostream& os, const ExportState& s, const ExportOptions& opts) {
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
  for (const auto& [hash, content] : s.files.sorted()) {
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

} // namespace

void writeArtifact(const ExportState& s, const ExportOptions& opts, llvm::raw_ostream& os) {
  // Jobs: 0 the header, 1..blocks the resources in blocks of kBlock, blocks + 1 the trailer.
  constexpr uint32_t kBlock = 512;
  const uint32_t n = uint32_t(s.resources.size());
  const uint32_t blocks = (n + kBlock - 1) / kBlock;
  ResourceListWriter resources(s, opts);
  auto render = [&](TextBuffer& out, uint32_t job) {
    if (job == 0 || job == blocks + 1) {
      std::string text;
      llvm::raw_string_ostream ts(text);
      if (job == 0)
        writeHeader(ts, s, opts);
      else
        writeTrailer(ts, s, opts);
      ts.flush();
      out.append(text);
      return;
    }
    for (uint32_t r = (job - 1) * kBlock, end = std::min(n, job * kBlock); r < end; ++r) {
      resources.prefetch(r + 12, 0);
      resources.prefetch(r + 8, 1);
      resources.prefetch(r + 4, 2);
      resources.render(out, r);
    }
  };
  writeJobs(os, blocks + 2, /*parallel=*/blocks >= 8, render);
}

} // namespace inm::exporter

// The std module's resource registrations (std.md §3) with their mappers: File `hash` (content with
// prefix/suffix parts, stored in the files set, sha1 hex exported), `permissions = int(mode)` for File and
// Directory, AgentConfig dropped unless `autostart`, and the dir_before_file dependency manager.
// Invariant: mappers never fail on an unknown input; they return Unknown (the resource becomes undefined).
#include "exporter/Dependencies.h"
#include "exporter/ResourceRegistry.h"

#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <cmath>

namespace inm::exporter {

using runtime::InstanceId;
using runtime::Value;
using runtime::ValueKind;

namespace {

/// The Content instances of a relation, sorted by sorting_key (value when the key is null); false if a
/// value is unknown.
bool sortedParts(MapperContext& ctx, const Value* rel, std::vector<llvm::StringRef>& out,
                 std::string& error) {
  if (!rel) return true;
  struct Part {
    llvm::StringRef key, value;
  };
  std::vector<Part> parts;
  auto addOne = [&](const Value& v) -> bool {
    if (v.isUnknown()) return false;
    if (v.kind != ValueKind::Instance) return true;
    const Value* value = ctx.attr(v.instanceId(), "value");
    const Value* key = ctx.attr(v.instanceId(), "sorting_key");
    if (!value || value->isUnknown() || (key && key->isUnknown())) return false;
    if (value->kind != ValueKind::String) {
      error = "the value of " + ctx.model().describe(v.instanceId()) + " is not a string";
      return true;
    }
    llvm::StringRef sortKey = key && key->kind == ValueKind::String ? key->str() : value->str();
    parts.push_back({sortKey, value->str()});
    return true;
  };
  if (rel->kind == ValueKind::List) {
    for (const Value& v : rel->items())
      if (!addOne(v)) return false;
  } else if (!addOne(*rel)) {
    return false;
  }
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.key < b.key; });
  for (const Part& p : parts) out.push_back(p.value);
  return true;
}

/// File.hash: the content (with prefix/suffix parts) goes to the files set; the field is its sha1.
FieldResult fileHash(MapperContext& ctx, InstanceId inst) {
  const Value* content = ctx.attr(inst, "content");
  if (!content) return FieldResult::error("attribute 'content' is not set");
  if (content->isUnknown()) return FieldResult::ok(Value::unknown());
  if (content->kind != ValueKind::String) return FieldResult::error("attribute 'content' is not a string");
  std::vector<llvm::StringRef> prefix, suffix;
  std::string error;
  if (!sortedParts(ctx, ctx.attr(inst, "prefix_content"), prefix, error) ||
      !sortedParts(ctx, ctx.attr(inst, "suffix_content"), suffix, error))
    return FieldResult::ok(Value::unknown());
  if (!error.empty()) return FieldResult::error(error);
  if (prefix.empty() && suffix.empty()) return FieldResult::ok(ctx.str(ctx.addFile(content->str())));

  const Value* sepValue = ctx.attr(inst, "content_seperator");
  if (sepValue && sepValue->isUnknown()) return FieldResult::ok(Value::unknown());
  llvm::StringRef sep = sepValue && sepValue->kind == ValueKind::String ? sepValue->str() : "\n";
  std::string text;
  if (!prefix.empty()) {
    for (llvm::StringRef p : prefix) {
      text += p;
      text += sep;
    }
    text += sep;
  }
  text += content->str();
  if (!suffix.empty()) {
    text += sep;
    for (llvm::StringRef s : suffix) {
      text += s;
      text += sep;
    }
  }
  return FieldResult::ok(ctx.str(ctx.addFile(text)));
}

/// permissions = int(mode)
FieldResult permissions(MapperContext& ctx, InstanceId inst) {
  const Value* mode = ctx.attr(inst, "mode");
  if (!mode) return FieldResult::error("attribute 'mode' is not set");
  switch (mode->kind) {
  case ValueKind::Unknown: return FieldResult::ok(Value::unknown());
  case ValueKind::Int:
  case ValueKind::BigInt: return FieldResult::ok(*mode);
  case ValueKind::Bool: return FieldResult::ok(Value::integer(mode->b ? 1 : 0));
  case ValueKind::Float:
    if (!std::isfinite(mode->f)) break;
    return FieldResult::ok(Value::integer(int64_t(std::trunc(mode->f))));
  case ValueKind::String: {
    int64_t n = 0;
    if (!llvm::StringRef(mode->str()).trim().getAsInteger(10, n)) return FieldResult::ok(Value::integer(n));
    break;
  }
  default: break;
  }
  return FieldResult::error("invalid mode " + ctx.model().repr(*mode) + ": int(mode) failed");
}

/// AgentConfig is only exported when autostart is true (the reference's mapper ignores it otherwise).
FieldResult autostart(MapperContext& ctx, InstanceId inst) {
  const Value* v = ctx.attr(inst, "autostart");
  if (!v || v->kind != ValueKind::Bool || !v->b) return FieldResult::ignore();
  return FieldResult::ok(*v);
}

void dirBeforeFileManager(const DependencyView& view, std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  // Only a Directory can be required: without one there is no edge (and no need to read 26k File paths).
  bool anyDirectory = false;
  for (uint32_t r = 0; r < view.size() && !anyDirectory; ++r)
    anyDirectory = view.typeName(r) == "std::Directory";
  if (!anyDirectory) return;
  std::vector<PathResource> paths;
  std::vector<uint32_t> owner;
  for (uint32_t r = 0; r < view.size(); ++r) {
    llvm::StringRef type = view.typeName(r);
    bool isDir = type == "std::Directory";
    if (!isDir && type != "std::File") continue;
    const Value* host = view.model().get(view.instance(r), "host");
    const Value* path = view.field(r, "path");
    if (!host || host->kind != ValueKind::Instance || !path || path->kind != ValueKind::String) continue;
    paths.push_back({host->instanceId().index, isDir, path->str()});
    owner.push_back(r);
  }
  std::vector<std::pair<uint32_t, uint32_t>> local;
  dirBeforeFile(paths, local);
  for (auto [from, to] : local) edges.emplace_back(owner[from], owner[to]);
}

void check(llvm::Error e) {
  // The std registrations are static data; a failure is a bug in this file.
  if (e) {
    llvm::errs() << "internal error: " << llvm::toString(std::move(e)) << "\n";
    std::abort();
  }
}

} // namespace

void registerStdResources(ResourceRegistry& r) {
  BaseFields purgeable{/*purgeable=*/true, /*managed=*/false};
  check(r.add("std::File", "host.name", "path",
              {{"path", {}},
               {"owner", {}},
               {"hash", fileHash},
               {"group", {}},
               {"permissions", permissions},
               {"reload", {}}},
              purgeable));
  check(r.add("std::Directory", "host.name", "path",
              {{"path", {}}, {"owner", {}}, {"group", {}}, {"permissions", permissions}, {"reload", {}}},
              purgeable));
  check(r.add("std::Symlink", "host.name", "target", {{"source", {}}, {"target", {}}, {"reload", {}}},
              purgeable));
  check(r.add("std::Package", "host.name", "name", {{"name", {}}, {"state", {}}, {"reload", {}}}));
  check(r.add("std::Service", "host.name", "name",
              {{"onboot", {}}, {"state", {}}, {"name", {}}, {"reload", {}}}));
  check(r.add("std::AgentConfig", "agent", "agentname",
              {{"agentname", {}}, {"uri", {}}, {"autostart", autostart}}, purgeable));
  check(r.add("std::testing::NullResource", "agentname", "name",
              {{"name", {}}, {"agentname", {}}, {"fail", {}}},
              BaseFields{/*purgeable=*/true, /*managed=*/true}));
  r.addDependencyManager("std::dir_before_file", dirBeforeFileManager);
}

} // namespace inm::exporter

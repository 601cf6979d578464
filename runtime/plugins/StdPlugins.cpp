// Entry point of the native std plugins: registerStdPlugins() wires every plugin group (strings, lists,
// values, files/templates/secrets, environment, network/validation) into the registry, plus the helpers
// the groups share. The signatures live in ir/BuiltinPlugins.cpp; each has exactly one implementation here.
#include "PluginUtil.h"
#include "support/Limits.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

namespace inm::runtime {

void registerStdPlugins(PluginRegistry& registry) {
  plugins::registerStringPlugins(registry);
  plugins::registerListPlugins(registry);
  plugins::registerValuePlugins(registry);
  plugins::registerFilePlugins(registry);
  plugins::registerEnvPlugins(registry);
  plugins::registerNetPlugins(registry);
  plugins::registerValidatePlugins(registry);
}

namespace plugins {

bool truthy(const Value& v) {
  switch (v.kind) {
  case ValueKind::Null: return false;
  case ValueKind::Bool: return v.b;
  case ValueKind::Int: return v.i != 0;
  case ValueKind::BigInt: return true; // never 0
  case ValueKind::Float: return v.f != 0.0;
  case ValueKind::String: return v.s->size != 0;
  case ValueKind::List: return v.l->size != 0;
  case ValueKind::Dict: return v.d->size != 0;
  case ValueKind::Instance: return true;
  case ValueKind::Unknown: return false;
  }
  return false;
}

bool valueLess(const Value& a, const Value& b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.kind == ValueKind::Int && b.kind == ValueKind::Int) return a.i < b.i;
    if (a.kind == ValueKind::Float && b.kind == ValueKind::Float) return a.f < b.f;
    if (a.kind == ValueKind::Float) return compareIntFloat(b, a.f) == 1;
    if (b.kind == ValueKind::Float) return compareIntFloat(a, b.f) == -1;
    return compareInts(a, b) < 0;
  }
  if (a.kind != b.kind) return uint8_t(a.kind) < uint8_t(b.kind);
  switch (a.kind) {
  case ValueKind::String: return a.str() < b.str();
  case ValueKind::List: {
    auto x = a.items(), y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (valueLess(x[i], y[i])) return true;
      if (valueLess(y[i], x[i])) return false;
    }
    return x.size() < y.size();
  }
  case ValueKind::Instance: return a.inst < b.inst;
  default: return false;
  }
}

const Value* readAttr(PluginContext& ctx, InstanceId id, llvm::StringRef name, bool* retry, bool* missing) {
  bool exists = true;
  const Value* v = ctx.attr(id, name, &exists);
  if (retry) *retry = !v && exists;
  if (missing) *missing = !exists;
  return v;
}

std::string entityName(PluginContext& ctx, InstanceId id) {
  const ir::Program& p = ctx.model().program();
  return p.entities[ctx.model().entityOf(id)].fullName;
}

/// True when attribute `name` of instance `id` is an optional ([0:1]) relation end.
bool isOptionalRelation(PluginContext& ctx, InstanceId id, llvm::StringRef name) {
  const ir::Program& p = ctx.model().program();
  StringId sid = p.strings->lookup(name);
  if (!sid.valid()) return false;
  int slot = p.slotOf(ctx.model().entityOf(id), sid);
  if (slot < 0) return false;
  return p.attrs[p.entities[ctx.model().entityOf(id)].slots[size_t(slot)]].isOptional();
}

bool readFile(const std::string& path, std::string& out) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return false;
  out = (*buf)->getBuffer().str();
  return true;
}

bool confinedPath(llvm::StringRef base, llvm::StringRef rel, std::string& out, std::string& err) {
  // Lexical normalisation first: `..` may not leave the folder even through a directory that does not exist.
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::SmallVector<llvm::StringRef, 16> comps;
  rel.split(comps, '/', -1, false);
  for (llvm::StringRef c : comps) {
    if (c == ".") continue;
    if (c == "..") {
      if (parts.empty()) {
        err = "path " + rel.str() + " leaves its folder " + base.str() + " ('..' above it is not allowed)";
        return false;
      }
      parts.pop_back();
      continue;
    }
    if (c.contains('\0')) {
      err = "path " + rel.str() + " contains a NUL byte";
      return false;
    }
    parts.push_back(c);
  }
  llvm::SmallString<256> joined(base);
  for (llvm::StringRef c : parts) llvm::sys::path::append(joined, c);
  // Then the real paths: a symbolic link (or a linked folder) may not point outside either.
  llvm::SmallString<256> realBase, realFile;
  if (llvm::sys::fs::real_path(base, realBase) || llvm::sys::fs::real_path(joined, realFile)) {
    err.clear();
    out = std::string(joined.str());
    return false;
  }
  llvm::StringRef rb = realBase.str(), rf = realFile.str();
  if (rf != rb && !(rf.startswith(rb) && rf.size() > rb.size() && rf[rb.size()] == '/')) {
    err = "path " + rel.str() + " resolves to " + rf.str() + ", outside its folder " + rb.str() +
          " (a symbolic link pointing outside is refused)";
    return false;
  }
  out = std::string(realFile.str());
  return true;
}

bool readConfinedFile(const std::string& path, std::string& out, std::string& err) {
  uint64_t size = 0;
  if (!llvm::sys::fs::is_regular_file(path) || llvm::sys::fs::file_size(path, size)) {
    err = "not a regular file";
    return false;
  }
  if (size > limits().maxStringBytes) {
    err = "the file has " + std::to_string(size) + " bytes, more than the limit of " +
          std::to_string(limits().maxStringBytes) + " (--max-string-bytes)";
    return false;
  }
  if (!readFile(path, out)) {
    err = "cannot be read";
    return false;
  }
  return true;
}

} // namespace plugins
} // namespace inm::runtime

namespace inm::runtime::plugins {
void warnDeprecated(PluginContext& ctx, llvm::StringRef name) {
  ctx.warn(DiagKind::DeprecatedPlugin,
           diagText(DiagKind::DeprecatedPlugin, name.str(), "inmanta_plugins.std"));
}
} // namespace inm::runtime::plugins

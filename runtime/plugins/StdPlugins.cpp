// Entry point of the native std plugins: registerStdPlugins() wires every plugin group (strings, lists,
// values, files/templates/secrets, environment, network/validation) into the registry, plus the helpers
// the groups share. The signatures live in ir/BuiltinPlugins.cpp; each has exactly one implementation here.
#include "PluginUtil.h"

#include <llvm/Support/MemoryBuffer.h>

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
  case ValueKind::Float: return v.f != 0.0;
  case ValueKind::String: return v.s->size != 0;
  case ValueKind::List: return v.l->size != 0;
  case ValueKind::Dict: return v.d->size != 0;
  case ValueKind::Instance: return true;
  case ValueKind::Unknown: return false;
  }
  return false;
}

static double num(const Value& v) {
  return v.kind == ValueKind::Float ? v.f : v.kind == ValueKind::Bool ? (v.b ? 1.0 : 0.0) : double(v.i);
}

bool valueLess(const Value& a, const Value& b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.kind == ValueKind::Int && b.kind == ValueKind::Int) return a.i < b.i;
    return num(a) < num(b);
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

} // namespace plugins
} // namespace inm::runtime

namespace inm::runtime::plugins {
void warnDeprecated(PluginContext& ctx, llvm::StringRef name) {
  ctx.warn("Plugin '" + name.str() + "' in module 'inmanta_plugins.std' is deprecated.");
}
} // namespace inm::runtime::plugins

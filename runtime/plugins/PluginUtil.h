// Small helpers shared by the native std plugin implementations (runtime/plugins/*.cpp): argument
// access with "null means default" handling, result constructors, and the registration entry points of
// each plugin group. Invariant: helpers never throw; a plugin reports every model mistake as an Error
// result with a diagnostic kind.
#pragma once

#include "runtime/BigInt.h"
#include "runtime/Plugins.h"

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <vector>

namespace inm::runtime::plugins {

using Args = llvm::ArrayRef<Value>;

inline PluginResult ok(Value v) { return PluginResult::ok(v); }
inline PluginResult okStr(PluginContext& ctx, llvm::StringRef s) {
  return PluginResult::ok(ctx.arena().str(s));
}
inline PluginResult okInt(int64_t i) { return PluginResult::ok(Value::integer(i)); }
inline PluginResult okBool(bool b) { return PluginResult::ok(Value::boolean(b)); }
inline PluginResult okNull() { return PluginResult::ok(Value::null()); }
/// A failure the plugin raises on purpose (reference: PluginException → ExplicitPluginException).
inline PluginResult explicitError(std::string msg) {
  return PluginResult::error(DiagKind::ExplicitPlugin, std::move(msg));
}
/// A failure of the plugin's own code (reference: any Python exception → ExternalException).
inline PluginResult externalError(std::string msg) {
  return PluginResult::error(DiagKind::External, std::move(msg));
}

/// args[i] as a string ("" when it is not one).
inline llvm::StringRef strArg(Args args, size_t i) {
  return i < args.size() && args[i].kind == ValueKind::String ? args[i].str() : llvm::StringRef();
}
/// args[i] as an integer, `def` when null/absent (bools count as 0/1, floats truncate).
inline int64_t intArg(Args args, size_t i, int64_t def = 0) {
  if (i >= args.size()) return def;
  const Value& v = args[i];
  switch (v.kind) {
  case ValueKind::Int: return v.i;
  case ValueKind::BigInt: return intSaturated(v); // beyond any count or index: the callers' limits report it
  case ValueKind::Bool: return v.b ? 1 : 0;
  case ValueKind::Float: return int64_t(v.f);
  default: return def;
  }
}
inline bool boolArg(Args args, size_t i, bool def) {
  if (i >= args.size() || args[i].kind != ValueKind::Bool) return def;
  return args[i].b;
}
inline bool isGiven(Args args, size_t i) { return i < args.size() && !args[i].isNull(); }

/// Python truthiness of a runtime value.
bool truthy(const Value& v);
/// Python-like ordering for sorting (numbers, strings, bools; mixed kinds by kind order).
bool valueLess(const Value& a, const Value& b);
/// Reads an instance attribute for a plugin: nullptr + *retry=true when not final yet, nullptr +
/// *missing=true when the entity has no such attribute.
const Value* readAttr(PluginContext& ctx, InstanceId id, llvm::StringRef name, bool* retry, bool* missing);
/// Fully qualified entity name of an instance.
std::string entityName(PluginContext& ctx, InstanceId id);
/// True when attribute `name` of instance `id` is an optional ([0:1]) relation end.
bool isOptionalRelation(PluginContext& ctx, InstanceId id, llvm::StringRef name);
/// Reads a whole file; false if it cannot be read.
bool readFile(const std::string& path, std::string& out);

/// Resolves `rel` inside the folder `base` (a module's files/ or templates/) for std::file, std::source,
/// std::list_files and std::template: a leading '/' means `base` itself, `..` cannot climb above it, and the
/// resolved real path (symbolic links followed) must stay under `base`'s real path, so a model cannot read
/// outside its own files. On success `out` is the path; otherwise `err` says why ("" + false: does not
/// exist).
bool confinedPath(llvm::StringRef base, llvm::StringRef rel, std::string& out, std::string& err);
/// Reads a confined file of at most Limits::maxStringBytes; false with `err` set otherwise.
bool readConfinedFile(const std::string& path, std::string& out, std::string& err);

/// Python str.replace.
std::string pyReplace(llvm::StringRef s, llvm::StringRef from, llvm::StringRef to);
/// Logs the deprecation warning of plugin `name`.
void warnDeprecated(PluginContext& ctx, llvm::StringRef name);

/// Jinja-style rendering of `std::template`; see Template.h.
PluginResult renderTemplatePlugin(PluginContext& ctx, Args args);

// Registration of each plugin group.
void registerStringPlugins(PluginRegistry& r);
void registerListPlugins(PluginRegistry& r);
void registerValuePlugins(PluginRegistry& r);
void registerFilePlugins(PluginRegistry& r);
void registerEnvPlugins(PluginRegistry& r);
void registerNetPlugins(PluginRegistry& r);
void registerValidatePlugins(PluginRegistry& r);

/// validate_type's check: 1 valid, 0 invalid, -1 unsupported type name (err set).
int validateType(llvm::StringRef type, const Value& v, const Value& params, std::string& err);
/// Strict base64 (Python b64decode(validate=True)).
bool isBase64(llvm::StringRef s);

} // namespace inm::runtime::plugins

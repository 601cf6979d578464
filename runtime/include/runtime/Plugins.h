// The native plugin registry: implementations of plugins declared in the IR (ir::Plugin, found by their
// fully qualified name "std::print"). One registry so a later Python bridge can add more.
// Calling convention: the evaluator binds arguments to the declared parameters (defaults filled, types
// checked, unknowns short-circuited unless allowUnknown) and calls the function once per evaluation.
// A plugin that needs an instance attribute that is not yet final calls ctx.attr(); when that returns
// nullptr the plugin must return PluginResult::retry() and will be called again later.
#pragma once

#include "runtime/Model.h"
#include "runtime/Value.h"
#include "support/Diagnostics.h"

#include <functional>
#include <string>
#include <vector>

namespace inm::runtime {

/// What a plugin call produced: a value, an error, or "call me again when an attribute is final".
struct PluginResult {
  enum Kind : uint8_t { Ok, Error, Retry } kind = Ok;
  Value value;
  DiagKind errorKind = DiagKind::ExplicitPlugin; // e.g. ExplicitPlugin, External, PluginType
  /// The plugin's own text for External, ExplicitPlugin and WrappingRuntime; else the kind's text, made by
  /// diagText (failure()).
  std::string message;
  std::string cause; ///< optional "caused by" text shown under the error (e.g. a type check's detail)

  static PluginResult ok(Value v) {
    PluginResult r;
    r.value = v;
    return r;
  }
  static PluginResult error(DiagKind kind, std::string msg) {
    PluginResult r;
    r.kind = Error;
    r.errorKind = kind;
    r.message = std::move(msg);
    return r;
  }
  /// An error of `kind` with the kind's format filled from `args` (DiagnosticKinds.def).
  template <typename... Args>
  static PluginResult failure(DiagKind kind, Args&&... args) {
    return error(kind, diagText(kind, std::forward<Args>(args)...));
  }
  static PluginResult retry() {
    PluginResult r;
    r.kind = Retry;
    return r;
  }
};

/// Services the evaluator offers to a plugin during one call.
class PluginContext {
 public:
  virtual ~PluginContext() = default;
  virtual Model& model() = 0;
  ValueArena& arena() { return model().arena(); }
  /// Final value of an instance attribute, or nullptr if not final yet (then return retry()).
  /// Sets *exists=false (and returns nullptr) when the entity has no such attribute.
  virtual const Value* attr(InstanceId id, llvm::StringRef name, bool* exists = nullptr) = 0;
  /// Writes a line to the compiler's stdout (std::print).
  virtual void print(llvm::StringRef line) = 0;
  virtual const std::string& projectDir() = 0;
  /// Directory of the module a path like "mod/file" names, "" if no such module.
  virtual std::string moduleDir(llvm::StringRef module) = 0;
  /// Module of the calling statement ("__config__" for main.cf).
  virtual std::string callerModule() = 0;
  /// Resolves a fully qualified entity name ("mod::Type"), invalid id if unknown.
  virtual ir::EntityId findEntity(llvm::StringRef fullName) = 0;
  /// Variables visible at the call site (std::template without kwargs); nullptr if not found/not final.
  virtual const Value* lookupVariable(llvm::StringRef name) = 0;
  /// True if `name` is a variable visible at the call site, final or not (lets std::template tell
  /// "undefined" from "not final yet" after lookupVariable returned nullptr). Default: assume visible.
  virtual bool hasVariable(llvm::StringRef name) {
    (void)name;
    return true;
  }
  /// Logs a warning of `kind` (a deprecation); `message` is the kind's text, made by diagText(kind, ...).
  virtual void warn(DiagKind kind, std::string message) = 0;
  /// False when declared parameter `i` was omitted by the caller (it has a default; args[i] is null).
  virtual bool argGiven(size_t i) {
    (void)i;
    return true;
  }
  /// Checks `v` against typedef `fullName` (base type and constraint) as a model assignment would; false with
  /// the assignment's error text in `err`. Unknown typedef names and contexts without an evaluator accept.
  virtual bool checkTypedef(llvm::StringRef fullName, const Value& v, std::string& err) {
    (void)fullName, (void)v, (void)err;
    return true;
  }
};

/// args[i] is the value bound to the i-th declared parameter (Null when omitted without default is
/// impossible: the evaluator reports the missing argument). `**kwargs` parameters receive a Dict.
using PluginFn = std::function<PluginResult(PluginContext& ctx, llvm::ArrayRef<Value> args)>;

/// Native plugin implementations keyed by fully qualified name.
class PluginRegistry {
 public:
  void add(std::string fullName, PluginFn fn);
  const PluginFn* find(llvm::StringRef fullName) const;
  /// The registry with every built-in std plugin.
  static const PluginRegistry& builtins();

 private:
  std::vector<std::pair<std::string, PluginFn>> fns_;
};

/// Registers the std plugins (defined in runtime/plugins/*.cpp).
void registerStdPlugins(PluginRegistry& registry);

} // namespace inm::runtime

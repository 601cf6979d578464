// Native std plugins on values and instances (std.md §5 "Values and objects"): print, assert, equals,
// isset, inlineif, attr, getattr, is_instance, type, objid, is_unknown, invert, to_number, timestamp,
// familyof. Instance reads go through PluginContext::attr and retry while an attribute is not final.
#include "PluginUtil.h"

#include <fmt/format.h>

#include <ctime>

namespace inm::runtime::plugins {

namespace {

/// The text std::print writes for a value (language.md §5.11): containers and instances reach the
/// reference plugin as proxies and print with a leading '@'.
std::string printForm(PluginContext& ctx, const Value& v) {
  if (v.kind == ValueKind::List || v.kind == ValueKind::Dict || v.kind == ValueKind::Instance)
    return "@" + ctx.model().display(v, false); // an instance: "Type <address>", as inside a list
  return ctx.model().display(v, true);
}

} // namespace

void registerValuePlugins(PluginRegistry& r) {
  r.add("std::print", [](PluginContext& ctx, Args a) {
    ctx.print(printForm(ctx, a[0]));
    return okNull();
  });
  r.add("std::assert", [](PluginContext&, Args a) {
    if (truthy(a[0])) return okNull();
    return externalError("AssertionError: Assertion error: " + strArg(a, 1).str());
  });
  r.add("std::equals", [](PluginContext& ctx, Args a) {
    warnDeprecated(ctx, "std::equals");
    if (valuesEqual(a[0], a[1])) return okNull();
    std::string msg = ctx.model().display(a[0]) + " != " + ctx.model().display(a[1]);
    if (isGiven(a, 2)) msg = ctx.model().display(a[2]) + ": " + msg;
    return externalError("AssertionError: " + msg);
  });
  r.add("std::isset", [](PluginContext&, Args a) { return okBool(!a[0].isNull()); });
  r.add("std::inlineif", [](PluginContext&, Args a) { return ok(truthy(a[0]) ? a[1] : a[2]); });
  r.add("std::attr", [](PluginContext& ctx, Args a) {
    if (a[0].kind != ValueKind::Instance)
      return externalError("AttributeError: '" + ctx.model().repr(a[0]) + "' has no attribute '" +
                           strArg(a, 1).str() + "'");
    bool retry = false, missing = false;
    const Value* v = readAttr(ctx, a[0].instanceId(), strArg(a, 1), &retry, &missing);
    if (retry) return PluginResult::retry();
    if (!v)
      return PluginResult::error(DiagKind::WrappingRuntime, "Attribute " + strArg(a, 1).str() +
                                                                " does not exist on " +
                                                                entityName(ctx, a[0].instanceId()));
    return ok(*v);
  });
  r.add("std::getattr", [](PluginContext& ctx, Args a) {
    Value def = a.size() > 2 ? a[2] : Value::null();
    bool noUnknown = boolArg(a, 3, true);
    if (a[0].kind != ValueKind::Instance) return ok(def);
    bool retry = false, missing = false;
    const Value* v = readAttr(ctx, a[0].instanceId(), strArg(a, 1), &retry, &missing);
    if (retry) return PluginResult::retry();
    if (!v) return ok(def);
    if (v->isUnknown() && noUnknown) return ok(def);
    if (v->isNull() && isOptionalRelation(ctx, a[0].instanceId(), strArg(a, 1))) return ok(def);
    return ok(*v);
  });
  r.add("std::is_instance", [](PluginContext& ctx, Args a) {
    llvm::StringRef cls = strArg(a, 1);
    ir::EntityId e = ctx.findEntity(cls);
    if (!e.valid())
      return PluginResult::error(DiagKind::WrappingRuntime,
                                 "could not find type " + cls.str() + " in namespace " + ctx.callerModule());
    if (a[0].kind != ValueKind::Instance) return okBool(false);
    return okBool(ctx.model().program().isSubtype(ctx.model().entityOf(a[0].instanceId()), e));
  });
  r.add("std::type", [](PluginContext& ctx, Args a) {
    if (a[0].kind != ValueKind::Instance) {
      static const char* names[] = {"NoneType", "bool", "int",      "float",  "str",
                                    "list",     "dict", "Instance", "Unknown"};
      return okStr(ctx, names[size_t(a[0].kind)]);
    }
    return okStr(ctx, entityName(ctx, a[0].instanceId()));
  });
  r.add("std::objid", [](PluginContext& ctx, Args a) {
    if (a[0].kind != ValueKind::Instance)
      return okStr(ctx, std::to_string(0x7e0000000000ull + uint64_t(a[0].i & 0xffff)));
    return okStr(ctx, std::to_string(0x7f0000000000ull + 0x40ull * a[0].inst));
  });
  r.add("std::is_unknown", [](PluginContext&, Args a) { return okBool(a[0].isUnknown()); });
  r.add("std::invert", [](PluginContext& ctx, Args a) {
    warnDeprecated(ctx, "std::invert");
    return okBool(!truthy(a[0]));
  });
  r.add("std::to_number", [](PluginContext& ctx, Args a) {
    warnDeprecated(ctx, "std::to_number");
    const Value& v = a[0];
    switch (v.kind) {
    case ValueKind::Int:
    case ValueKind::BigInt: return ok(v);
    case ValueKind::Bool: return okInt(v.b ? 1 : 0);
    case ValueKind::Float: return okInt(int64_t(v.f));
    case ValueKind::String: {
      llvm::StringRef s = v.str().trim();
      int64_t i;
      if (!s.getAsInteger(10, i)) return okInt(i);
      double d;
      if (!s.getAsDouble(d)) return ok(Value::real(d));
      return externalError("ValueError: could not convert string to float: " + ctx.model().repr(v));
    }
    default: return externalError("TypeError: cannot convert " + ctx.model().repr(v) + " to a number");
    }
  });
  r.add("std::timestamp", [](PluginContext&, Args) { return okInt(int64_t(std::time(nullptr))); });
  r.add("std::familyof", [](PluginContext& ctx, Args a) {
    llvm::StringRef family = strArg(a, 1);
    Value cur = a[0];
    for (int depth = 0; cur.kind == ValueKind::Instance && depth < 1000; ++depth) {
      bool retry = false;
      const Value* name = readAttr(ctx, cur.instanceId(), "name", &retry, nullptr);
      if (retry) return PluginResult::retry();
      if (name && name->kind == ValueKind::String && name->str() == family) return okBool(true);
      const Value* parent = readAttr(ctx, cur.instanceId(), "family", &retry, nullptr);
      if (retry) return PluginResult::retry();
      if (!parent) break;
      cur = *parent;
    }
    return okBool(false);
  });
}

} // namespace inm::runtime::plugins

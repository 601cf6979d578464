// Native std plugins on lists and dicts (std.md §5 "Lists and dicts"): count, len, unique, flatten,
// sequence, at, item, key_sort and the deprecated select, filter, dict_get, contains. Plugins that read
// instance attributes (key_sort, select) ask to be retried while an attribute is not final.
#include "PluginUtil.h"
#include "support/Limits.h"

#include <algorithm>

namespace inm::runtime::plugins {

namespace {

/// Python index normalisation; false when out of range.
bool pyIndex(int64_t idx, size_t size, size_t& out) {
  if (idx < 0) idx += int64_t(size);
  if (idx < 0 || idx >= int64_t(size)) return false;
  out = size_t(idx);
  return true;
}

/// Reads attribute `name` of `v` (an instance) for sorting/selecting.
enum class Read { Ok, Retry, Fail };
Read readFor(PluginContext& ctx, const Value& v, llvm::StringRef name, Value& out, std::string& err) {
  if (v.kind != ValueKind::Instance) {
    err = "AttributeError: '" + ctx.model().repr(v) + "' has no attribute '" + name.str() + "'";
    return Read::Fail;
  }
  bool retry = false, missing = false;
  const Value* a = readAttr(ctx, v.instanceId(), name, &retry, &missing);
  if (retry) return Read::Retry;
  if (missing || !a) {
    err = "AttributeError: " + entityName(ctx, v.instanceId()) + " has no attribute '" + name.str() + "'";
    return Read::Fail;
  }
  out = *a;
  return Read::Ok;
}

} // namespace

void registerListPlugins(PluginRegistry& r) {
  r.add("std::count", [](PluginContext&, Args a) { return okInt(int64_t(a[0].items().size())); });
  r.add("std::len", [](PluginContext&, Args a) {
    for (const Value& v : a[0].items())
      if (v.isUnknown()) return ok(Value::unknown());
    return okInt(int64_t(a[0].items().size()));
  });
  r.add("std::unique", [](PluginContext&, Args a) {
    auto items = a[0].items();
    for (size_t i = 0; i < items.size(); ++i)
      for (size_t j = i + 1; j < items.size(); ++j)
        if (valuesEqual(items[i], items[j])) return okBool(false);
    return okBool(true);
  });
  r.add("std::flatten", [](PluginContext& ctx, Args a) {
    std::vector<Value> out;
    for (const Value& v : a[0].items()) {
      if (v.kind == ValueKind::List)
        out.insert(out.end(), v.items().begin(), v.items().end());
      else
        out.push_back(v);
    }
    return ok(ctx.arena().list(out));
  });
  r.add("std::sequence", [](PluginContext& ctx, Args a) {
    // range(start, i + start - offset): i - offset items (capped by Limits::maxListItems) from start. Ints
    // are exact: a big bound is a limit error, a big start gives big items.
    auto arg = [&](size_t k) {
      return k < a.size() && a[k].isInt() ? a[k] : Value::integer(intArg(a, k, 0));
    };
    Value i = arg(0), start = arg(1), offset = arg(2), count;
    std::string err = intArith(ctx.arena(), IntOp::Sub, i, offset, count);
    if (!err.empty()) return PluginResult::failure(DiagKind::SequenceLimit, err);
    if (compareInts(count, Value::integer(int64_t(std::min<uint64_t>(limits().maxListItems, INT64_MAX)))) > 0)
      return PluginResult::failure(DiagKind::SequenceLengthLimit, limits().maxListItems);
    int64_t n = count.kind == ValueKind::Int && count.i > 0 ? count.i : 0;
    std::vector<Value> out;
    out.reserve(size_t(n));
    for (int64_t k = 0; k < n; ++k) {
      Value item;
      if (start.kind == ValueKind::Int && !__builtin_add_overflow(start.i, k, &item.i))
        item.kind = ValueKind::Int;
      else if (err = intArith(ctx.arena(), IntOp::Add, start, Value::integer(k), item); !err.empty())
        return PluginResult::failure(DiagKind::SequenceLimit, err);
      out.push_back(item);
    }
    return ok(ctx.arena().list(out));
  });
  r.add("std::at", [](PluginContext&, Args a) {
    size_t idx;
    if (!pyIndex(intArg(a, 1), a[0].items().size(), idx))
      return externalError("IndexError: list index out of range");
    return ok(a[0].items()[idx]);
  });
  r.add("std::item", [](PluginContext& ctx, Args a) {
    std::vector<Value> out;
    for (const Value& sub : a[0].items()) {
      size_t idx;
      if (sub.kind == ValueKind::String) { // Python str indexing: one code point, as a string
        llvm::StringRef s = sub.str();
        std::vector<size_t> starts;
        for (size_t i = 0; i < s.size(); ++i)
          if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
        if (!pyIndex(intArg(a, 1), starts.size(), idx))
          return externalError("IndexError: string index out of range");
        size_t end = idx + 1 < starts.size() ? starts[idx + 1] : s.size();
        out.push_back(ctx.arena().str(s.slice(starts[idx], end)));
        continue;
      }
      if (sub.kind != ValueKind::List) {
        const char* type = sub.isInt()                    ? "int"
                           : sub.kind == ValueKind::Float ? "float"
                           : sub.kind == ValueKind::Bool  ? "bool"
                           : sub.kind == ValueKind::Null  ? "NoneType"
                                                          : "object";
        return externalError(std::string("TypeError: '") + type + "' object is not subscriptable");
      }
      if (!pyIndex(intArg(a, 1), sub.items().size(), idx))
        return externalError("IndexError: list index out of range");
      out.push_back(sub.items()[idx]);
    }
    return ok(ctx.arena().list(out));
  });
  r.add("std::key_sort", [](PluginContext& ctx, Args a) {
    std::vector<std::string> keys;
    if (a[1].kind == ValueKind::String)
      keys.push_back(a[1].str().str());
    else
      for (const Value& k : a[1].items())
        if (k.kind == ValueKind::String) keys.push_back(k.str().str());
    if (keys.empty())
      return externalError("TypeError: key_sort expects an attribute name or a list of names");
    std::vector<std::pair<std::vector<Value>, Value>> rows;
    for (const Value& v : a[0].items()) {
      std::vector<Value> row;
      for (const std::string& k : keys) {
        Value x;
        std::string err;
        Read st = readFor(ctx, v, k, x, err);
        if (st == Read::Retry) return PluginResult::retry();
        if (st == Read::Fail) return externalError(err);
        if (x.isUnknown()) return ok(Value::unknown());
        row.push_back(x);
      }
      rows.emplace_back(std::move(row), v);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
      for (size_t i = 0; i < x.first.size(); ++i) {
        if (valueLess(x.first[i], y.first[i])) return true;
        if (valueLess(y.first[i], x.first[i])) return false;
      }
      return false;
    });
    std::vector<Value> out;
    for (auto& row : rows) out.push_back(row.second);
    return ok(ctx.arena().list(out));
  });
  r.add("std::select", [](PluginContext& ctx, Args a) {
    std::vector<Value> out;
    for (const Value& v : a[0].items()) {
      Value x;
      std::string err;
      Read st = readFor(ctx, v, strArg(a, 1), x, err);
      if (st == Read::Retry) return PluginResult::retry();
      if (st == Read::Fail) return externalError(err);
      out.push_back(x);
    }
    warnDeprecated(ctx, "std::select");
    return ok(ctx.arena().list(out));
  });
  r.add("std::filter", [](PluginContext& ctx, Args a) {
    std::vector<Value> out;
    for (const Value& v : a[0].items())
      if (!valuesEqual(v, a[1])) out.push_back(v);
    warnDeprecated(ctx, "std::filter");
    return ok(ctx.arena().list(out));
  });
  r.add("std::dict_get", [](PluginContext& ctx, Args a) {
    warnDeprecated(ctx, "std::dict_get");
    const Value* v = a[0].kind == ValueKind::Dict ? a[0].d->find(strArg(a, 1)) : nullptr;
    if (!v) return externalError("KeyError: '" + strArg(a, 1).str() + "'");
    return ok(*v);
  });
  r.add("std::contains", [](PluginContext& ctx, Args a) {
    warnDeprecated(ctx, "std::contains");
    return okBool(a[0].kind == ValueKind::Dict && a[0].d->find(strArg(a, 1)) != nullptr);
  });
}

} // namespace inm::runtime::plugins

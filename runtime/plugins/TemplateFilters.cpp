// The filters (`{{ x | upper }}`, std plugins used as filters) and calls (`range(n)`, methods such as
// `d.items()`) of the std::template renderer (TemplateRenderer.h), with Jinja2's argument conventions:
// positional after the subject, then keywords. Invariant: a filter or method the subset does not have is an
// error saying "… not supported in templates", never a silently different output.
#include "TemplateRenderer.h"
#include "support/CheckedMath.h"
#include "support/Limits.h"

#include <cmath>
#include <map>

namespace inm::runtime::plugins::tmpl {

Renderer::CallArgs Renderer::args(const Expr& e) {
  CallArgs a;
  size_t nkw = e.kwNames.size(), npos = e.kids.size() - 1 - nkw;
  for (size_t i = 0; i < npos; ++i) a.pos.push_back(eval(*e.kids[1 + i]));
  for (size_t i = 0; i < nkw; ++i) a.kw[e.kwNames[i]] = eval(*e.kids[1 + npos + i]);
  return a;
}

std::string Renderer::strOf(const CallArgs& a, size_t i, const char* name, const std::string& def) {
  const TV* t = a.get(i, name);
  if (!t) return def;
  const Value& v = defined(*t);
  return v.kind == ValueKind::String ? v.str().str() : str(v);
}

bool Renderer::boolOf(const CallArgs& a, size_t i, const char* name, bool def) {
  const TV* t = a.get(i, name);
  return t ? truth(*t) : def;
}

int64_t Renderer::intOf(const CallArgs& a, size_t i, const char* name, int64_t def) {
  const TV* t = a.get(i, name);
  if (!t) return def;
  const Value& v = defined(*t);
  int64_t n = def;
  if (v.kind == ValueKind::Float && !floatToInt(v.f, n))
    fail("float " + model().repr(v) + " does not fit in an integer");
  return isInt(v) ? ival(v) : n;
}

TV Renderer::filter(const Expr& e) {
  TV subj = eval(*e.kids[0]);
  CallArgs a = args(e);
  const std::string& f = e.s;
  if (f == "default" || f == "d") {
    bool useDefault = subj.undef || (boolOf(a, 1, "boolean", false) && !truth(subj));
    if (!useDefault) return subj;
    const TV* d = a.get(0, "default_value");
    return d ? *d : val(arena().str(""));
  }
  if (llvm::StringRef(f).startswith("std.")) return pluginFilter(e, subj, a);
  const Value& v = defined(subj);
  if (f == "length" || f == "count") {
    if (v.kind == ValueKind::String) return val(Value::integer(int64_t(iterate(v).size())));
    if (v.kind == ValueKind::Dict) return val(Value::integer(v.d->size));
    return val(Value::integer(int64_t(seqOf(subj).size())));
  }
  if (f == "join") {
    std::string sep = strOf(a, 0, "d", ""), out, attr = strOf(a, 1, "attribute", "");
    bool first = true;
    for (const Value& x : seqOf(subj)) {
      if (!first) out += sep;
      first = false;
      out += attr.empty() ? str(x) : str(defined(getAttr(val(x), attr)));
    }
    return val(arena().str(out));
  }
  if (f == "upper" || f == "lower" || f == "capitalize" || f == "title" || f == "trim" || f == "string") {
    std::string s = v.kind == ValueKind::String ? v.str().str() : str(v);
    if (f == "upper")
      for (char& c : s) c = char(toupper(static_cast<unsigned char>(c)));
    if (f == "lower")
      for (char& c : s) c = char(tolower(static_cast<unsigned char>(c)));
    if (f == "capitalize") {
      for (char& c : s) c = char(tolower(static_cast<unsigned char>(c)));
      if (!s.empty()) s[0] = char(toupper(static_cast<unsigned char>(s[0])));
    }
    if (f == "title") {
      bool start = true;
      for (char& c : s) {
        c = char(start ? toupper(static_cast<unsigned char>(c)) : tolower(static_cast<unsigned char>(c)));
        start = !isalnum(static_cast<unsigned char>(c));
      }
    }
    if (f == "trim") s = llvm::StringRef(s).trim().str();
    return val(arena().str(s));
  }
  if (f == "replace") {
    std::string s = v.kind == ValueKind::String ? v.str().str() : str(v);
    return val(arena().str(pyReplace(s, strOf(a, 0, "old", ""), strOf(a, 1, "new", ""))));
  }
  if (f == "sort") {
    std::vector<Value> items = seqOf(subj);
    bool reverse = boolOf(a, 0, "reverse", false), cs = boolOf(a, 1, "case_sensitive", false);
    std::string attr = strOf(a, 2, "attribute", "");
    std::vector<std::pair<Value, Value>> keyed;
    for (const Value& x : items) {
      Value k = attr.empty() ? x : defined(getAttr(val(x), attr));
      if (!cs && k.kind == ValueKind::String) k = arena().str(k.str().lower());
      keyed.emplace_back(k, x);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
      return reverse ? valueLess(y.first, x.first) : valueLess(x.first, y.first);
    });
    for (size_t i = 0; i < keyed.size(); ++i) items[i] = keyed[i].second;
    return val(arena().list(items));
  }
  if (f == "first" || f == "last") {
    std::vector<Value> items = seqOf(subj);
    if (items.empty()) return TV{Value::null(), true, "No first item, sequence was empty."};
    return val(f == "first" ? items.front() : items.back());
  }
  if (f == "reverse" || f == "list" || f == "unique") {
    std::vector<Value> items = seqOf(subj);
    if (f == "reverse") {
      if (v.kind == ValueKind::String) {
        std::string s;
        for (auto it = items.rbegin(); it != items.rend(); ++it) s += it->str().str();
        return val(arena().str(s));
      }
      std::reverse(items.begin(), items.end());
    }
    if (f == "unique") {
      std::vector<Value> u;
      for (const Value& x : items) {
        bool seen = false;
        for (const Value& y : u) seen = seen || valuesEqual(x, y);
        if (!seen) u.push_back(x);
      }
      items = u;
    }
    return val(arena().list(items));
  }
  if (f == "int") {
    int64_t def = intOf(a, 0, "default", 0);
    if (isInt(v)) return val(v.kind == ValueKind::Bool ? Value::integer(v.b) : v);
    Value n;
    if (v.kind == ValueKind::Float && !floatToIntValue(arena(), v.f, n))
      fail("float " + model().repr(v) + " does not fit in an integer");
    if (v.kind == ValueKind::Float) return val(n);
    if (v.kind == ValueKind::String) {
      llvm::StringRef s = v.str().trim();
      int64_t i;
      double d;
      std::string err;
      if (!s.getAsInteger(10, i)) return val(Value::integer(i));
      if (parseInt(arena(), s, 10, n, err)) return val(n);
      if (!err.empty()) fail(err);
      if (!s.getAsDouble(d)) return val(Value::integer(int64_t(d)));
    }
    return val(Value::integer(def));
  }
  if (f == "float") {
    if (v.isNumber()) return val(Value::real(num(v)));
    double d;
    if (v.kind == ValueKind::String && !v.str().trim().getAsDouble(d)) return val(Value::real(d));
    return val(Value::real(0.0));
  }
  if (f == "abs") {
    if (!v.isNumber()) fail("bad operand type for abs(): " + model().repr(v));
    int64_t n = isInt(v) ? ival(v) : 0;
    if (isInt(v) && intIsNegative(v) && (v.kind == ValueKind::BigInt || !checkedNeg(n, n)))
      return val(exactInt(IntOp::Sub, Value::integer(0), v));
    return val(isInt(v) ? Value::integer(n) : Value::real(std::fabs(v.f)));
  }
  if (f == "indent") return val(arena().str(indent(v.kind == ValueKind::String ? v.str().str() : str(v), a)));
  if (f == "map" || f == "selectattr" || f == "rejectattr") {
    std::string attr = f == "map" ? strOf(a, 99, "attribute", "") : strOf(a, 0, "attribute", "");
    if (attr.empty()) fail("the filter '" + f + "' is only supported with an attribute name in templates");
    std::vector<Value> outItems;
    for (const Value& x : seqOf(subj)) {
      TV got = getAttr(val(x), attr);
      if (f == "map")
        outItems.push_back(defined(got));
      else if ((f == "selectattr") == (!got.undef && truthy(got.v)))
        outItems.push_back(x);
    }
    return val(arena().list(outItems));
  }
  fail("the filter '" + f + "' is not supported in templates");
}

std::string Renderer::indent(const std::string& s0, const CallArgs& a) {
  std::string ind(size_t(std::max<int64_t>(0, intOf(a, 0, "width", 4))), ' ');
  if (const TV* w = a.get(0, "width"); w && !w->undef && w->v.kind == ValueKind::String)
    ind = w->v.str().str();
  bool first = boolOf(a, 1, "first", false), blank = boolOf(a, 2, "blank", false);
  std::string s = s0 + "\n";
  std::vector<std::string> lines;
  llvm::StringRef rest(s);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    lines.push_back(line.str());
    rest = tail;
  }
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : ind + lines[i]);
  }
  return first ? ind + rv : rv;
}

TV Renderer::pluginFilter(const Expr& e, const TV& subj, const CallArgs& a) {
  std::string name = "std::" + e.s.substr(4);
  for (size_t p; (p = name.find('.')) != std::string::npos;) name.replace(p, 1, "::");
  const PluginFn* fn = plugins_ ? plugins_->find(name) : nullptr;
  if (!fn) fail("the filter '" + e.s + "' is not supported in templates (no plugin " + name + ")");
  if (!a.kw.empty()) fail("keyword arguments to plugin filters are not supported in templates");
  std::vector<Value> args{defined(subj)};
  for (const TV& t : a.pos) args.push_back(defined(t));
  for (const Value& x : args)
    if (x.isUnknown() && name != "std::is_unknown") unknown();
  while (args.size() < 8) args.push_back(Value::null());
  PluginResult r = (*fn)(ctx_, args);
  if (r.kind == PluginResult::Retry) throw Abort{RenderResult::Retry, ""};
  if (r.kind == PluginResult::Error) fail(r.message);
  return val(r.value);
}

TV Renderer::call(const Expr& e) {
  const Expr& callee = *e.kids[0];
  CallArgs a = args(e);
  if (callee.kind == EK::Name && callee.s == "range") {
    int64_t lo = 0, hi, step = 1;
    if (a.pos.size() == 1)
      hi = intOf(a, 0, "", 0);
    else {
      lo = intOf(a, 0, "", 0);
      hi = intOf(a, 1, "", 0);
      step = intOf(a, 2, "", 1);
    }
    if (step == 0) fail("range() arg 3 must not be zero");
    // The item count, computed without overflow, is capped by Limits::maxListItems.
    __int128 span = step > 0 ? __int128(hi) - lo : __int128(lo) - hi;
    __int128 count = span <= 0 ? 0
                               : (span + (step > 0 ? __int128(step) : -__int128(step)) - 1) /
                                     (step > 0 ? __int128(step) : -__int128(step));
    if (count > __int128(limits().maxListItems))
      fail("range() of " + std::to_string(int64_t(count > INT64_MAX ? INT64_MAX : count)) +
           " items exceeds the limit of " + std::to_string(limits().maxListItems) + " (--max-list-items)");
    std::vector<Value> items;
    items.reserve(size_t(count));
    for (__int128 k = 0, i = lo; k < count; ++k, i += step) items.push_back(Value::integer(int64_t(i)));
    return val(arena().list(items));
  }
  if (callee.kind != EK::Attr) fail("calling '" + callee.s + "' is not supported in templates");
  TV recvT = eval(*callee.kids[0]);
  const Value& recv = defined(recvT);
  const std::string& m = callee.s;
  if (recv.kind == ValueKind::Dict) {
    std::vector<Value> items;
    for (uint32_t i = 0; i < recv.d->size; ++i) {
      Value k = Value::string(recv.d->entries[i].key), v = recv.d->entries[i].value;
      if (m == "items")
        items.push_back(arena().list({k, v}));
      else if (m == "keys")
        items.push_back(k);
      else if (m == "values")
        items.push_back(v);
    }
    if (m == "items" || m == "keys" || m == "values") return val(arena().list(items));
    if (m == "get") {
      std::string key = strOf(a, 0, "key", "");
      if (const Value* v = recv.d->find(key)) return val(*v);
      const TV* d = a.get(1, "default");
      return d ? *d : val(Value::null());
    }
  }
  if (recv.kind == ValueKind::String) {
    llvm::StringRef s = recv.str();
    if (m == "upper") return val(arena().str(s.upper()));
    if (m == "lower") return val(arena().str(s.lower()));
    if (m == "strip") return val(arena().str(s.trim()));
    if (m == "lstrip") return val(arena().str(s.ltrim()));
    if (m == "rstrip") return val(arena().str(s.rtrim()));
    if (m == "startswith") return val(Value::boolean(s.startswith(strOf(a, 0, "prefix", ""))));
    if (m == "endswith") return val(Value::boolean(s.endswith(strOf(a, 0, "suffix", ""))));
    if (m == "replace") return val(arena().str(pyReplace(s, strOf(a, 0, "old", ""), strOf(a, 1, "new", ""))));
    if (m == "split") {
      std::vector<Value> parts;
      if (a.pos.empty()) {
        llvm::SmallVector<llvm::StringRef, 8> ws;
        s.split(ws, ' ', -1, false);
        for (llvm::StringRef w : ws)
          if (!w.trim().empty()) parts.push_back(arena().str(w.trim()));
      } else {
        std::string sep = strOf(a, 0, "sep", " ");
        llvm::SmallVector<llvm::StringRef, 8> ps;
        s.split(ps, sep, -1, true);
        for (llvm::StringRef p : ps) parts.push_back(arena().str(p));
      }
      return val(arena().list(parts));
    }
    if (m == "join") {
      std::string out;
      bool first = true;
      for (const TV& t : a.pos)
        for (const Value& x : seqOf(t)) {
          if (!first) out += s.str();
          first = false;
          out += str(x);
        }
      return val(arena().str(out));
    }
  }
  fail("calling method '" + m + "' of " + model().repr(recv) + " is not supported in templates");
}

} // namespace inm::runtime::plugins::tmpl

// Renderer of the std::template Jinja subset (see Template.h) over runtime Values, and the std::template
// plugin itself (template lookup, per-file parse cache, name resolution from kwargs or the call site).
// Semantics follow Jinja2 with StrictUndefined: an undefined value may only be tested (`is defined`) or
// replaced (`default`); any other use is an error naming it. Reading an unknown aborts with Unknown; an
// attribute that is not final yet aborts with Retry (the evaluator calls the plugin again later).
#include "PluginUtil.h"
#include "Template.h"
#include "support/CheckedMath.h"
#include "support/Limits.h"

#include <llvm/Support/Path.h>

#include <cmath>
#include <map>
#include <mutex>
#include <unordered_map>

namespace inm::runtime::plugins::tmpl {

namespace {

struct Abort {
  RenderResult::Kind kind;
  std::string msg;
};

/// A template value: a runtime value or Jinja's "undefined" (with a description for the error).
struct TV {
  Value v;
  bool undef = false;
  std::string what; // "'x' is undefined" message for undefined values
};

class Renderer {
 public:
  Renderer(PluginContext& ctx, const Resolver& resolve, const PluginRegistry* plugins)
      : ctx_(ctx), resolve_(resolve), plugins_(plugins) {
    scopes_.emplace_back();
  }

  void run(const std::vector<NodeP>& nodes) {
    for (const NodeP& n : nodes) exec(*n);
  }
  std::string out;

 private:
  [[noreturn]] void fail(const std::string& msg) { throw Abort{RenderResult::Error, msg}; }
  [[noreturn]] void unknown() { throw Abort{RenderResult::Unknown, ""}; }
  /// A string result within Limits::maxStringBytes.
  std::string bounded(std::string s) {
    if (s.size() > limits().maxStringBytes)
      fail("string of " + std::to_string(s.size()) + " bytes exceeds the limit of " +
           std::to_string(limits().maxStringBytes) + " (--max-string-bytes)");
    return s;
  }
  /// Counts one step of the render (node or loop iteration): nested loops are bounded in total, and so is the
  /// output, not only each loop on its own.
  void step() {
    if (++steps_ > limits().maxTemplateSteps)
      fail("template render exceeds " + std::to_string(limits().maxTemplateSteps) +
           " steps (--max-template-steps)");
    if (out.size() > limits().maxStringBytes)
      fail("template output exceeds the string size limit of " + std::to_string(limits().maxStringBytes) +
           " bytes (--max-string-bytes)");
  }
  uint64_t steps_ = 0;

  ValueArena& arena() { return ctx_.arena(); }
  Model& model() { return ctx_.model(); }

  const Value& defined(const TV& t) {
    if (t.undef) fail(t.what);
    return t.v;
  }

  std::string str(const Value& v) {
    if (containsUnknown(v)) unknown();
    return model().display(v, true);
  }

  void exec(const Node& n) {
    step();
    switch (n.kind) {
    case NK::Text: out += n.text; return;
    case NK::Output: out += str(defined(eval(*n.expr))); return;
    case NK::Set: {
      Value v = defined(eval(*n.expr));
      assign(n.targets, v);
      return;
    }
    case NK::If:
      for (const auto& [cond, body] : n.branches)
        if (!cond || truth(eval(*cond))) {
          for (const NodeP& c : body) exec(*c);
          return;
        }
      return;
    case NK::For: {
      Value seq = defined(eval(*n.expr));
      std::vector<Value> items = iterate(seq);
      if (items.empty()) {
        for (const NodeP& c : n.elseBody) exec(*c);
        return;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        scopes_.emplace_back();
        int64_t len = int64_t(items.size());
        scopes_.back()["loop"] = arena().dict({{"index", Value::integer(int64_t(i) + 1)},
                                               {"index0", Value::integer(int64_t(i))},
                                               {"revindex", Value::integer(len - int64_t(i))},
                                               {"revindex0", Value::integer(len - int64_t(i) - 1)},
                                               {"first", Value::boolean(i == 0)},
                                               {"last", Value::boolean(i + 1 == items.size())},
                                               {"length", Value::integer(len)}});
        assign(n.targets, items[i]);
        for (const NodeP& c : n.body) exec(*c);
        scopes_.pop_back();
      }
      return;
    }
    }
  }

  void assign(const std::vector<std::string>& targets, const Value& v) {
    if (targets.size() == 1) {
      scopes_.back()[targets[0]] = v;
      return;
    }
    auto items = v.items();
    if (v.kind != ValueKind::List || items.size() != targets.size())
      fail("cannot unpack " + model().repr(v) + " into " + std::to_string(targets.size()) + " names");
    for (size_t i = 0; i < targets.size(); ++i) scopes_.back()[targets[i]] = items[i];
  }

  std::vector<Value> iterate(const Value& v) {
    if (v.isUnknown()) unknown();
    if (v.kind == ValueKind::List) return std::vector<Value>(v.items().begin(), v.items().end());
    if (v.kind == ValueKind::Dict) {
      std::vector<Value> keys;
      for (uint32_t i = 0; i < v.d->size; ++i) keys.push_back(Value::string(v.d->entries[i].key));
      return keys;
    }
    if (v.kind == ValueKind::String) {
      std::vector<Value> chars;
      llvm::StringRef s = v.str();
      for (size_t i = 0; i < s.size();) {
        size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        chars.push_back(arena().str(s.slice(i, j)));
        i = j;
      }
      return chars;
    }
    fail("'" + model().repr(v) + "' is not iterable");
  }

  bool truth(const TV& t) {
    const Value& v = defined(t);
    if (v.isUnknown()) unknown();
    return truthy(v);
  }

  TV undefinedName(const std::string& name) { return TV{Value::null(), true, "'" + name + "' is undefined"}; }
  TV val(Value v) {
    if (v.isUnknown()) unknown();
    return TV{v, false, ""};
  }

  TV lookupName(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return val(f->second);
    }
    Value v;
    switch (resolve_(name, v)) {
    case Lookup::Found: return val(v);
    case Lookup::Missing: return undefinedName(name);
    case Lookup::Retry: throw Abort{RenderResult::Retry, ""};
    }
    return undefinedName(name);
  }

  TV getAttr(const TV& base, const std::string& name) {
    const Value& b = defined(base);
    if (b.kind == ValueKind::Instance) {
      bool retry = false, missing = false;
      const Value* v = readAttr(ctx_, b.instanceId(), name, &retry, &missing);
      if (retry) throw Abort{RenderResult::Retry, ""};
      std::string desc = "'" + entityName(ctx_, b.instanceId()) + " object' has no attribute '" + name + "'";
      if (!v) return TV{Value::null(), true, desc};
      if (v->isNull() && isOptionalRelation(ctx_, b.instanceId(), name)) return TV{Value::null(), true, desc};
      return val(*v);
    }
    if (b.kind == ValueKind::Dict) {
      if (const Value* v = b.d->find(name)) return val(*v);
    }
    return TV{Value::null(), true, "'" + model().repr(b) + "' has no attribute '" + name + "'"};
  }

  TV getItem(const TV& base, const Value& key) {
    const Value& b = defined(base);
    if (key.isUnknown()) unknown();
    if (b.kind == ValueKind::List && (key.kind == ValueKind::Int || key.kind == ValueKind::Bool)) {
      int64_t i = key.kind == ValueKind::Bool ? key.b : key.i, n = int64_t(b.items().size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return val(b.items()[size_t(i)]);
      return TV{Value::null(), true, "list index " + model().repr(key) + " out of range"};
    }
    if (b.kind == ValueKind::Dict && key.kind == ValueKind::String) {
      if (const Value* v = b.d->find(key.str())) return val(*v);
      return TV{Value::null(), true, "'" + model().repr(b) + "' has no key " + model().repr(key)};
    }
    if (b.kind == ValueKind::String && key.kind == ValueKind::Int) {
      auto chars = iterate(b);
      int64_t i = key.i < 0 ? key.i + int64_t(chars.size()) : key.i;
      if (i >= 0 && i < int64_t(chars.size())) return val(chars[size_t(i)]);
    }
    if (b.kind == ValueKind::Instance && key.kind == ValueKind::String) return getAttr(base, key.str().str());
    return TV{Value::null(), true, "'" + model().repr(b) + "' has no item " + model().repr(key)};
  }

  double num(const Value& v) {
    double d = 0;
    if (v.kind == ValueKind::Float) return v.f;
    if (!intToDouble(v, d)) fail("int too large to convert to float: " + model().repr(v));
    return d;
  }
  static bool isInt(const Value& v) { return v.isInt() || v.kind == ValueKind::Bool; }
  /// ints saturate (a big int is beyond every count and index)
  static int64_t ival(const Value& v) { return intSaturated(v); }
  /// a op b exactly (ints are Python ints); a result beyond --max-int-digits is an error
  Value exactInt(IntOp op, const Value& a, const Value& b) {
    Value out;
    std::string err = intArith(arena(), op, a, b, out);
    if (!err.empty()) fail(err);
    return out;
  }

  Value arith(const std::string& op, const Value& a, const Value& b) {
    if (a.isUnknown() || b.isUnknown()) unknown();
    if (op == "~") return arena().str(bounded(str(a) + str(b)));
    if (op == "+") {
      if (a.kind == ValueKind::String && b.kind == ValueKind::String)
        return arena().str(bounded((a.str() + b.str()).str()));
      if (a.kind == ValueKind::List && b.kind == ValueKind::List) {
        std::vector<Value> all(a.items().begin(), a.items().end());
        all.insert(all.end(), b.items().begin(), b.items().end());
        return arena().list(all);
      }
    }
    if (op == "*" && a.kind == ValueKind::String && isInt(b)) {
      std::string s;
      if (ival(b) > 0 && a.str().size() * uint64_t(ival(b)) / uint64_t(ival(b)) == a.str().size() &&
          a.str().size() * uint64_t(ival(b)) > limits().maxStringBytes)
        fail("string repetition would exceed the string size limit of " +
             std::to_string(limits().maxStringBytes) + " bytes (--max-string-bytes)");
      for (int64_t i = 0; i < ival(b); ++i) s += a.str().str();
      return arena().str(bounded(std::move(s)));
    }
    if (!a.isNumber() || !b.isNumber())
      fail("unsupported operand types for " + op + ": " + model().repr(a) + " and " + model().repr(b));
    bool ints = isInt(a) && isInt(b);
    bool big = a.kind == ValueKind::BigInt || b.kind == ValueKind::BigInt;
    int64_t r = 0;
    auto real = [&](double d) -> Value {
      if (!std::isfinite(d) && std::isfinite(num(a)) && std::isfinite(num(b)))
        fail("float overflow: " + model().repr(a) + " " + op + " " + model().repr(b) + " is out of range");
      return Value::real(d);
    };
    if (op == "+") {
      if (!ints) return real(num(a) + num(b));
      return big || __builtin_add_overflow(ival(a), ival(b), &r) ? exactInt(IntOp::Add, a, b)
                                                                 : Value::integer(r);
    }
    if (op == "-") {
      if (!ints) return real(num(a) - num(b));
      return big || __builtin_sub_overflow(ival(a), ival(b), &r) ? exactInt(IntOp::Sub, a, b)
                                                                 : Value::integer(r);
    }
    if (op == "*") {
      if (!ints) return real(num(a) * num(b));
      return big || __builtin_mul_overflow(ival(a), ival(b), &r) ? exactInt(IntOp::Mul, a, b)
                                                                 : Value::integer(r);
    }
    if (op == "**") {
      if (ints && !intIsNegative(b))
        return !big && checkedPow(ival(a), ival(b), r) ? Value::integer(r) : exactInt(IntOp::Pow, a, b);
      if (num(a) == 0 && num(b) < 0) fail("0.0 cannot be raised to a negative power");
      if (num(a) < 0 && num(b) != std::floor(num(b))) fail("a negative number raised to a fractional power");
      return real(std::pow(num(a), num(b)));
    }
    if (isInt(b) ? compareInts(b, Value::integer(0)) == 0 : num(b) == 0) fail("division by zero");
    if (op == "/") return real(num(a) / num(b));
    if (op == "//") {
      if (ints)
        return !big && floorDiv(ival(a), ival(b), r) ? Value::integer(r) : exactInt(IntOp::FloorDiv, a, b);
      return real(std::floor(num(a) / num(b)));
    }
    if (op == "%") {
      if (ints) return big ? exactInt(IntOp::Mod, a, b) : Value::integer(floorMod(ival(a), ival(b)));
      double m = std::fmod(num(a), num(b));
      if (m != 0 && ((m < 0) != (num(b) < 0))) m += num(b);
      return Value::real(m);
    }
    fail("unsupported operator " + op);
  }

  bool compare(const std::string& op, const Value& a, const Value& b) {
    if (a.isUnknown() || b.isUnknown()) unknown();
    if (op == "==") return valuesEqual(a, b);
    if (op == "!=") return !valuesEqual(a, b);
    if (op == "in") {
      if (b.kind == ValueKind::String && a.kind == ValueKind::String) return b.str().contains(a.str());
      if (b.kind == ValueKind::List) {
        for (const Value& x : b.items())
          if (valuesEqual(a, x)) return true;
        return false;
      }
      if (b.kind == ValueKind::Dict) return a.kind == ValueKind::String && b.d->find(a.str());
      fail("argument of type " + model().repr(b) + " is not iterable");
    }
    bool okKinds = (a.isNumber() && b.isNumber()) ||
                   (a.kind == ValueKind::String && b.kind == ValueKind::String) ||
                   (a.kind == ValueKind::List && b.kind == ValueKind::List);
    if (!okKinds) fail("'" + op + "' not supported between " + model().repr(a) + " and " + model().repr(b));
    if (op == "<") return valueLess(a, b);
    if (op == ">") return valueLess(b, a);
    if (op == "<=") return !valueLess(b, a);
    return !valueLess(a, b); // >=
  }

 public:
  TV eval(const Expr& e) {
    switch (e.kind) {
    case EK::Lit:
      switch (e.lit) {
      case LitKind::None: return val(Value::null());
      case LitKind::Bool: return val(Value::boolean(e.i != 0));
      case LitKind::Int: return val(Value::integer(e.i));
      case LitKind::Float: return val(Value::real(e.f));
      case LitKind::Str: return val(arena().str(e.s));
      }
      return val(Value::null());
    case EK::Name: return lookupName(e.s);
    case EK::Attr: return getAttr(eval(*e.kids[0]), e.s);
    case EK::Index: {
      TV base = eval(*e.kids[0]);
      return getItem(base, defined(eval(*e.kids[1])));
    }
    case EK::List: {
      std::vector<Value> items;
      for (const ExprP& k : e.kids) items.push_back(defined(eval(*k)));
      return val(arena().list(items));
    }
    case EK::Dict: {
      std::vector<std::pair<std::string, Value>> entries;
      for (size_t i = 0; i + 1 < e.kids.size(); i += 2) {
        Value k = defined(eval(*e.kids[i]));
        if (k.kind != ValueKind::String) fail("dict keys in templates must be strings");
        Value v = defined(eval(*e.kids[i + 1]));
        bool replaced = false;
        for (auto& en : entries)
          if (en.first == k.str()) {
            en.second = v;
            replaced = true;
          }
        if (!replaced) entries.emplace_back(k.str().str(), v);
      }
      std::vector<std::pair<llvm::StringRef, Value>> refs;
      for (auto& en : entries) refs.emplace_back(en.first, en.second);
      return val(arena().dict(refs));
    }
    case EK::Not: return val(Value::boolean(!truth(eval(*e.kids[0]))));
    case EK::Neg:
    case EK::Pos: {
      Value v = defined(eval(*e.kids[0]));
      if (!v.isNumber())
        fail("bad operand type for unary " + std::string(e.kind == EK::Neg ? "-" : "+") + ": " +
             model().repr(v));
      if (e.kind == EK::Pos) return val(v);
      int64_t n = 0;
      if (isInt(v) && (v.kind == ValueKind::BigInt || !checkedNeg(ival(v), n)))
        return val(exactInt(IntOp::Sub, Value::integer(0), v));
      return val(isInt(v) ? Value::integer(n) : Value::real(-v.f));
    }
    case EK::Bin: {
      Value a = defined(eval(*e.kids[0]));
      Value b = defined(eval(*e.kids[1]));
      return val(arith(e.s, a, b));
    }
    case EK::Cmp: {
      Value a = defined(eval(*e.kids[0]));
      Value b = defined(eval(*e.kids[1]));
      bool r = compare(e.s, a, b);
      return val(Value::boolean(e.negated ? !r : r));
    }
    case EK::And: {
      TV a = eval(*e.kids[0]);
      if (!truth(a)) return a;
      return eval(*e.kids[1]);
    }
    case EK::Or: {
      TV a = eval(*e.kids[0]);
      if (truth(a)) return a;
      return eval(*e.kids[1]);
    }
    case EK::Cond:
      if (truth(eval(*e.kids[0]))) return eval(*e.kids[1]);
      if (e.kids.size() > 2) return eval(*e.kids[2]);
      return TV{Value::null(), true, "the conditional expression had no else branch"};
    case EK::Test: {
      TV t = eval(*e.kids[0]);
      bool r;
      if (e.s == "defined")
        r = !t.undef;
      else if (e.s == "undefined")
        r = t.undef;
      else
        r = defined(t).isNull();
      return val(Value::boolean(e.negated ? !r : r));
    }
    case EK::Filter: return filter(e);
    case EK::Call: return call(e);
    }
    fail("unsupported expression");
  }

 private:
  /// Evaluated filter/call arguments: positional after the subject, and keywords.
  struct CallArgs {
    std::vector<TV> pos;
    std::map<std::string, TV> kw;
    const TV* get(size_t i, const char* name) const {
      auto it = kw.find(name);
      if (it != kw.end()) return &it->second;
      return i < pos.size() ? &pos[i] : nullptr;
    }
  };
  CallArgs args(const Expr& e) {
    CallArgs a;
    size_t nkw = e.kwNames.size(), npos = e.kids.size() - 1 - nkw;
    for (size_t i = 0; i < npos; ++i) a.pos.push_back(eval(*e.kids[1 + i]));
    for (size_t i = 0; i < nkw; ++i) a.kw[e.kwNames[i]] = eval(*e.kids[1 + npos + i]);
    return a;
  }
  std::string strOf(const CallArgs& a, size_t i, const char* name, const std::string& def) {
    const TV* t = a.get(i, name);
    if (!t) return def;
    const Value& v = defined(*t);
    return v.kind == ValueKind::String ? v.str().str() : str(v);
  }
  bool boolOf(const CallArgs& a, size_t i, const char* name, bool def) {
    const TV* t = a.get(i, name);
    return t ? truth(*t) : def;
  }
  int64_t intOf(const CallArgs& a, size_t i, const char* name, int64_t def) {
    const TV* t = a.get(i, name);
    if (!t) return def;
    const Value& v = defined(*t);
    int64_t n = def;
    if (v.kind == ValueKind::Float && !floatToInt(v.f, n))
      fail("float " + model().repr(v) + " does not fit in an integer");
    return isInt(v) ? ival(v) : n;
  }

  std::vector<Value> seqOf(const TV& t) { return iterate(defined(t)); }

  TV filter(const Expr& e) {
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
    if (f == "indent")
      return val(arena().str(indent(v.kind == ValueKind::String ? v.str().str() : str(v), a)));
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

  std::string indent(const std::string& s0, const CallArgs& a) {
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

  TV pluginFilter(const Expr& e, const TV& subj, const CallArgs& a) {
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

  TV call(const Expr& e) {
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
      if (m == "replace")
        return val(arena().str(pyReplace(s, strOf(a, 0, "old", ""), strOf(a, 1, "new", ""))));
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

  PluginContext& ctx_;
  const Resolver& resolve_;
  const PluginRegistry* plugins_;
  std::vector<std::map<std::string, Value>> scopes_;
};

} // namespace

RenderResult render(const Template& t, PluginContext& ctx, const Resolver& resolve,
                    const PluginRegistry* plugins) {
  Renderer r(ctx, resolve, plugins);
  try {
    r.run(t.nodes);
  } catch (const Abort& a) {
    return RenderResult{a.kind, a.msg};
  }
  return RenderResult{RenderResult::Ok, std::move(r.out)};
}

} // namespace inm::runtime::plugins::tmpl

namespace inm::runtime::plugins {

namespace {

struct CacheEntry {
  std::shared_ptr<tmpl::Template> tree;
  std::string error;
};

/// Parsed templates by file path (templates do not change during a compile).
const CacheEntry& cachedTemplate(const std::string& file, const std::string& source) {
  static std::mutex mu;
  static std::unordered_map<std::string, CacheEntry> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(file);
  if (it != cache.end()) return it->second;
  CacheEntry e;
  e.tree = tmpl::parseTemplate(source, e.error);
  return cache.emplace(file, std::move(e)).first->second;
}

} // namespace

PluginResult renderTemplatePlugin(PluginContext& ctx, Args args) {
  llvm::StringRef path = strArg(args, 0);
  std::string file;
  auto [mod, rest] = path.split('/');
  std::string modDir = rest.empty() ? std::string() : ctx.moduleDir(mod);
  // Confined to the module's (or the project's) templates/ folder, as std::file is to files/.
  llvm::SmallString<256> base(modDir.empty() ? ctx.projectDir() : modDir);
  llvm::sys::path::append(base, "templates");
  std::string err, source;
  if (!confinedPath(base, modDir.empty() ? path : rest, file, err)) {
    if (!err.empty()) return externalError("TemplateNotFound: " + path.str() + ": " + err);
    return externalError("TemplateNotFound: " + path.str() + " (looked for " + file + ")");
  }
  if (!readConfinedFile(file, source, err))
    return externalError("TemplateNotFound: " + path.str() + " (looked for " + file + "): " + err);
  const CacheEntry& entry = cachedTemplate(file, source);
  if (!entry.tree) return externalError("TemplateSyntaxError in " + path.str() + ", " + entry.error);

  Value kwargs = args.size() > 1 ? args[1] : Value::null();
  bool useKwargs = kwargs.kind == ValueKind::Dict && kwargs.d->size > 0;
  tmpl::Resolver resolve = [&](llvm::StringRef name, Value& out) {
    if (useKwargs) {
      const Value* v = kwargs.d->find(name);
      if (!v) return tmpl::Lookup::Missing;
      out = *v;
      return tmpl::Lookup::Found;
    }
    if (const Value* v = ctx.lookupVariable(name)) {
      out = *v;
      return tmpl::Lookup::Found;
    }
    return ctx.hasVariable(name) ? tmpl::Lookup::Retry : tmpl::Lookup::Missing;
  };
  tmpl::RenderResult r = tmpl::render(*entry.tree, ctx, resolve, &PluginRegistry::builtins());
  switch (r.kind) {
  case tmpl::RenderResult::Ok: return okStr(ctx, r.text);
  case tmpl::RenderResult::Retry: return PluginResult::retry();
  case tmpl::RenderResult::Unknown: return ok(Value::unknown());
  case tmpl::RenderResult::Error:
    return PluginResult::error(DiagKind::WrappingRuntime,
                               "Failed to render template " + path.str() + ": " + r.text);
  }
  return externalError("unreachable");
}

} // namespace inm::runtime::plugins

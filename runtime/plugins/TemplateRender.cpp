// Renderer of the std::template Jinja subset (see Template.h) over runtime Values, and the std::template
// plugin itself (template lookup, per-file parse cache, name resolution from kwargs or the call site).
// Semantics follow Jinja2 with StrictUndefined: an undefined value may only be tested (`is defined`) or
// replaced (`default`); any other use is an error naming it. Reading an unknown aborts with Unknown; an
// attribute that is not final yet aborts with Retry (the evaluator calls the plugin again later).
// The Renderer class is declared in TemplateRenderer.h; its filters and method calls are in
// TemplateFilters.cpp.
#include "TemplateRenderer.h"
#include "support/CheckedMath.h"
#include "support/Limits.h"

#include <llvm/Support/Path.h>

#include <cmath>
#include <map>
#include <mutex>
#include <unordered_map>

namespace inm::runtime::plugins::tmpl {

void Renderer::run(const std::vector<NodeP>& nodes) {
  for (const NodeP& n : nodes) exec(*n);
}

std::string Renderer::bounded(std::string s) {
  if (s.size() > limits().maxStringBytes)
    fail("string of " + std::to_string(s.size()) + " bytes exceeds the limit of " +
         std::to_string(limits().maxStringBytes) + " (--max-string-bytes)");
  return s;
}

void Renderer::step() {
  if (++steps_ > limits().maxTemplateSteps)
    fail("template render exceeds " + std::to_string(limits().maxTemplateSteps) +
         " steps (--max-template-steps)");
  if (out.size() > limits().maxStringBytes)
    fail("template output exceeds the string size limit of " + std::to_string(limits().maxStringBytes) +
         " bytes (--max-string-bytes)");
}

const Value& Renderer::defined(const TV& t) {
  if (t.undef) fail(t.what);
  return t.v;
}

std::string Renderer::str(const Value& v) {
  if (containsUnknown(v)) unknown();
  return model().display(v, true);
}

void Renderer::exec(const Node& n) {
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

void Renderer::assign(const std::vector<std::string>& targets, const Value& v) {
  if (targets.size() == 1) {
    scopes_.back()[targets[0]] = v;
    return;
  }
  auto items = v.items();
  if (v.kind != ValueKind::List || items.size() != targets.size())
    fail("cannot unpack " + model().repr(v) + " into " + std::to_string(targets.size()) + " names");
  for (size_t i = 0; i < targets.size(); ++i) scopes_.back()[targets[i]] = items[i];
}

std::vector<Value> Renderer::iterate(const Value& v) {
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

bool Renderer::truth(const TV& t) {
  const Value& v = defined(t);
  if (v.isUnknown()) unknown();
  return truthy(v);
}

TV Renderer::val(Value v) {
  if (v.isUnknown()) unknown();
  return TV{v, false, ""};
}

TV Renderer::lookupName(const std::string& name) {
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

TV Renderer::getAttr(const TV& base, const std::string& name) {
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

TV Renderer::getItem(const TV& base, const Value& key) {
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

double Renderer::num(const Value& v) {
  double d = 0;
  if (v.kind == ValueKind::Float) return v.f;
  if (!intToDouble(v, d)) fail("int too large to convert to float: " + model().repr(v));
  return d;
}

Value Renderer::exactInt(IntOp op, const Value& a, const Value& b) {
  Value out;
  std::string err = intArith(arena(), op, a, b, out);
  if (!err.empty()) fail(err);
  return out;
}

Value Renderer::arith(const std::string& op, const Value& a, const Value& b) {
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

bool Renderer::compare(const std::string& op, const Value& a, const Value& b) {
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

TV Renderer::eval(const Expr& e) {
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
    // Named as the reference's Jinja exception renders: its module path, then the template as given.
    if (!err.empty()) return externalError("jinja2.exceptions.TemplateNotFound: " + path.str() + ": " + err);
    return externalError("jinja2.exceptions.TemplateNotFound: " + path.str());
  }
  if (!readConfinedFile(file, source, err))
    return externalError("jinja2.exceptions.TemplateNotFound: " + path.str() + " (looked for " + file +
                         "): " + err);
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

// The std::template renderer's class (private to runtime/plugins): its statement and expression half is in
// TemplateRender.cpp, its filters and method calls in TemplateFilters.cpp. A Renderer walks one parsed
// Template over runtime Values; errors, unknowns and "retry later" leave it as an Abort exception that
// tmpl::render turns into a RenderResult, so no exception crosses the plugin boundary.
#pragma once

#include "PluginUtil.h"
#include "Template.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace inm::runtime::plugins::tmpl {

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

  void run(const std::vector<NodeP>& nodes);
  std::string out;

 private:
  [[noreturn]] void fail(const std::string& msg) { throw Abort{RenderResult::Error, msg}; }
  [[noreturn]] void unknown() { throw Abort{RenderResult::Unknown, ""}; }
  /// A string result within Limits::maxStringBytes.
  std::string bounded(std::string s);
  /// Counts one step of the render (node or loop iteration): nested loops are bounded in total, and so is the
  /// output, not only each loop on its own.
  void step();
  uint64_t steps_ = 0;

  ValueArena& arena() { return ctx_.arena(); }
  Model& model() { return ctx_.model(); }

  const Value& defined(const TV& t);

  std::string str(const Value& v);

  void exec(const Node& n);

  void assign(const std::vector<std::string>& targets, const Value& v);

  std::vector<Value> iterate(const Value& v);

  bool truth(const TV& t);

  TV undefinedName(const std::string& name) { return TV{Value::null(), true, "'" + name + "' is undefined"}; }
  TV val(Value v);

  TV lookupName(const std::string& name);

  TV getAttr(const TV& base, const std::string& name);

  TV getItem(const TV& base, const Value& key);

  double num(const Value& v);
  static bool isInt(const Value& v) { return v.isInt() || v.kind == ValueKind::Bool; }
  /// ints saturate (a big int is beyond every count and index)
  static int64_t ival(const Value& v) { return intSaturated(v); }
  /// a op b exactly (ints are Python ints); a result beyond --max-int-digits is an error
  Value exactInt(IntOp op, const Value& a, const Value& b);

  Value arith(const std::string& op, const Value& a, const Value& b);

  bool compare(const std::string& op, const Value& a, const Value& b);

 public:
  TV eval(const Expr& e);

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
  CallArgs args(const Expr& e);
  std::string strOf(const CallArgs& a, size_t i, const char* name, const std::string& def);
  bool boolOf(const CallArgs& a, size_t i, const char* name, bool def);
  int64_t intOf(const CallArgs& a, size_t i, const char* name, int64_t def);

  std::vector<Value> seqOf(const TV& t) { return iterate(defined(t)); }

  TV filter(const Expr& e);

  std::string indent(const std::string& s0, const CallArgs& a);

  TV pluginFilter(const Expr& e, const TV& subj, const CallArgs& a);

  TV call(const Expr& e);

  PluginContext& ctx_;
  const Resolver& resolve_;
  const PluginRegistry* plugins_;
  std::vector<std::map<std::string, Value>> scopes_;
};

} // namespace inm::runtime::plugins::tmpl

// Unit tests for the std::template Jinja subset (runtime/plugins/Template*.cpp): parsing errors for
// unsupported features, whitespace control, loops and loop variables, filters, tests, strict undefined,
// unknown propagation, rendering over runtime Values with names from a resolver.
#include "Template.h"

#include "runtime/Model.h"

#include <gtest/gtest.h>

#include <map>

namespace inm::runtime::plugins::tmpl {
namespace {

class Ctx : public PluginContext {
 public:
  Ctx() { program.strings = &strings; }
  Model& model() override { return model_; }
  const Value* attr(InstanceId, llvm::StringRef, bool* exists) override {
    if (exists) *exists = false;
    return nullptr;
  }
  void print(llvm::StringRef) override {}
  const std::string& projectDir() override { return dir; }
  std::string moduleDir(llvm::StringRef) override { return {}; }
  std::string callerModule() override { return "__config__"; }
  ir::EntityId findEntity(llvm::StringRef) override { return {}; }
  const Value* lookupVariable(llvm::StringRef) override { return nullptr; }
  void warn(DiagKind, std::string) override {}
  StringTable strings;
  ir::Program program;
  std::string dir;

 private:
  Model model_{program};
};

class TemplateTest : public ::testing::Test {
 protected:
  RenderResult run(llvm::StringRef src) {
    std::string err;
    auto t = parseTemplate(src, err);
    if (!t) return RenderResult{RenderResult::Error, "parse: " + err};
    Resolver r = [&](llvm::StringRef name, Value& out) {
      auto it = vars.find(name.str());
      if (it == vars.end()) return Lookup::Missing;
      out = it->second;
      return Lookup::Found;
    };
    return render(*t, ctx, r, &PluginRegistry::builtins());
  }
  std::string ok(llvm::StringRef src) {
    RenderResult r = run(src);
    EXPECT_EQ(r.kind, RenderResult::Ok) << r.text;
    return r.text;
  }
  Value s(llvm::StringRef x) { return ctx.arena().str(x); }
  Ctx ctx;
  std::map<std::string, Value> vars;
};

TEST_F(TemplateTest, PlainTextAndTrailingNewline) {
  EXPECT_EQ(ok("hello\n"), "hello");
  EXPECT_EQ(ok("a\n\n"), "a\n");
  EXPECT_EQ(ok("{ not a tag }"), "{ not a tag }");
}

TEST_F(TemplateTest, ExpressionsAndValues) {
  vars["n"] = Value::integer(3);
  vars["name"] = s("web");
  vars["flag"] = Value::boolean(true);
  vars["nothing"] = Value::null();
  EXPECT_EQ(ok("{{ n + 1 }} {{ n * 2.5 }} {{ name ~ '-' ~ n }}"), "4 7.5 web-3");
  EXPECT_EQ(ok("{{ flag }} {{ nothing }} {{ not flag }}"), "True None False");
  EXPECT_EQ(ok("{{ [1, 'a'] }}"), "[1, 'a']");
  EXPECT_EQ(ok("{{ 'x' if n > 2 else 'y' }}"), "x");
  EXPECT_EQ(ok("{{ n == 3 and name != 'db' }}"), "True");
}

TEST_F(TemplateTest, WhitespaceControlAndComments) {
  EXPECT_EQ(ok("a  {#- c -#}  b"), "ab");
  EXPECT_EQ(ok("x\n  {%- if true -%}\n  y\n{%- endif %}"), "xy");
  EXPECT_EQ(ok("[ {{- 1 -}} ]"), "[1]");
}

TEST_F(TemplateTest, ForLoops) {
  vars["xs"] = ctx.arena().list({s("a"), s("b"), s("c")});
  EXPECT_EQ(ok("{% for x in xs %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}"),
            "1a,2b,3c");
  EXPECT_EQ(ok("{% for x in [] %}x{% else %}none{% endfor %}"), "none");
  EXPECT_EQ(ok("{% for k, v in {'a': 1}.items() %}{{ k }}={{ v }}{% endfor %}"), "a=1");
  EXPECT_EQ(ok("{% for i in range(3) %}{{ i }}{% endfor %}"), "012");
}

TEST_F(TemplateTest, SetAndIfChains) {
  EXPECT_EQ(ok("{% set x = 5 %}{% if x < 3 %}s{% elif x < 10 %}m{% else %}l{% endif %}"), "m");
}

TEST_F(TemplateTest, Filters) {
  EXPECT_EQ(ok("{{ ['b', 'a'] | sort | join(', ') }}"), "a, b");
  EXPECT_EQ(ok("{{ 'Ab' | upper }}{{ 'Ab' | lower }}{{ '  t ' | trim }}"), "ABabt");
  EXPECT_EQ(ok("{{ [1, 2, 3] | length }} {{ [1, 2] | first }} {{ [1, 2] | last }}"), "3 1 2");
  EXPECT_EQ(ok("{{ '3' | int + 1 }} {{ 3 | string ~ 'x' }}"), "4 3x");
  EXPECT_EQ(ok("{{ missing | default('d') }}"), "d");
  EXPECT_EQ(ok("{{ 'a\nb\n\nc' | indent(2) }}"), "a\n  b\n\n  c");
  EXPECT_EQ(ok("{{ 'a\nb' | indent(2, true) }}"), "  a\n  b");
  EXPECT_EQ(ok("{{ 'a.b' | std.hostname }}"), "a");
  EXPECT_EQ(ok("{{ -2 | abs }}"), "2");
}

TEST_F(TemplateTest, TestsAndMembership) {
  vars["d"] = ctx.arena().dict({{"k", Value::integer(1)}});
  EXPECT_EQ(ok("{{ d is defined }} {{ zz is defined }} {{ zz is not defined }} {{ none is none }}"),
            "True False True True");
  EXPECT_EQ(ok("{{ 'k' in d }} {{ 2 in [1, 2] }} {{ 'z' not in 'abc' }}"), "True True True");
  EXPECT_EQ(ok("{{ d.k }} {{ d['k'] }}"), "1 1");
}

TEST_F(TemplateTest, StrictUndefined) {
  RenderResult r = run("{{ nope }}");
  EXPECT_EQ(r.kind, RenderResult::Error);
  EXPECT_NE(r.text.find("'nope' is undefined"), std::string::npos) << r.text;
  r = run("{% if nope %}x{% endif %}");
  EXPECT_EQ(r.kind, RenderResult::Error);
}

TEST_F(TemplateTest, UnknownAbortsRender) {
  vars["u"] = Value::unknown();
  EXPECT_EQ(run("a {{ u }}").kind, RenderResult::Unknown);
}

TEST_F(TemplateTest, UnsupportedFeaturesAreErrors) {
  for (const char* src : {"{% macro m() %}{% endmacro %}", "{% include 'x' %}", "{% extends 'x' %}",
                          "{{ x is odd }}", "{{ xs[1:2] }}"}) {
    RenderResult r = run(src);
    EXPECT_EQ(r.kind, RenderResult::Error) << src;
    EXPECT_NE(r.text.find("not supported in templates"), std::string::npos) << r.text;
  }
  EXPECT_EQ(run("{% if x %}").kind, RenderResult::Error);
  EXPECT_EQ(run("{{ 1 + }}").kind, RenderResult::Error);
}

} // namespace
} // namespace inm::runtime::plugins::tmpl

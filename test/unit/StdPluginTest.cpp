// Unit tests for the native std plugins (runtime/plugins): pure string/list/value plugins, IP parsing and
// formatting with Python `ipaddress` rules, validate_type and base64, called directly through the
// registry with a small fake PluginContext over an empty Program and Model. Also checks that every
// signature of ir::builtinPluginSpecs() has exactly one native implementation.
#include "IpAddress.h"
#include "PluginUtil.h"
#include "ir/Lower.h"
#include "runtime/Model.h"
#include "runtime/Plugins.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace inm::runtime {
namespace {

class FakeContext : public PluginContext {
 public:
  FakeContext() { program.strings = &strings; }
  Model& model() override { return model_; }
  const Value* attr(InstanceId, llvm::StringRef, bool* exists) override {
    if (exists) *exists = false;
    return nullptr;
  }
  void print(llvm::StringRef line) override { printed.push_back(line.str()); }
  const std::string& projectDir() override { return project; }
  std::string moduleDir(llvm::StringRef) override { return {}; }
  std::string callerModule() override { return "__config__"; }
  ir::EntityId findEntity(llvm::StringRef) override { return {}; }
  const Value* lookupVariable(llvm::StringRef name) override {
    auto it = vars.find(name.str());
    return it == vars.end() ? nullptr : &it->second;
  }
  bool hasVariable(llvm::StringRef name) override { return vars.count(name.str()) != 0; }
  void warn(DiagKind, std::string m) override { warnings.push_back(std::move(m)); }

  StringTable strings;
  ir::Program program;
  std::vector<std::string> printed, warnings;
  std::map<std::string, Value> vars;
  std::string project = "/nonexistent";

 private:
  Model model_{program};
};

class StdPluginTest : public ::testing::Test {
 protected:
  PluginResult call(llvm::StringRef name, std::vector<Value> args) {
    const PluginFn* fn = PluginRegistry::builtins().find(name);
    EXPECT_NE(fn, nullptr) << name.str();
    if (!fn) return PluginResult::error(DiagKind::Runtime, "missing");
    while (args.size() < 6) args.push_back(Value::null());
    return (*fn)(ctx, args);
  }
  Value s(llvm::StringRef x) { return ctx.arena().str(x); }
  Value list(std::vector<Value> xs) { return ctx.arena().list(xs); }
  std::string str(const PluginResult& r) {
    EXPECT_EQ(r.kind, PluginResult::Ok) << r.message;
    return r.value.kind == ValueKind::String ? r.value.str().str() : ctx.model().display(r.value);
  }
  FakeContext ctx;
};

TEST_F(StdPluginTest, EverySignatureHasAnImplementation) {
  for (const ir::PluginSpec& spec : ir::builtinPluginSpecs()) {
    llvm::StringRef sig(spec.signature);
    std::string name = sig.substr(0, sig.find('(')).trim().str();
    EXPECT_NE(PluginRegistry::builtins().find(name), nullptr) << name;
  }
  EXPECT_GE(ir::builtinPluginSpecs().size(), 60u);
}

TEST_F(StdPluginTest, Strings) {
  EXPECT_EQ(str(call("std::replace", {s("aXbX"), s("X"), s("-")})), "a-b-");
  EXPECT_EQ(str(call("std::capitalize", {s("hELLO")})), "Hello");
  EXPECT_EQ(str(call("std::limit", {s("abcdef"), Value::integer(2)})), "ab");
  EXPECT_EQ(call("std::length", {s("h\xC3\xA9")}).value.i, 2);
  EXPECT_EQ(str(call("std::split", {s("a:b"), s(":")})), "['a', 'b']");
  EXPECT_EQ(str(call("std::hostname", {s("a.b.c")})), "a");
  EXPECT_EQ(str(call("std::unique_file", {s("p"), s("seed"), s("s")})), "pfe4c0f30aa359c41d9f9a5f69c8c4192s");
}

TEST_F(StdPluginTest, Lists) {
  EXPECT_EQ(call("std::count", {list({Value::unknown(), Value::integer(1)})}).value.i, 2);
  EXPECT_TRUE(call("std::len", {list({Value::unknown()})}).value.isUnknown());
  EXPECT_EQ(str(call("std::sequence", {Value::integer(3), Value::integer(1), Value::integer(1)})), "[1, 2]");
  EXPECT_EQ(str(call("std::at", {list({Value::integer(5), Value::integer(6)}), Value::integer(-1)})), "6");
  EXPECT_EQ(call("std::at", {list({}), Value::integer(0)}).kind, PluginResult::Error);
  EXPECT_FALSE(call("std::unique", {list({s("a"), s("a")})}).value.b);
}

TEST_F(StdPluginTest, PrintAndAssert) {
  call("std::print", {Value::null()});
  call("std::print", {list({Value::integer(1), Value::null(), Value::boolean(true)})});
  call("std::print", {Value::real(2.0)});
  ASSERT_EQ(ctx.printed.size(), 3u);
  EXPECT_EQ(ctx.printed[0], "None");
  EXPECT_EQ(ctx.printed[1], "@[1, null, True]");
  EXPECT_EQ(ctx.printed[2], "2.0");
  PluginResult r = call("std::assert", {Value::boolean(false), s("boom")});
  EXPECT_EQ(r.kind, PluginResult::Error);
  EXPECT_EQ(r.errorKind, DiagKind::External);
  EXPECT_EQ(r.message, "AssertionError: Assertion error: boom");
  EXPECT_EQ(call("std::assert", {Value::boolean(true)}).kind, PluginResult::Ok);
}

TEST_F(StdPluginTest, Ipv4Parsing) {
  using namespace plugins;
  IpAddr a;
  EXPECT_TRUE(parseIpv4("0.0.0.0", a));
  EXPECT_TRUE(parseIpv4("255.255.255.255", a));
  EXPECT_FALSE(parseIpv4("256.1.1.1", a));
  EXPECT_FALSE(parseIpv4("1.2.3", a));
  EXPECT_FALSE(parseIpv4("01.2.3.4", a));
  EXPECT_FALSE(parseIpv4("1.2.3.4 ", a));
  IpIface i;
  EXPECT_TRUE(parseIpInterface("10.0.0.1/255.255.0.0", IpFamily::V4, i));
  EXPECT_EQ(i.prefix, 16u);
  EXPECT_FALSE(parseIpNetwork("10.0.0.1/8", IpFamily::V4, i));
  EXPECT_TRUE(parseIpNetwork("10.0.0.0/8", IpFamily::V4, i));
  EXPECT_FALSE(parseIpInterface("10.0.0.1/33", IpFamily::V4, i));
}

TEST_F(StdPluginTest, Ipv6ParsingAndFormatting) {
  using namespace plugins;
  IpAddr a;
  ASSERT_TRUE(parseIpv6("2001:0DB8:0:0:0:0:0:1", a));
  EXPECT_EQ(formatIp(a), "2001:db8::1");
  ASSERT_TRUE(parseIpv6("::", a));
  EXPECT_EQ(formatIp(a), "::");
  ASSERT_TRUE(parseIpv6("1:0:0:2:0:0:0:3", a));
  EXPECT_EQ(formatIp(a), "1:0:0:2::3");
  ASSERT_TRUE(parseIpv6("::ffff:1.2.3.4", a));
  EXPECT_EQ(formatIp(a), "::ffff:102:304");
  ASSERT_TRUE(parseIpv6("fe80::1%eth0", a));
  EXPECT_FALSE(parseIpv6("1::2::3", a));
  EXPECT_FALSE(parseIpv6("1:2:3:4:5:6:7:8:9", a));
  EXPECT_FALSE(parseIpv6("12345::", a));
  EXPECT_FALSE(parseIpv6(":1:2:3:4:5:6:7", a));
  EXPECT_TRUE(parseIpv6("1:2:3:4:5:6:7::", a));
}

TEST_F(StdPluginTest, NetworkPlugins) {
  EXPECT_EQ(str(call("std::prefixlength_to_netmask", {Value::integer(0)})), "0.0.0.0");
  EXPECT_EQ(str(call("std::prefixlength_to_netmask", {Value::integer(32)})), "255.255.255.255");
  EXPECT_EQ(str(call("std::network_address", {s("2001:db8::ff/120")})), "2001:db8::");
  EXPECT_EQ(str(call("std::ipindex", {s("10.0.0.0/30"), Value::integer(-4)})), "10.0.0.0");
  EXPECT_EQ(call("std::ipindex", {s("10.0.0.0/30"), Value::integer(4)}).kind, PluginResult::Error);
  EXPECT_EQ(str(call("std::add_to_ip", {s("10.0.0.1/24"), Value::integer(-1)})), "10.0.0.0/24");
}

TEST_F(StdPluginTest, ValidateType) {
  std::string err;
  auto v = [&](const char* type, Value x) { return plugins::validateType(type, x, Value::null(), err); };
  EXPECT_EQ(v("pydantic.IPvAnyAddress", s("::1")), 1);
  EXPECT_EQ(v("pydantic.IPvAnyNetwork", s("::1/64")), 0);
  EXPECT_EQ(v("uuid.UUID", s("urn:uuid:12345678123456781234567812345678")), 1);
  EXPECT_EQ(v("datetime.time", s("25:00")), 0);
  EXPECT_EQ(v("datetime.datetime", s("2024-01-01 10:00:00.123Z")), 1);
  EXPECT_EQ(v("pydantic.NameEmail", s("Jo <jo@ex.org>")), 1);
  EXPECT_EQ(v("pydantic.HttpUrl", s("https://example.com")), 1);
  EXPECT_EQ(v("pydantic.AnyUrl", s("no scheme")), 0);
  EXPECT_EQ(v("pydantic.PositiveInt", Value::integer(3)), 1);
  EXPECT_EQ(v("pydantic.NegativeInt", Value::integer(3)), 0);
  EXPECT_EQ(v("no.such.Type", Value::integer(3)), -1);
  EXPECT_TRUE(plugins::isBase64(""));
  EXPECT_TRUE(plugins::isBase64("YQ=="));
  EXPECT_FALSE(plugins::isBase64("YQ="));
  EXPECT_FALSE(plugins::isBase64("Y==Q"));
  EXPECT_FALSE(plugins::isBase64("a b="));
}

TEST_F(StdPluginTest, EnvPluginsWithoutServer) {
  // Without a configured environment the std module raises a plain Exception (ExternalException).
  unsetenv("INMANTA_ENVIRONMENT");
  for (const char* name : {"std::environment", "std::environment_name", "std::getfact"}) {
    PluginResult r = call(name, {s("a"), s("b")});
    EXPECT_EQ(r.kind, PluginResult::Error) << name;
    EXPECT_EQ(r.errorKind, DiagKind::External) << name;
    EXPECT_EQ(r.message,
              "Exception: The environment of this model should be configured in config>environment")
        << name;
  }
  EXPECT_EQ(str(call("std::server_token", {})), "");
  EXPECT_EQ(call("std::server_port", {}).value.i, 8888);
  EXPECT_TRUE(call("std::get_env", {s("INM_SURELY_NOT_SET_VAR")}).value.isUnknown());
  EXPECT_EQ(str(call("std::get_env", {s("INM_SURELY_NOT_SET_VAR"), s("d")})), "d");
}

} // namespace
} // namespace inm::runtime

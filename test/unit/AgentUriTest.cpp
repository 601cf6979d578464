// Agent URI parsing (orchestrator/model/AgentUri.h): the local forms, ssh:// with user, port, IPv6 and
// options, the reference's bare host name, and a clear error for each malformed form; plus the
// autostart_agent_map validation in coerceSetting that uses it.
#include "model/AgentUri.h"

#include "model/Settings.h"

#include <gtest/gtest.h>

using namespace inm::model;

namespace {

AgentUri ok(const std::string& text) {
  auto u = parseAgentUri(text);
  if (!u) {
    ADD_FAILURE() << text << ": " << llvm::toString(u.takeError());
    return {};
  }
  return *u;
}

std::string err(const std::string& text) {
  auto u = parseAgentUri(text);
  if (u) return "(parsed as " + u->str() + ")";
  return llvm::toString(u.takeError());
}

} // namespace

TEST(AgentUri, LocalForms) {
  for (const char* t : {"local:", "", "localhost", "local"}) EXPECT_TRUE(ok(t).local()) << t;
  EXPECT_EQ(ok("local:").str(), "local:");
}

TEST(AgentUri, SshFull) {
  AgentUri u = ok("ssh://deploy@web1.example.com:2222?python=python3&known_hosts=/etc/kh");
  EXPECT_FALSE(u.local());
  EXPECT_EQ(u.user, "deploy");
  EXPECT_EQ(u.host, "web1.example.com");
  EXPECT_EQ(u.port, 2222);
  EXPECT_EQ(u.options.at("python"), "python3");
  EXPECT_EQ(u.options.at("known_hosts"), "/etc/kh");
  EXPECT_EQ(u.target(), "deploy@web1.example.com:2222");
  EXPECT_EQ(u.str(), "ssh://deploy@web1.example.com:2222?known_hosts=/etc/kh&python=python3");
}

TEST(AgentUri, SshDefaultsAndBareHost) {
  AgentUri u = ok("ssh://10.0.0.5");
  EXPECT_EQ(u.user, "");
  EXPECT_EQ(u.port, 22);
  EXPECT_EQ(u.str(), "ssh://10.0.0.5:22");
  AgentUri bare = ok("web2");
  EXPECT_FALSE(bare.local());
  EXPECT_EQ(bare.host, "web2");
  AgentUri v6 = ok("ssh://root@[::1]:22/");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.str(), "ssh://root@[::1]:22");
  EXPECT_EQ(ok("ssh://h?python=%2Fusr%2Fbin%2Fpython3").options.at("python"), "/usr/bin/python3");
}

TEST(AgentUri, Malformed) {
  EXPECT_NE(err("http://host").find("unknown scheme 'http'"), std::string::npos) << err("http://host");
  EXPECT_NE(err("ssh://").find("the host is missing"), std::string::npos) << err("ssh://");
  EXPECT_NE(err("ssh://u@").find("the host is missing"), std::string::npos);
  EXPECT_NE(err("ssh://host:").find("the port is empty"), std::string::npos);
  EXPECT_NE(err("ssh://host:0").find("not a number between 1 and 65535"), std::string::npos);
  EXPECT_NE(err("ssh://host:70000").find("not a number between 1 and 65535"), std::string::npos);
  EXPECT_NE(err("ssh://host:22x").find("port '22x'"), std::string::npos);
  EXPECT_NE(err("ssh://-oProxyCommand=x").find("is not a host name"), std::string::npos);
  EXPECT_NE(err("ssh://-oProxyCommand=x@h").find("is not a user name"), std::string::npos);
  EXPECT_NE(err("ssh://h/path").find("a path is not allowed"), std::string::npos);
  EXPECT_NE(err("ssh://h?python").find("option 'python' has no value"), std::string::npos);
  EXPECT_NE(err("ssh://h?x=%zz").find("broken %-escape"), std::string::npos);
  EXPECT_NE(err("ssh://[::1").find("unterminated '['"), std::string::npos);
  EXPECT_NE(err("ssh://host:22x").find("agent uri 'ssh://host:22x' is not valid"), std::string::npos);
  EXPECT_NE(err("ssh://u@h?run_as=-u%20x").find("run_as '-u x' is not a user name"), std::string::npos)
      << err("ssh://u@h?run_as=-u%20x");
  EXPECT_EQ(ok("ssh://u@h?run_as=root").options.at("run_as"), "root");
}

TEST(AgentUri, AutostartAgentMapSettingIsValidated) {
  const SettingDef* def = findSetting("autostart_agent_map");
  ASSERT_NE(def, nullptr);
  auto good = coerceSetting(*def, nlohmann::json{{"internal", "local:"}, {"web", "ssh://u@h:2200"}});
  ASSERT_TRUE(static_cast<bool>(good)) << llvm::toString(good.takeError());
  auto bad = coerceSetting(*def, nlohmann::json{{"web", "ssh://u@h:notaport"}});
  ASSERT_FALSE(static_cast<bool>(bad));
  std::string msg = llvm::toString(bad.takeError());
  EXPECT_NE(msg.find("agent 'web'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("port 'notaport'"), std::string::npos) << msg;
  auto notString = coerceSetting(*def, nlohmann::json{{"web", 3}});
  ASSERT_FALSE(static_cast<bool>(notString));
  EXPECT_NE(llvm::toString(notString.takeError()).find("must be a string"), std::string::npos);
}

// Units for the orchestrator's INI configuration: name folding, later-wins merging, env overrides, typed
// reads.
#include "config/Config.h"

#include <gtest/gtest.h>

#include <cstdlib>

using inm::config::Config;

TEST(ConfigTest, FoldsNamesAndLaterValuesWin) {
  Config c;
  ASSERT_FALSE(
      bool(c.mergeText("[server]\nbind-port = 8888\n# comment\n; other\n[Database]\nhost: db1\n", "a")));
  ASSERT_FALSE(bool(c.mergeText("[server]\nbind_port=9000\n", "b")));
  EXPECT_EQ(c.getString("server", "bind-port", ""), "9000");
  EXPECT_EQ(c.getString("database", "HOST", ""), "db1");
  EXPECT_EQ(c.getString("database", "port", "5432"), "5432");
}

TEST(ConfigTest, EnvironmentOverridesFiles) {
  Config c;
  ASSERT_FALSE(bool(c.mergeText("[compiler_rest_transport]\nport = 1\n", "a")));
  setenv("INMANTA_COMPILER_REST_TRANSPORT_PORT", "4242", 1);
  auto port = c.getInt("compiler_rest_transport", "port", 0);
  unsetenv("INMANTA_COMPILER_REST_TRANSPORT_PORT");
  ASSERT_TRUE(bool(port));
  EXPECT_EQ(*port, 4242);
}

TEST(ConfigTest, TypedReadsRejectBadValues) {
  Config c;
  ASSERT_FALSE(bool(c.mergeText("[s]\nn = 12x\nb = maybe\nok = Yes\n", "a")));
  auto n = c.getInt("s", "n", 0);
  ASSERT_FALSE(bool(n));
  EXPECT_NE(llvm::toString(n.takeError()).find("expected an integer, got '12x'"), std::string::npos);
  auto b = c.getBool("s", "b", false);
  ASSERT_FALSE(bool(b));
  llvm::consumeError(b.takeError());
  auto ok = c.getBool("s", "ok", false);
  ASSERT_TRUE(bool(ok));
  EXPECT_TRUE(*ok);
}

TEST(ConfigTest, MalformedLinesNameTheLine) {
  Config c;
  auto err = c.mergeText("[s]\nfine = 1\njunk line\n", "f.cfg");
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)), "f.cfg:3: expected 'key = value', got 'junk line'");
  auto err2 = c.mergeText("key = 1\n", "g.cfg");
  ASSERT_TRUE(bool(err2));
  EXPECT_NE(llvm::toString(std::move(err2)).find("before any [section]"), std::string::npos);
}

TEST(ConfigTest, MissingExplicitFileIsAnError) {
  auto c = Config::load({"/nonexistent/inmanta.cfg"}, "/nonexistent");
  ASSERT_FALSE(bool(c));
  EXPECT_NE(llvm::toString(c.takeError()).find("/nonexistent/inmanta.cfg"), std::string::npos);
}

// PEP 440 ordering, specifiers and requirement parsing of projectmgr/Version.h, and the requires-block
// rewrite and import scan of projectmgr/Config.h (the installer's pure parts; the git side is in
// test/integration/test_modules_git.py).
#include "projectmgr/Version.h"

#include "projectmgr/Config.h"

#include <gtest/gtest.h>

using namespace inm::projectmgr;

namespace {

Version v(const char* s) {
  auto r = parseVersion(s);
  EXPECT_TRUE(r.has_value()) << s;
  return r.value_or(Version{});
}

bool matches(const char* req, const char* ver) {
  std::string err;
  auto r = parseRequirement(req, err);
  EXPECT_TRUE(r.has_value()) << req << ": " << err;
  return r && r->contains(v(ver));
}

} // namespace

TEST(VersionTest, Pep440Ordering) {
  const char* ordered[] = {"1.0.dev1", "1.0a1",     "1.0a2.dev1",     "1.0a2",     "1.0b1", "1.0rc1",
                           "1.0",      "1.0+local", "1.0.post1.dev1", "1.0.post1", "1.1",   "1!0.1"};
  for (size_t i = 0; i + 1 < std::size(ordered); ++i)
    EXPECT_LT(compare(v(ordered[i]), v(ordered[i + 1])), 0) << ordered[i] << " < " << ordered[i + 1];
  EXPECT_EQ(compare(v("1.0"), v("1.0.0")), 0);
  EXPECT_EQ(compare(v("v2.1"), v("2.1.0")), 0);
  EXPECT_EQ(v("1.0-rc.1").str(), "1.0rc1");
  EXPECT_TRUE(v("2.0b3").isPrerelease());
  EXPECT_FALSE(parseVersion("latest").has_value());
  EXPECT_FALSE(parseVersion("1.0x").has_value());
}

TEST(VersionTest, Specifiers) {
  EXPECT_TRUE(matches("a~=1.2", "1.9"));
  EXPECT_FALSE(matches("a~=1.2", "2.0"));
  EXPECT_TRUE(matches("a~=1.2.3", "1.2.9"));
  EXPECT_FALSE(matches("a~=1.2.3", "1.3.0"));
  EXPECT_TRUE(matches("a==1.*", "1.7.2"));
  EXPECT_FALSE(matches("a!=1.*", "1.7.2"));
  EXPECT_TRUE(matches("a==1.0", "1.0.0+build5"));
  EXPECT_FALSE(matches("a<2.0", "2.0rc1")); // < V excludes V's own pre-releases
  EXPECT_TRUE(matches("a<2.0rc2", "2.0rc1"));
  EXPECT_FALSE(matches("a>1.0", "1.0.post1")); // > V excludes V's post-releases
  EXPECT_TRUE(matches("a >= 1.0, < 2", "1.5"));
  EXPECT_FALSE(matches("a >= 1.0, < 2", "2.0"));
  EXPECT_TRUE(matches("a", "0.0.1"));
}

TEST(VersionTest, RequirementErrors) {
  std::string err;
  EXPECT_FALSE(parseRequirement(">=1.0", err));
  EXPECT_NE(err.find("module name"), std::string::npos);
  EXPECT_FALSE(parseRequirement("a=>1.0", err));
  EXPECT_FALSE(parseRequirement("a~=1", err));
  EXPECT_NE(err.find("two parts"), std::string::npos);
  EXPECT_FALSE(parseRequirement("a>=1.*", err));
  auto r = parseRequirement("mod >= 1.0 ,<2.0", err);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->str(), "mod>=1.0,<2.0");
}

TEST(VersionTest, RequiresBlockRewriteKeepsTheRest) {
  std::string yml = "name: p\nrequires:\n  - a>=1\n  # note\n  - b\nrepo: x\n";
  EXPECT_EQ(replaceRequiresBlock(yml, {"a==1.2.0"}), "name: p\nrequires:\n  - a==1.2.0\nrepo: x\n");
  EXPECT_EQ(replaceRequiresBlock("name: p\n", {"a==1"}), "name: p\nrequires:\n  - a==1\n");
  EXPECT_EQ(replaceRequiresBlock("requires: [a]\nx: 1\n", {}), "requires: []\nx: 1\n");
}

TEST(VersionTest, ImportScan) {
  auto names = importedModules("import std\n  import a::b::c\nimport x as y\n# import no\nimportant = 1\n");
  EXPECT_EQ(names, (std::vector<std::string>{"std", "a", "x"}));
}

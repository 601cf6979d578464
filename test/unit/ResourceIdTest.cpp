// Unit tests for exporter/ResourceId.h: printing, parsing and the escaping scheme of resource ids. The
// ids are the key the orchestrator stores state under, so the round trip print -> parse must be exact for
// any agent and value text, and ids without special characters must print as the reference prints them.
#include "artifact/ResourceId.h"

#include <gtest/gtest.h>

namespace inm::artifact {
namespace {

ResourceId make(std::string type, std::string agent, std::string attr, std::string value) {
  ResourceId id;
  id.type = std::move(type);
  id.agent = std::move(agent);
  id.attribute = std::move(attr);
  id.value = std::move(value);
  return id;
}

ResourceId parseOk(llvm::StringRef text) {
  llvm::Expected<ResourceId> id = parseResourceId(text);
  if (!id) {
    ADD_FAILURE() << "parse failed: " << llvm::toString(id.takeError());
    return {};
  }
  return *id;
}

std::string parseError(llvm::StringRef text) {
  llvm::Expected<ResourceId> id = parseResourceId(text);
  if (id) return "";
  return llvm::toString(id.takeError());
}

TEST(ResourceIdTest, PrintsLikeTheReference) {
  ResourceId id = make("std::File", "web1", "path", "/etc/motd");
  EXPECT_EQ(id.str(), "std::File[web1,path=/etc/motd]");
  EXPECT_EQ(id.versioned(3), "std::File[web1,path=/etc/motd],v=3");
  EXPECT_EQ(make("std::testing::NullResource", "internal", "name", "n1").versioned(0),
            "std::testing::NullResource[internal,name=n1],v=0");
}

TEST(ResourceIdTest, ParsesUnversionedAndVersioned) {
  ResourceId id = parseOk("fs::File[web01,path=/opt/app/app.conf],v=12");
  EXPECT_EQ(id.type, "fs::File");
  EXPECT_EQ(id.agent, "web01");
  EXPECT_EQ(id.attribute, "path");
  EXPECT_EQ(id.value, "/opt/app/app.conf");
  EXPECT_TRUE(id.hasVersion);
  EXPECT_EQ(id.version, 12);

  ResourceId plain = parseOk("std::testing::NullResource[internal,name=db]");
  EXPECT_FALSE(plain.hasVersion);
  EXPECT_EQ(plain.version, 0);
  EXPECT_EQ(plain.type, "std::testing::NullResource");
}

TEST(ResourceIdTest, ValueMayHoldCommaAndEqualsUnescaped) {
  // As in the reference: the value ends at the first ']' only, so ',' and '=' need no escape there.
  ResourceId id = make("std::File", "h", "path", "/a,b=c");
  EXPECT_EQ(id.str(), "std::File[h,path=/a,b=c]");
  EXPECT_EQ(parseOk(id.str()), id);
}

TEST(ResourceIdTest, EscapesSpecialCharacters) {
  ResourceId id = make("std::File", "a,b]c\\d=e", "path", "x]y\\z,=");
  EXPECT_EQ(id.str(), "std::File[a\\,b\\]c\\\\d=e,path=x\\]y\\\\z,=]");
  EXPECT_EQ(parseOk(id.str()), id);
}

TEST(ResourceIdTest, RoundTripsAwkwardTexts) {
  const char* texts[] = {"]", ",", "=", "\\", "\\]", "],v=3", "a\\", ",v=1", "[x]", "ünïcødé", "a b\tc\n"};
  for (const char* agent : texts)
    for (const char* value : texts) {
      ResourceId id = make("mod::sub::Thing", agent, "key", value);
      ResourceId back = parseOk(id.str());
      EXPECT_EQ(back, id) << id.str();
      id.hasVersion = true;
      id.version = 42;
      EXPECT_EQ(parseOk(id.print()), id) << id.print();
    }
}

TEST(ResourceIdTest, AttributeEscapes) {
  ResourceId id = make("a::B", "h", "we=ird,attr]", "v");
  EXPECT_EQ(parseOk(id.str()), id);
}

TEST(ResourceIdTest, RejectsMalformedIds) {
  EXPECT_NE(parseError("File[h,path=/x]"), "");           // no namespace
  EXPECT_NE(parseError("std::File(h,path=/x)"), "");      // no '['
  EXPECT_NE(parseError("std::File[h path=/x]"), "");      // no ','
  EXPECT_NE(parseError("std::File[h,path/x]"), "");       // no '='
  EXPECT_NE(parseError("std::File[h,path=/x"), "");       // no ']'
  EXPECT_NE(parseError("std::File[h,path=/x],v="), "");   // empty version
  EXPECT_NE(parseError("std::File[h,path=/x],v=1a"), ""); // junk version
  EXPECT_NE(parseError("std::File[h,path=/x]x"), "");     // junk after ']'
  EXPECT_NE(parseError("std::File[,path=/x]"), "");       // empty agent
  EXPECT_NE(parseError("std::File[h,path=]"), "");        // empty value
  EXPECT_NE(parseError("std::File[h,path=/x\\"), "");     // dangling escape
  EXPECT_NE(parseError("std::[h,path=/x]"), "");          // empty class name
  EXPECT_NE(parseError("std::File[h,path=/x]").find(""), std::string::npos);
  EXPECT_NE(parseError("nope").find("invalid resource id 'nope'"), std::string::npos);
}

// The reference takes backslashes literally (its id regex has no escapes): a backslash before a character its
// part does not escape is kept, and an id whose escapes leave no closing `]` is read literally.
TEST(ResourceIdTest, ReferenceBackslashesAreLiteral) {
  ResourceId path = parseOk("std::testing::NullResource[agent\\x,name=C:\\dir\\file],v=3");
  EXPECT_EQ(path.agent, "agent\\x");
  EXPECT_EQ(path.value, "C:\\dir\\file");
  EXPECT_EQ(path.version, 3);
  ResourceId odd = parseOk("std::testing::NullResource[a,name=50%_off\\]");
  EXPECT_EQ(odd.value, "50%_off\\");
  EXPECT_FALSE(odd.hasVersion);
  ResourceId oddVersioned = parseOk("std::testing::NullResource[a,name=50%_off\\],v=12");
  EXPECT_EQ(oddVersioned.value, "50%_off\\");
  EXPECT_EQ(oddVersioned.version, 12);
  EXPECT_EQ(stripVersion("std::testing::NullResource[a,name=50%_off\\],v=12"),
            "std::testing::NullResource[a,name=50%_off\\]");
  // Our escapes still mean what they meant: `\\` is one backslash, `\]` a bracket inside the value.
  EXPECT_EQ(parseOk("a::B[h,k=x\\\\y\\]z]").value, "x\\y]z");
  EXPECT_NE(parseError("std::File[h,path=/x\\"), ""); // no closing bracket either way
}

TEST(ResourceIdTest, StripVersion) {
  EXPECT_EQ(stripVersion("std::File[h,path=/x],v=7"), "std::File[h,path=/x]");
  EXPECT_EQ(stripVersion("std::File[h,path=/x]"), "std::File[h,path=/x]");
  // ",v=1" inside an escaped value is not a version.
  ResourceId id = make("std::File", "h", "path", "a],v=1");
  EXPECT_EQ(stripVersion(id.str()), id.str());
  EXPECT_EQ(stripVersion(id.versioned(5)), id.str());
}

} // namespace
} // namespace inm::artifact

// Unit tests for support/StringTable.h: interning gives equal ids for equal text, ids are dense and the
// saved text outlives the caller's buffer. Every stage compares names by StringId, so this must hold.
#include "support/StringTable.h"

#include <gtest/gtest.h>

#include <string>

namespace inm {
namespace {

TEST(StringTableTest, EmptyStringIsIdZero) {
  StringTable t;
  EXPECT_EQ(t.intern(""), StringTable::empty());
  EXPECT_EQ(t.str(StringTable::empty()), "");
}

TEST(StringTableTest, EqualTextEqualId) {
  StringTable t;
  StringId a = t.intern("std::Host");
  StringId b = t.intern(std::string("std::") + "Host");
  StringId c = t.intern("std::File");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(t[a], "std::Host");
}

TEST(StringTableTest, TextOutlivesSource) {
  StringTable t;
  StringId id;
  {
    std::string temp = "temporary-buffer-text";
    id = t.intern(temp);
    temp.assign(temp.size(), 'x');
  }
  EXPECT_EQ(t.str(id), "temporary-buffer-text");
}

TEST(StringTableTest, LookupDoesNotAdd) {
  StringTable t;
  EXPECT_FALSE(t.lookup("missing").valid());
  StringId id = t.intern("present");
  EXPECT_EQ(t.lookup("present"), id);
  EXPECT_FALSE(t.lookup("missing").valid());
}

TEST(StringTableTest, ManyStringsStayDistinct) {
  StringTable t;
  std::vector<StringId> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(t.intern("name" + std::to_string(i)));
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(t.str(ids[i]), "name" + std::to_string(i));
    EXPECT_EQ(t.intern("name" + std::to_string(i)), ids[i]);
  }
}

} // namespace
} // namespace inm

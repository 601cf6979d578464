// Unit tests for support/Id.h: typed IDs, IdRange iteration and Store ownership. These are the building
// blocks of every stage's product, so their invariants (insertion-order IDs, invalid by default) are
// checked here once instead of in every stage.
#include "support/Id.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

namespace inm {
namespace {

using WidgetId = Id<struct WidgetTag>;

TEST(IdTest, DefaultIsInvalid) {
  WidgetId id;
  EXPECT_FALSE(id.valid());
  EXPECT_FALSE(bool(id));
  EXPECT_EQ(id.index, WidgetId::kNone);
  EXPECT_TRUE(WidgetId{0}.valid());
}

TEST(IdTest, ComparesByIndex) {
  EXPECT_EQ(WidgetId{3}, WidgetId{3});
  EXPECT_NE(WidgetId{3}, WidgetId{4});
  EXPECT_LT(WidgetId{1}, WidgetId{2});
  std::unordered_set<WidgetId> set{WidgetId{1}, WidgetId{1}, WidgetId{2}};
  EXPECT_EQ(set.size(), 2u);
}

TEST(StoreTest, AddsInInsertionOrder) {
  Store<WidgetId, std::string> store;
  WidgetId a = store.add("a");
  WidgetId b = store.add("b");
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(b.index, 1u);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.get(a), "a");
  EXPECT_EQ(store[b], "b");
  store[b] = "changed";
  EXPECT_EQ(store.get(b), "changed");
}

TEST(StoreTest, IdsSurviveGrowth) {
  Store<WidgetId, std::string> store;
  WidgetId first = store.add("first");
  for (int i = 0; i < 10000; ++i) store.add(std::to_string(i));
  EXPECT_EQ(store.get(first), "first");
  EXPECT_EQ(store.get(WidgetId{10000}), "9999");
}

TEST(StoreTest, AllCoversEveryId) {
  Store<WidgetId, int> store;
  for (int i = 0; i < 5; ++i) store.add(i * 10);
  int sum = 0;
  unsigned count = 0;
  // IdRange's data members are named begin/end, so range-for cannot be used; iterate via the friends.
  IdRange<WidgetId> all = store.all();
  for (auto it = begin(all); it != end(all); ++it) {
    sum += store[*it];
    ++count;
  }
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(sum, 100);
}

TEST(IdRangeTest, SizeEmptyAndIndexing) {
  IdRange<WidgetId> r{2, 5};
  EXPECT_EQ(r.size(), 3u);
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r[0], WidgetId{2});
  EXPECT_EQ(r[2], WidgetId{4});
  IdRange<WidgetId> e{7, 7};
  EXPECT_TRUE(e.empty());
  unsigned n = 0;
  for (auto it = begin(e); it != end(e); ++it) ++n;
  EXPECT_EQ(n, 0u);
}

} // namespace
} // namespace inm

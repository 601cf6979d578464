// Unit tests for orchestrator/plan: folding released versions into one change set (§6.2) and BLOCKED (§6.5).
// The dumps are goldens: they print every decision in a stable order.
#include "plan/Plan.h"

#include <gtest/gtest.h>

using namespace inm::plan;

namespace {

Intent R(const std::string& name, const std::string& hash, std::vector<std::string> reqs = {},
         bool undef = false) {
  Intent i;
  i.id = "t::R[a,name=" + name + "]";
  i.agent = "a";
  i.hash = hash;
  i.undefined = undef;
  for (auto& r : reqs) i.requireIds.push_back("t::R[a,name=" + r + "]");
  return i;
}

ManagedIntent managed(std::vector<Intent> v) {
  ManagedIntent m;
  for (auto& i : v) m.emplace(i.id, i);
  return m;
}

} // namespace

TEST(PlanTest, FirstVersionIsAllNew) {
  auto cs = foldVersions({}, 0, {{1, {R("a", "h1"), R("b", "h2", {"a"})}}});
  EXPECT_EQ(cs.dump(), "fold 0 -> 1 (versions 1)\n"
                       "NEW       t::R[a,name=a] hash=h1\n"
                       "NEW       t::R[a,name=b] hash=h2\n"
                       "EDGE+     t::R[a,name=b] requires t::R[a,name=a]\n"
                       "unchanged 0\n");
}

TEST(PlanTest, GoldenMixedChangeSet) {
  auto m = managed(
      {R("keep", "k"), R("chg", "c1"), R("gone", "g"), R("def", "d", {}, true), R("req", "r", {"keep"})});
  auto cs = foldVersions(
      m, 4, {{5, {R("keep", "k"), R("chg", "c2"), R("def", "d"), R("req", "r", {"chg"}), R("new", "n")}}});
  EXPECT_EQ(cs.dump(), "fold 4 -> 5 (versions 5)\n"
                       "NEW       t::R[a,name=new] hash=n\n"
                       "UPDATED   t::R[a,name=chg] hash=c2\n"
                       "UPDATED   t::R[a,name=def] hash=d\n"
                       "DELETED   t::R[a,name=gone]\n"
                       "EDGE+     t::R[a,name=req] requires t::R[a,name=chg]\n"
                       "EDGE-     t::R[a,name=req] requires t::R[a,name=keep]\n"
                       "unchanged 2\n");
}

// §17.5: v10 drops x, v11 re-adds it unchanged; folded together, x is NEW (fresh state) despite the equal
// hash.
TEST(PlanTest, DeletedAndReaddedInsideTheBatchIsNew) {
  auto m = managed({R("x", "hx"), R("y", "hy")});
  auto cs = foldVersions(m, 9, {{10, {R("y", "hy")}}, {11, {R("x", "hx"), R("y", "hy")}}});
  EXPECT_EQ(cs.dump(), "fold 9 -> 11 (versions 10 11)\n"
                       "NEW       t::R[a,name=x] hash=hx\n"
                       "unchanged 1\n");
  // Released one at a time, the same resource would be deleted then new; unchanged if never dropped.
  auto cs2 = foldVersions(m, 9, {{10, {R("x", "hx"), R("y", "hy")}}});
  EXPECT_TRUE(cs2.added.empty());
  EXPECT_EQ(cs2.unchanged.size(), 2u);
}

// §17.8: a requires-only change is not a change; only the edges move.
TEST(PlanTest, RequiresOnlyChangeIsNotAChange) {
  auto m = managed({R("a", "ha"), R("b", "hb")});
  auto cs = foldVersions(m, 1, {{2, {R("a", "ha"), R("b", "hb", {"a"})}}});
  EXPECT_TRUE(cs.added.empty());
  EXPECT_TRUE(cs.updated.empty());
  EXPECT_EQ(cs.addedEdges.size(), 1u);
  EXPECT_EQ(cs.unchanged.size(), 2u);
}

TEST(PlanTest, DefinednessChangeIsAnUpdateEvenWithEqualHash) {
  auto m = managed({R("vm", "h", {}, true)});
  auto cs = foldVersions(m, 1, {{2, {R("vm", "h")}}});
  ASSERT_EQ(cs.updated.size(), 1u);
  EXPECT_FALSE(cs.updated[0].undefined);
}

TEST(PlanTest, NoVersionsIsEmpty) {
  auto cs = foldVersions(managed({R("a", "h")}), 3, {});
  EXPECT_EQ(cs.toVersion, 3);
  EXPECT_TRUE(cs.added.empty() && cs.updated.empty() && cs.deleted.empty());
}

TEST(PlanTest, BlockedIsTransitiveAlongProvides) {
  std::vector<Intent> v{R("vm", "1", {}, true), R("dns", "2", {"vm"}), R("web", "3", {"dns"}), R("free", "4"),
                        R("other", "5", {"free"})};
  std::vector<const Intent*> ptrs;
  for (auto& i : v) ptrs.push_back(&i);
  auto b = computeBlocked(ptrs);
  EXPECT_EQ(b, (std::set<std::string>{"t::R[a,name=dns]", "t::R[a,name=vm]", "t::R[a,name=web]"}));
}

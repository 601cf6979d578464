// Unit tests for the compile service's pure part: the queue merging rule (orchestrator.md §11). Its cron
// (`auto_full_compile`) is the orchestrator's one parser, tested in CronTest.cpp.
#include "compile/Merge.h"

#include <gtest/gtest.h>

using namespace inm::compile;

namespace {

QueuedCompile req(const char* id, bool doExport = true, const char* vars = "{}", bool partial = false,
                  bool force = false, const char* env = "e1") {
  QueuedCompile q;
  q.id = id, q.environment = env, q.envVars = vars, q.doExport = doExport, q.partial = partial,
  q.forceUpdate = force;
  return q;
}

} // namespace

TEST(CompileMerge, HeadAbsorbsEqualRequests) {
  std::vector<QueuedCompile> q = {req("a"), req("b"), req("c")};
  Batch b = planBatch(q);
  EXPECT_EQ(b.head, 0u);
  EXPECT_EQ(b.absorbed, (std::vector<size_t>{1, 2}));
  EXPECT_FALSE(b.forceUpdate);
}

TEST(CompileMerge, DifferentExportVarsOrPartialStayQueued) {
  std::vector<QueuedCompile> q = {req("a"),
                                  req("b", false),
                                  req("c", true, "{\"X\":\"1\"}"),
                                  req("d", true, "{}", true),
                                  req("e", true, "{}", false, false, "e2"),
                                  req("f")};
  Batch b = planBatch(q);
  EXPECT_EQ(b.absorbed, (std::vector<size_t>{5}));
}

TEST(CompileMerge, ForceUpdateIfAnyAsked) {
  std::vector<QueuedCompile> q = {req("a"), req("b", true, "{}", false, true)};
  EXPECT_TRUE(planBatch(q).forceUpdate);
  // A request that is not absorbed does not make the run pull.
  std::vector<QueuedCompile> q2 = {req("a"), req("b", false, "{}", false, true)};
  EXPECT_FALSE(planBatch(q2).forceUpdate);
}

TEST(CompileMerge, SingleRequest) {
  std::vector<QueuedCompile> q = {req("a", true, "{}", false, true)};
  Batch b = planBatch(q);
  EXPECT_TRUE(b.absorbed.empty());
  EXPECT_TRUE(b.forceUpdate);
}

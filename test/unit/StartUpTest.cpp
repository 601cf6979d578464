// The verb detection shared by the driver's dispatch and the start-up step (tools/StartUp.h): both must agree
// on which verb a command line names, or the allocator would be chosen for the wrong process.
#include "StartUp.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace inm::tools {
namespace {

using Args = std::vector<std::string>;

TEST(StartUpTest, FindsTheFirstNonOptionArgument) {
  VerbCall c = findVerb(Args{"scheduler", "--environment", "x"});
  EXPECT_EQ(c.name, "scheduler");
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.verbose, 0);
  EXPECT_TRUE(c.globalConfig.empty());
}

TEST(StartUpTest, SkipsVerboseAndGlobalConfigFlags) {
  VerbCall c = findVerb(Args{"-vv", "-c", "a.cfg", "-v", "--config", "b.cfg", "executor", "-c", "own.cfg"});
  EXPECT_EQ(c.name, "executor");
  EXPECT_EQ(c.index, 6u);
  EXPECT_EQ(c.verbose, 3);
  EXPECT_EQ(c.globalConfig, (Args{"-c", "a.cfg", "-c", "b.cfg"}));
}

TEST(StartUpTest, AnOtherOptionFirstMeansNoVerb) {
  EXPECT_EQ(findVerb(Args{"--help", "scheduler"}).name, "");
  EXPECT_EQ(findVerb(Args{"-c"}).name, ""); // a config flag without its file
  EXPECT_EQ(findVerb(Args{""}).name, "");
  EXPECT_EQ(findVerb(Args{}).name, "");
  // The config file's name is never taken for the verb.
  EXPECT_EQ(findVerb(Args{"-c", "scheduler", "compile"}).name, "compile");
}

TEST(StartUpTest, TheCompilersArgumentsComeBackAsTheyAre) {
  // A project directory is not a verb; the caller checks the name against its verb table.
  VerbCall c = findVerb(Args{"-v", "myproject"});
  EXPECT_EQ(c.name, "myproject");
  EXPECT_EQ(c.verbose, 1);
}

TEST(StartUpTest, PlanTakesTheVerbOnlyFromTheInmantaProgram) {
  std::string inmanta = "/usr/bin/inmanta", compile = "/usr/bin/inmanta-compile", verb = "executor",
              flag = "-v";
  char* a[] = {inmanta.data(), flag.data(), verb.data()};
  StartUpPlan p = planStartUp(3, a);
  EXPECT_EQ(p.verb, "executor");
  char* b[] = {compile.data(), verb.data()};
  StartUpPlan q = planStartUp(2, b);
  EXPECT_EQ(q.verb, "");
  EXPECT_FALSE(q.fastAllocator);
  std::string server = "server";
  char* c[] = {inmanta.data(), server.data()};
  EXPECT_FALSE(planStartUp(2, c).fastAllocator); // only the scheduler and the executor get tcmalloc
}

} // namespace
} // namespace inm::tools

// Unit tests for the compile service's pure parts: the queue merging rule (orchestrator.md §11) and the cron
// parser used by `auto_full_compile`.
#include "compile/Cron.h"
#include "compile/Merge.h"

#include <gtest/gtest.h>

#include <ctime>

using namespace inm::compile;

namespace {

QueuedCompile req(const char* id, bool doExport = true, const char* vars = "{}", bool partial = false,
                  bool force = false, const char* env = "e1") {
  QueuedCompile q;
  q.id = id, q.environment = env, q.envVars = vars, q.doExport = doExport, q.partial = partial, q.forceUpdate = force;
  return q;
}

Cron::TimePoint at(int y, int mo, int d, int h, int mi, int s) {
  std::tm tm{};
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string fmt(std::optional<Cron::TimePoint> t) {
  if (!t) return "none";
  std::time_t tt = std::chrono::system_clock::to_time_t(*t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

Cron cron(const char* e) {
  auto c = Cron::parse(e);
  EXPECT_TRUE(bool(c)) << (c ? "" : llvm::toString(c.takeError()));
  return std::move(*c);
}

std::string parseError(const char* e) {
  auto c = Cron::parse(e);
  if (c) return "parsed";
  return llvm::toString(c.takeError());
}

}  // namespace

TEST(CompileMerge, HeadAbsorbsEqualRequests) {
  std::vector<QueuedCompile> q = {req("a"), req("b"), req("c")};
  Batch b = planBatch(q);
  EXPECT_EQ(b.head, 0u);
  EXPECT_EQ(b.absorbed, (std::vector<size_t>{1, 2}));
  EXPECT_FALSE(b.forceUpdate);
}

TEST(CompileMerge, DifferentExportVarsOrPartialStayQueued) {
  std::vector<QueuedCompile> q = {req("a"), req("b", false), req("c", true, "{\"X\":\"1\"}"), req("d", true, "{}", true),
                                  req("e", true, "{}", false, false, "e2"), req("f")};
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

TEST(Cron, EveryMinute) {
  EXPECT_EQ(fmt(cron("* * * * *").next(at(2024, 1, 1, 10, 0, 0))), "2024-01-01 10:01:00");
  EXPECT_EQ(fmt(cron("* * * * *").next(at(2024, 1, 1, 10, 0, 30))), "2024-01-01 10:01:00");
}

TEST(Cron, SecondsFieldLast) {
  EXPECT_EQ(fmt(cron("* * * * * */2").next(at(2024, 1, 1, 10, 0, 1))), "2024-01-01 10:00:02");
  EXPECT_EQ(fmt(cron("* * * * * 30").next(at(2024, 1, 1, 10, 0, 30))), "2024-01-01 10:01:30");
  EXPECT_EQ(fmt(cron("* * * * * 59").next(at(2024, 12, 31, 23, 59, 59))), "2025-01-01 00:00:59");
}

TEST(Cron, ListsRangesStepsNames) {
  Cron c = cron("0,30 9-17/4 * jan-mar mon-fri");
  // 2024-01-06 is a Saturday: the next weekday is Monday the 8th, at 9:00.
  EXPECT_EQ(fmt(c.next(at(2024, 1, 6, 12, 0, 0))), "2024-01-08 09:00:00");
  EXPECT_EQ(fmt(c.next(at(2024, 1, 8, 9, 0, 0))), "2024-01-08 09:30:00");
  EXPECT_EQ(fmt(c.next(at(2024, 1, 8, 9, 30, 0))), "2024-01-08 13:00:00");
  EXPECT_EQ(fmt(c.next(at(2024, 3, 29, 17, 30, 0))), "2025-01-01 09:00:00");
}

TEST(Cron, ShorthandsAndRollover) {
  EXPECT_EQ(fmt(cron("@hourly").next(at(2024, 2, 28, 23, 59, 59))), "2024-02-29 00:00:00");
  EXPECT_EQ(fmt(cron("@daily").next(at(2023, 12, 31, 0, 0, 0))), "2024-01-01 00:00:00");
  EXPECT_EQ(fmt(cron("@monthly").next(at(2024, 1, 31, 5, 0, 0))), "2024-02-01 00:00:00");
  EXPECT_EQ(fmt(cron("0 0 29 2 *").next(at(2024, 3, 1, 0, 0, 0))), "2028-02-29 00:00:00");
  EXPECT_EQ(fmt(cron("*/15 * * * *").next(at(2024, 1, 1, 10, 50, 0))), "2024-01-01 11:00:00");
}

TEST(Cron, DayOfMonthOrWeekday) {
  // Both restricted: either matches (1st of the month or a Sunday). 2024-01-02 is a Tuesday.
  EXPECT_EQ(fmt(cron("0 0 1 * sun").next(at(2024, 1, 2, 0, 0, 0))), "2024-01-07 00:00:00");
  EXPECT_EQ(fmt(cron("0 0 * * 7").next(at(2024, 1, 2, 0, 0, 0))), "2024-01-07 00:00:00");
}

TEST(Cron, ImpossibleDateHasNoNext) { EXPECT_EQ(fmt(cron("0 0 30 2 *").next(at(2024, 1, 1, 0, 0, 0))), "none"); }

TEST(Cron, Errors) {
  EXPECT_EQ(parseError("* * *"), "cron expression '* * *' has 3 fields; expected 5 (min hour day month weekday) or 6 (seconds last)");
  EXPECT_EQ(parseError("61 * * * *"), "cron minute field '61': out of range 0-59");
  EXPECT_EQ(parseError("* * * foo *"), "cron month field 'foo': 'foo' is not a value");
  EXPECT_EQ(parseError("*/0 * * * *"), "cron minute field '*/0': the step must be a positive number");
  EXPECT_EQ(parseError("5-1 * * * *"), "cron minute field '5-1': the range is reversed");
  EXPECT_EQ(parseError("@often"), "cron: unknown shorthand '@often'");
}

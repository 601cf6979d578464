// Unit tests for the orchestrator's cron parser and timer settings (orchestrator.md §6.7, §10): one parser
// for the scheduler's timers and the compile service's auto_full_compile.
#include "cron/Cron.h"

#include <gtest/gtest.h>

#include <ctime>

using namespace inm::cron;

namespace {

TimePoint at(int y, int mo, int d, int h, int mi, int s) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

TimePoint next(const std::string& expr, TimePoint after) {
  auto c = CronSpec::parse(expr);
  EXPECT_TRUE(bool(c)) << (c ? "" : llvm::toString(c.takeError()));
  auto n = c->next(after);
  EXPECT_TRUE(n.has_value());
  return n.value_or(TimePoint{});
}

} // namespace

TEST(CronTest, FiveFieldsStartAtSecondZero) {
  EXPECT_EQ(next("*/15 * * * *", at(2026, 1, 1, 10, 7, 30)), at(2026, 1, 1, 10, 15, 0));
  EXPECT_EQ(next("0 3 * * *", at(2026, 1, 1, 3, 0, 0)), at(2026, 1, 2, 3, 0, 0)); // strictly after
}

TEST(CronTest, SixFieldsHaveSecondsFirst) {
  EXPECT_EQ(next("*/10 * * * * *", at(2026, 5, 5, 5, 5, 5)), at(2026, 5, 5, 5, 5, 10));
  EXPECT_EQ(next("30 0 12 * * *", at(2026, 5, 5, 13, 0, 0)), at(2026, 5, 6, 12, 0, 30));
}

TEST(CronTest, NamesRangesListsAndWeekdays) {
  // Mondays and Fridays at 09:00: 2026-01-01 is a Thursday.
  EXPECT_EQ(next("0 9 * * mon,fri", at(2026, 1, 1, 0, 0, 0)), at(2026, 1, 2, 9, 0, 0));
  EXPECT_EQ(next("0 9 * * 1-1", at(2026, 1, 2, 10, 0, 0)), at(2026, 1, 5, 9, 0, 0));
  EXPECT_EQ(next("0 0 1 feb *", at(2026, 3, 1, 0, 0, 0)), at(2027, 2, 1, 0, 0, 0));
  EXPECT_EQ(next("0 0 * * 7", at(2026, 1, 1, 0, 0, 0)), at(2026, 1, 4, 0, 0, 0)); // 7 = Sunday
}

TEST(CronTest, DomAndDowBothRestrictedMeansEither) {
  // The 13th or any Friday: from Jan 3 2026 (Sat) the next is Fri Jan 9.
  EXPECT_EQ(next("0 0 13 * fri", at(2026, 1, 3, 0, 0, 0)), at(2026, 1, 9, 0, 0, 0));
}

TEST(CronTest, LeapDayAndYearField) {
  EXPECT_EQ(next("0 0 29 2 *", at(2026, 1, 1, 0, 0, 0)), at(2028, 2, 29, 0, 0, 0));
  EXPECT_EQ(next("0 0 0 1 1 * 2030", at(2026, 1, 1, 0, 0, 0)), at(2030, 1, 1, 0, 0, 0));
  auto c = CronSpec::parse("0 0 0 1 1 * 2020");
  ASSERT_TRUE(bool(c));
  EXPECT_FALSE(c->next(at(2026, 1, 1, 0, 0, 0)).has_value());
}

TEST(CronTest, ErrorsNameTheField) {
  auto bad = [](const std::string& e) {
    auto c = CronSpec::parse(e);
    EXPECT_FALSE(bool(c)) << e;
    return c ? std::string() : llvm::toString(c.takeError());
  };
  EXPECT_NE(bad("61 * * * *").find("minute"), std::string::npos);
  EXPECT_NE(bad("* 24 * * *").find("hour"), std::string::npos);
  EXPECT_NE(bad("* * * foo *").find("month"), std::string::npos);
  EXPECT_NE(bad("*/0 * * * *").find("step"), std::string::npos);
  EXPECT_NE(bad("* * *").find("3 fields"), std::string::npos);
}

TEST(CronTest, TimerSettingIntegerOrCron) {
  auto a = TimerSetting::parse("autostart_agent_deploy_interval", "600");
  ASSERT_TRUE(bool(a));
  EXPECT_EQ(a->seconds, 600);
  EXPECT_FALSE(a->cron);
  auto z = TimerSetting::parse("x", "0");
  ASSERT_TRUE(bool(z));
  EXPECT_TRUE(z->off());
  auto c = TimerSetting::parse("x", "*/5 * * * *");
  ASSERT_TRUE(bool(c));
  EXPECT_TRUE(c->cron.has_value());
  auto e = TimerSetting::parse("autostart_agent_repair_interval", "every day");
  ASSERT_FALSE(bool(e));
  EXPECT_NE(llvm::toString(e.takeError()).find("autostart_agent_repair_interval"), std::string::npos);
}

TEST(CronTest, Shorthands) {
  auto hourly = CronSpec::parse("@hourly");
  ASSERT_TRUE(bool(hourly));
  EXPECT_EQ(hourly->next(at(2026, 1, 1, 10, 30, 0)), at(2026, 1, 1, 11, 0, 0));
  auto daily = CronSpec::parse("@daily");
  ASSERT_TRUE(bool(daily));
  EXPECT_EQ(daily->next(at(2026, 1, 1, 10, 30, 0)), at(2026, 1, 2, 0, 0, 0));
  auto bad = CronSpec::parse("@sometimes");
  ASSERT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

// Cron expressions of the orchestrator (orchestrator.md §6.7, §10): the scheduler's timer settings, where a
// value is an integer number of seconds (per-resource timer; 0 = off) or a cron expression in UTC,
// `[sec] min hour dom month dow [year]` (a global tick), and the compile service's `auto_full_compile`. One
// parser for both, so an environment's settings follow one convention.
// Pure code. Invariant: CronSpec::next(t) is the first matching instant strictly after t, or nullopt if none
// exists within the searched range.
#pragma once

#include <llvm/Support/Error.h>

#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace inm::cron {

using TimePoint = std::chrono::system_clock::time_point;

/// A parsed cron expression.
class CronSpec {
 public:
  /// Parses 5 fields (min hour dom month dow), 6 (sec first) or 7 (sec first, year last), or a shorthand
  /// (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly). Fields take `*`, `n`,
  /// `a-b`, `*/s`, `a-b/s`, `n/s` and comma lists; months and weekdays also by English 3-letter names;
  /// weekday 0 and 7 are Sunday. Errors name the field and the offending text.
  static llvm::Expected<CronSpec> parse(const std::string& text);
  /// The first matching second strictly after `after` (UTC), nullopt if none within ~5 years.
  std::optional<TimePoint> next(TimePoint after) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::bitset<60> sec_, min_;
  std::bitset<24> hour_;
  std::bitset<32> dom_;   // 1..31
  std::bitset<13> month_; // 1..12
  std::bitset<7> dow_;    // 0..6, Sunday = 0
  bool domStar_ = true, dowStar_ = true;
  int yearMin_ = 0, yearMax_ = 9999;
  std::bitset<200> years_; // 1970 + i, only meaningful when yearRestricted_
  bool yearRestricted_ = false;
};

/// A timer setting: off, every N seconds per resource, or a cron tick.
struct TimerSetting {
  int64_t seconds = 0;          ///< > 0: per-resource interval
  std::optional<CronSpec> cron; ///< set: global tick
  bool off() const { return seconds <= 0 && !cron; }
  /// Parses a setting value: digits = seconds, anything else cron; errors name the setting.
  static llvm::Expected<TimerSetting> parse(const std::string& name, const std::string& value);
};

} // namespace inm::cron

// A cron expression parser for the `auto_full_compile` environment setting (orchestrator.md §10): five fields
// (minute hour day-of-month month day-of-week) or six with seconds last (the reference's croniter convention),
// `*`, lists, ranges, `/step`, month and weekday names, and the @hourly/@daily/@weekly/@monthly/@yearly
// shorthands. Pure code with no I/O. Invariant: a parsed Cron only holds in-range values, so next() always
// terminates (it gives up after a bounded search and returns nullopt for impossible dates such as Feb 30).
#pragma once

#include <llvm/Support/Error.h>

#include <bitset>
#include <chrono>
#include <optional>
#include <string>

namespace inm::compile {

/// One parsed cron schedule; times are interpreted in UTC.
class Cron {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  /// Parses `expr`; an error names the offending field and value.
  static llvm::Expected<Cron> parse(const std::string& expr);

  /// The first matching time strictly after `after` (whole seconds), or nullopt if none within 5 years.
  std::optional<TimePoint> next(TimePoint after) const;

 private:
  std::bitset<60> seconds_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;      // 1..31
  std::bitset<13> months_;    // 1..12
  std::bitset<7> weekdays_;   // 0 = Sunday
  bool dayRestricted_ = false;      // day-of-month field was not `*`
  bool weekdayRestricted_ = false;  // day-of-week field was not `*`
};

}  // namespace inm::compile

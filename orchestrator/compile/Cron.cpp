// Cron parsing and next-fire computation (see include/compile/Cron.h). A field is parsed into a bitset of the
// values it allows; next() walks forward field by field (month, day, hour, minute, second) and resets the
// smaller fields whenever a larger one advances, so each step either matches or moves time forward.
#include "compile/Cron.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/SmallVector.h>

#include <ctime>
#include <vector>

namespace inm::compile {
namespace {

llvm::Error fieldError(const char* field, llvm::StringRef value, const std::string& why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "cron %s field '%s': %s", field,
                                 value.str().c_str(), why.c_str());
}

/// Parses a number or (for months and weekdays) a three-letter name.
bool parseValue(llvm::StringRef s, const char* const* names, int nameBase, int& out) {
  if (names)
    for (int i = 0; names[i]; ++i)
      if (s.equals_insensitive(names[i])) { out = i + nameBase; return true; }
  unsigned v = 0;
  if (s.empty() || s.getAsInteger(10, v)) return false;
  out = int(v);
  return true;
}

const char* const kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", nullptr};
const char* const kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", nullptr};

/// Parses one field into the allowed values in [lo, hi]; `*` sets `star`.
template <size_t N>
llvm::Error parseField(const char* field, llvm::StringRef text, int lo, int hi, const char* const* names,
                       int nameBase, std::bitset<N>& bits, bool* star = nullptr) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, ',');
  if (star) *star = text == "*" || text == "?";
  for (llvm::StringRef part : parts) {
    int step = 1;
    auto [range, stepText] = part.split('/');
    if (part.contains('/')) {
      unsigned s = 0;
      if (stepText.getAsInteger(10, s) || s == 0) return fieldError(field, part, "the step must be a positive number");
      step = int(s);
    }
    int from = lo, to = hi;
    if (range != "*" && range != "?") {
      auto [a, b] = range.split('-');
      if (!parseValue(a, names, nameBase, from)) return fieldError(field, part, "'" + a.str() + "' is not a value");
      to = from;
      if (range.contains('-') && !parseValue(b, names, nameBase, to))
        return fieldError(field, part, "'" + b.str() + "' is not a value");
      if (part.contains('/') && !range.contains('-')) to = hi;  // `5/15` means 5, 20, 35, 50
    }
    if (field == llvm::StringRef("day-of-week")) {  // 7 is Sunday too
      if (range == "*" || range == "?") to = 6;
      if (from == 7) from = 0;
      if (to == 7 && from > 0) to = 6, bits.set(0);
      if (to == 7) to = 0;
    }
    if (from < lo || from > hi || to < lo || to > hi)
      return fieldError(field, part, "out of range " + std::to_string(lo) + "-" + std::to_string(hi));
    if (from > to) return fieldError(field, part, "the range is reversed");
    for (int v = from; v <= to; v += step) bits.set(size_t(v));
  }
  return llvm::Error::success();
}

int daysInMonth(int year, int month) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

llvm::Expected<Cron> Cron::parse(const std::string& exprIn) {
  llvm::StringRef expr = llvm::StringRef(exprIn).trim();
  std::string expanded;
  if (expr.startswith("@")) {
    if (expr == "@yearly" || expr == "@annually") expanded = "0 0 1 1 *";
    else if (expr == "@monthly") expanded = "0 0 1 * *";
    else if (expr == "@weekly") expanded = "0 0 * * 0";
    else if (expr == "@daily" || expr == "@midnight") expanded = "0 0 * * *";
    else if (expr == "@hourly") expanded = "0 * * * *";
    else
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "cron: unknown shorthand '%s'", expr.str().c_str());
    expr = expanded;
  }
  llvm::SmallVector<llvm::StringRef, 6> fields;
  expr.split(fields, ' ', -1, false);
  if (fields.size() != 5 && fields.size() != 6)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cron expression '%s' has %zu fields; expected 5 (min hour day month weekday) "
                                   "or 6 (seconds last)", exprIn.c_str(), fields.size());
  Cron c;
  bool dayStar = false, weekdayStar = false;
  if (auto e = parseField("minute", fields[0], 0, 59, nullptr, 0, c.minutes_)) return std::move(e);
  if (auto e = parseField("hour", fields[1], 0, 23, nullptr, 0, c.hours_)) return std::move(e);
  if (auto e = parseField("day-of-month", fields[2], 1, 31, nullptr, 0, c.days_, &dayStar)) return std::move(e);
  if (auto e = parseField("month", fields[3], 1, 12, kMonthNames, 1, c.months_)) return std::move(e);
  if (auto e = parseField("day-of-week", fields[4], 0, 7, kDayNames, 0, c.weekdays_, &weekdayStar)) return std::move(e);
  if (fields.size() == 6) {
    if (auto e = parseField("second", fields[5], 0, 59, nullptr, 0, c.seconds_)) return std::move(e);
  } else {
    c.seconds_.set(0);
  }
  c.dayRestricted_ = !dayStar;
  c.weekdayRestricted_ = !weekdayStar;
  return c;
}

std::optional<Cron::TimePoint> Cron::next(TimePoint after) const {
  std::time_t t = std::chrono::system_clock::to_time_t(after) + 1;
  std::tm tm{};
  gmtime_r(&t, &tm);
  int year = tm.tm_year + 1900, month = tm.tm_mon + 1, day = tm.tm_mday, hour = tm.tm_hour, minute = tm.tm_min,
      second = tm.tm_sec;
  auto weekday = [&](int y, int m, int d) {  // Sakamoto's method, 0 = Sunday
    static const int kT[] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
    if (m < 3) y -= 1;
    return (y + y / 4 - y / 100 + y / 400 + kT[m - 1] + d) % 7;
  };
  auto dayMatches = [&](int y, int m, int d) {
    bool dom = days_.test(size_t(d)), dow = weekdays_.test(size_t(weekday(y, m, d)));
    if (dayRestricted_ && weekdayRestricted_) return dom || dow;  // classic cron: either restriction matches
    return dom && dow;
  };
  const int endYear = year + 5;
  while (year <= endYear) {
    if (!months_.test(size_t(month))) {
      if (++month > 12) month = 1, ++year;
      day = 1, hour = 0, minute = 0, second = 0;
      continue;
    }
    if (day > daysInMonth(year, month)) {
      if (++month > 12) month = 1, ++year;
      day = 1, hour = 0, minute = 0, second = 0;
      continue;
    }
    if (!dayMatches(year, month, day)) {
      ++day, hour = 0, minute = 0, second = 0;
      continue;
    }
    if (!hours_.test(size_t(hour))) {
      if (++hour > 23) { ++day, hour = 0; }
      minute = 0, second = 0;
      continue;
    }
    if (!minutes_.test(size_t(minute))) {
      if (++minute > 59) { ++hour, minute = 0; if (hour > 23) ++day, hour = 0; }
      second = 0;
      continue;
    }
    if (!seconds_.test(size_t(second))) {
      if (++second > 59) {
        second = 0;
        if (++minute > 59) { minute = 0; if (++hour > 23) hour = 0, ++day; }
      }
      continue;
    }
    std::tm out{};
    out.tm_year = year - 1900, out.tm_mon = month - 1, out.tm_mday = day, out.tm_hour = hour, out.tm_min = minute,
    out.tm_sec = second;
    return std::chrono::system_clock::from_time_t(timegm(&out));
  }
  return std::nullopt;
}

}  // namespace inm::compile

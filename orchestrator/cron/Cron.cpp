// Cron parsing and next-fire computation for the timer settings (see include/cron/Cron.h). The search walks
// forward field by field (month, day, hour, minute, second), jumping to the start of the next unit on a
// mismatch, so it needs at most a few thousand steps for any satisfiable expression.
#include "cron/Cron.h"

#include <cctype>
#include <ctime>
#include <sstream>
#include <vector>

namespace inm::cron {

namespace {

llvm::Error fieldError(const std::string& field, const std::string& text, const std::string& why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "cron field '%s' ('%s'): %s", field.c_str(),
                                 text.c_str(), why.c_str());
}

int nameValue(const std::string& s, const char* const* names, int first) {
  for (int i = 0; names[i]; ++i) {
    std::string n = names[i];
    if (s.size() == 3 && std::tolower(s[0]) == n[0] && std::tolower(s[1]) == n[1] &&
        std::tolower(s[2]) == n[2])
      return first + i;
  }
  return -1;
}

const char* const kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",  "jul",
                               "aug", "sep", "oct", "nov", "dec", nullptr};
const char* const kDays[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", nullptr};

llvm::Expected<int> number(const std::string& field, const std::string& s, const char* const* names,
                           int first) {
  if (s.empty()) return fieldError(field, s, "empty value");
  bool digits = true;
  for (char c : s) digits &= bool(std::isdigit(static_cast<unsigned char>(c)));
  if (digits) {
    if (s.size() > 4) return fieldError(field, s, "number out of range");
    return std::stoi(s);
  }
  if (names) {
    int v = nameValue(s, names, first);
    if (v >= 0) return v;
  }
  return fieldError(field, s, "not a number");
}

// Sets bits [lo, hi] of a field from its text; `offset` maps value -> bit index.
llvm::Error parseField(const std::string& field, const std::string& text, int lo, int hi,
                       const char* const* names, int nameFirst, std::vector<bool>& out, bool* star) {
  out.assign(hi + 1, false);
  if (star) *star = text == "*" || text == "?";
  std::stringstream ss(text);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, ',')) {
    any = true;
    int step = 1;
    std::string range = part;
    if (auto slash = part.find('/'); slash != std::string::npos) {
      auto s = number(field, part.substr(slash + 1), nullptr, 0);
      if (!s) return s.takeError();
      if (*s <= 0) return fieldError(field, part, "step must be positive");
      step = *s;
      range = part.substr(0, slash);
    }
    int a = lo, b = hi;
    if (range != "*" && range != "?") {
      auto dash = range.find('-');
      auto x = number(field, range.substr(0, dash), names, nameFirst);
      if (!x) return x.takeError();
      a = *x;
      if (dash != std::string::npos) {
        auto y = number(field, range.substr(dash + 1), names, nameFirst);
        if (!y) return y.takeError();
        b = *y;
      } else {
        b = part.find('/') != std::string::npos ? hi : a;
      }
    }
    if (a < lo || b > hi || a > b)
      return fieldError(field, part, "out of range " + std::to_string(lo) + "-" + std::to_string(hi));
    for (int v = a; v <= b; v += step) out[v] = true;
  }
  if (!any) return fieldError(field, text, "empty field");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CronSpec> CronSpec::parse(const std::string& text) {
  static const std::pair<const char*, const char*> kShorthands[] = {
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"}};
  std::string expanded = text;
  for (const auto& [name, expr] : kShorthands)
    if (text == name) expanded = expr;
  std::vector<std::string> f;
  std::stringstream ss(expanded);
  for (std::string w; ss >> w;) f.push_back(w);
  if (f.size() < 5 || f.size() > 7)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cron expression '%s' has %zu fields; expected 5 (min hour dom month dow), 6 "
        "(sec first) or 7 (sec first, year last)",
        text.c_str(), f.size());
  if (f.size() == 5) f.insert(f.begin(), "0");
  CronSpec c;
  c.text_ = text;
  std::vector<bool> bits;
  auto copy = [&](auto& set, int lo) {
    for (size_t i = lo; i < bits.size(); ++i)
      if (bits[i]) set.set(i);
  };
  if (auto e = parseField("second", f[0], 0, 59, nullptr, 0, bits, nullptr)) return e;
  copy(c.sec_, 0);
  if (auto e = parseField("minute", f[1], 0, 59, nullptr, 0, bits, nullptr)) return e;
  copy(c.min_, 0);
  if (auto e = parseField("hour", f[2], 0, 23, nullptr, 0, bits, nullptr)) return e;
  copy(c.hour_, 0);
  if (auto e = parseField("day of month", f[3], 1, 31, nullptr, 0, bits, &c.domStar_)) return e;
  copy(c.dom_, 1);
  if (auto e = parseField("month", f[4], 1, 12, kMonths, 1, bits, nullptr)) return e;
  copy(c.month_, 1);
  if (auto e = parseField("day of week", f[5], 0, 7, kDays, 0, bits, &c.dowStar_)) return e;
  for (int i = 0; i <= 7; ++i)
    if (bits[i]) c.dow_.set(i % 7);
  if (f.size() == 7) {
    if (auto e = parseField("year", f[6], 1970, 2169, nullptr, 0, bits, nullptr)) return e;
    c.yearRestricted_ = f[6] != "*";
    for (int y = 1970; y <= 2169; ++y)
      if (bits[y]) c.years_.set(y - 1970);
  }
  return c;
}

std::optional<TimePoint> CronSpec::next(TimePoint after) const {
  using namespace std::chrono;
  time_t t = system_clock::to_time_t(after) + 1;
  for (int steps = 0; steps < 400000; ++steps) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    int year = tm.tm_year + 1900;
    if (year > 2169) return std::nullopt;
    if (yearRestricted_ && (year < 1970 || !years_.test(year - 1970))) {
      std::tm n{};
      n.tm_year = tm.tm_year + 1;
      n.tm_mday = 1;
      t = timegm(&n);
      continue;
    }
    if (!month_.test(tm.tm_mon + 1)) {
      std::tm n{};
      n.tm_year = tm.tm_year;
      n.tm_mon = tm.tm_mon + 1;
      n.tm_mday = 1;
      t = timegm(&n);
      continue;
    }
    bool domOk = dom_.test(tm.tm_mday), dowOk = dow_.test(tm.tm_wday);
    // Classic cron: when both day fields are restricted, either may match.
    bool dayOk = (domStar_ || dowStar_) ? (domOk && dowOk) : (domOk || dowOk);
    if (!dayOk) {
      std::tm n{};
      n.tm_year = tm.tm_year;
      n.tm_mon = tm.tm_mon;
      n.tm_mday = tm.tm_mday + 1;
      t = timegm(&n);
      continue;
    }
    if (!hour_.test(tm.tm_hour)) {
      t += 3600 - tm.tm_min * 60 - tm.tm_sec;
      continue;
    }
    if (!min_.test(tm.tm_min)) {
      t += 60 - tm.tm_sec;
      continue;
    }
    if (!sec_.test(tm.tm_sec)) {
      t += 1;
      continue;
    }
    return system_clock::from_time_t(t);
  }
  return std::nullopt;
}

llvm::Expected<TimerSetting> TimerSetting::parse(const std::string& name, const std::string& value) {
  TimerSetting s;
  std::string v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  bool digits = !v.empty();
  for (char c : v) digits &= bool(std::isdigit(static_cast<unsigned char>(c)));
  if (digits) {
    if (v.size() > 12)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "setting %s: interval '%s' is too large",
                                     name.c_str(), v.c_str());
    s.seconds = std::stoll(v);
    return s;
  }
  auto c = CronSpec::parse(v);
  if (!c)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "setting %s: %s", name.c_str(),
                                   llvm::toString(c.takeError()).c_str());
  s.cron = std::move(*c);
  return s;
}

} // namespace inm::cron

// Structured log lines (see Log.h).
#include "service/Log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <unistd.h>

namespace inm::service {

void logLine(const char* level, const std::string& event,
             std::initializer_list<std::pair<const char*, std::string>> fields) {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[96]; // room for any int in each field: GCC checks the worst case
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  std::string line = std::string(ts) + " " + level + " " + event;
  for (const auto& [k, v] : fields) {
    line += ' ';
    line += k;
    line += '=';
    if (v.find_first_of(" \"=") != std::string::npos || v.empty()) {
      line += '"';
      for (char c : v) {
        if (c == '"' || c == '\\') line += '\\';
        line += c == '\n' ? ' ' : c;
      }
      line += '"';
    } else {
      line += v;
    }
  }
  line += '\n';
  (void)!::write(2, line.data(), line.size());
}

} // namespace inm::service

// Per-phase figures of one compile/export for the driver's statistics option (INM_EVAL_STATS=1): after each
// phase, one stderr line with its wall and CPU time (user + sys), the process's resident memory now and at
// its peak during that phase, and the page faults taken in it. The peak is per phase because each phase
// starts by resetting the kernel's high-water mark (/proc/self/clear_refs "5"), so the line whose peak is
// highest is where the process peak is. Private to driver/; the stages report their inner phases through a
// callback the driver hands them.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace inm::driver {

class PhaseStats {
 public:
  explicit PhaseStats(bool on) : on_(on) {
    if (on_) begin();
  }
  bool on() const { return on_; }

  /// Ends the current phase (prints its line) and starts the next one.
  void end(llvm::StringRef name) {
    if (!on_) return;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    double user = 0, sys = 0;
    long faults = 0;
    cpuNow(user, sys, faults);
    long rss = 0, hwm = 0;
    memNow(rss, hwm);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "phase %-16s wall %.3f s, cpu %.3f s (user %.3f, sys %.3f), rss %ld MiB, peak %ld MiB, "
                  "faults %ld\n",
                  name.str().c_str(), wall, user - user0_ + sys - sys0_, user - user0_, sys - sys0_,
                  rss >> 10, hwm >> 10, faults - faults0_);
    llvm::errs() << buf;
    begin();
  }

 private:
  void begin() {
    if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) { // 5: reset the peak resident size
      std::fputs("5", f);
      std::fclose(f);
    }
    wall0_ = std::chrono::steady_clock::now();
    cpuNow(user0_, sys0_, faults0_);
  }
  /// CPU seconds and page faults (minor: a fresh page zeroed or mapped; each costs more than its CPU share
  /// suggests on a virtual machine, where the host backs the page on its first touch) of the process.
  static void cpuNow(double& user, double& sys, long& faults) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    faults = ru.ru_minflt + ru.ru_majflt;
    user = double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) / 1e6;
    sys = double(ru.ru_stime.tv_sec) + double(ru.ru_stime.tv_usec) / 1e6;
  }
  /// Resident and peak resident size in KiB (/proc/self/status VmRSS, VmHWM).
  static void memNow(long& rss, long& hwm) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return;
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, "VmRSS:", 6) == 0) rss = std::atol(line + 6);
      if (std::strncmp(line, "VmHWM:", 6) == 0) hwm = std::atol(line + 6);
    }
    std::fclose(f);
  }

  bool on_;
  std::chrono::steady_clock::time_point wall0_;
  double user0_ = 0, sys0_ = 0;
  long faults0_ = 0;
};

} // namespace inm::driver

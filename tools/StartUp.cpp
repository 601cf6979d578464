// The start-up step (StartUp.h). What a process can only take at exec time, prepared once:
// - Transparent huge pages for malloc: the compiler allocates a few hundred MiB of small-object arrays
//   quickly; on 4 KiB pages much of its time goes to page faults. glibc (>= 2.35) uses THP when the tunable
//   glibc.malloc.hugetlb=1 is set (100k-resource bench project: 168k -> 8k page faults, user time halved).
//   INM_NO_HUGEPAGES=1 leaves the allocator alone.
// - A 1 GiB stack limit: parsing, lowering and evaluation recurse along the nesting of expressions (deeply
//   nested brackets, long `a + b + c …` chains); with the main thread's stack allowed to grow that far (only
//   touched pages become resident) such models compile instead of overflowing. (A helper thread with a big
//   stack would do too, but a second thread makes every malloc take a lock: ~7% slower.) INM_REEXEC_DONE=1
//   from the caller leaves these two alone (the robustness suites run under an 8 MiB stack that way).
// - tcmalloc for the scheduler and executor verbs only: with glibc malloc, malloc, free, malloc_consolidate
//   and unlink_chunk were a quarter of the scheduler's CPU at 100k resources; linked into the whole binary,
//   tcmalloc raised the compile+export peak (bench/deploy/RESULTS.md). The executor also runs with
//   TCMALLOC_AGGRESSIVE_DECOMMIT: its worker threads each keep a cache of freed memory and tcmalloc keeps
//   freed spans mapped (+5 MiB of peak against glibc at 100k); returning spans at once brings it back to
//   glibc's level at no measurable CPU cost there. The scheduler, whose peak is live data, would pay CPU for
//   it. A caller's own setting wins.
// One exec covers all three; the marker INM_STARTUP_EXEC exists only across that exec. The caller's
// GLIBC_TUNABLES and (for the executor and agent verbs, whose children are handler commands) its stack soft
// limit are set back in the re-executed image, so other programs started from it do not inherit them (glibc
// would reserve 1 GiB for every thread stack there); they travel across the exec in INM_STARTUP_TUNABLES and
// INM_STARTUP_STACK.
#include "StartUp.h"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace inm::tools {

namespace {

/// Set only across our own exec; the re-executed image removes it first.
constexpr const char* kExecMarker = "INM_STARTUP_EXEC";
/// Set across the exec when we preload: "-" when the caller had no LD_PRELOAD, else "=" followed by its
/// value.
constexpr const char* kPreloadMarker = "INM_ALLOCATOR_PRELOADED";
/// Set across the exec when we (not the caller) set kDecommit, so the restore removes it again.
constexpr const char* kDecommitMarker = "INM_ALLOCATOR_DECOMMIT";
/// tcmalloc's switch to return freed spans to the system at once instead of keeping them for reuse.
constexpr const char* kDecommit = "TCMALLOC_AGGRESSIVE_DECOMMIT";

/// What the caller's children must see again: its LD_PRELOAD and decommit setting.
void restoreAllocator() {
  if (const char* saved = std::getenv(kPreloadMarker)) {
    std::string value = saved;
    if (value.empty() || value == "-")
      unsetenv("LD_PRELOAD");
    else
      setenv("LD_PRELOAD", value.c_str() + 1, 1);
    unsetenv(kPreloadMarker);
  }
  if (std::getenv(kDecommitMarker)) {
    unsetenv(kDecommit);
    unsetenv(kDecommitMarker);
  }
}

/// Set across the exec when we set GLIBC_TUNABLES: "-" when the caller had none, else "=" followed by its
/// value.
constexpr const char* kTunablesMarker = "INM_STARTUP_TUNABLES";
/// Set across the exec when we raised the stack soft limit: the caller's soft limit in bytes.
constexpr const char* kStackMarker = "INM_STARTUP_STACK";

/// The caller's GLIBC_TUNABLES for our children: glibc read ours when this image started, the environment
/// only reaches children.
void restoreTunables() {
  if (const char* saved = std::getenv(kTunablesMarker)) {
    std::string value = saved;
    if (value.empty() || value == "-")
      unsetenv("GLIBC_TUNABLES");
    else
      setenv("GLIBC_TUNABLES", value.c_str() + 1, 1);
    unsetenv(kTunablesMarker);
  }
}

/// The caller's stack soft limit, when we (or an `inmanta` process up the chain) raised it. Set back only by
/// verbs whose children are other programs (handler commands), and the marker goes with it; other verbs keep
/// the marker in the environment so that their `inmanta` children (a scheduler's executors) still know the
/// original. glibc sized this image's thread stacks at start-up: only the main thread's growth and the
/// children see the lower limit.
void restoreStack(bool lower) {
  const char* saved = std::getenv(kStackMarker);
  if (!saved || !lower) return;
  char* end = nullptr;
  unsigned long long value = std::strtoull(saved, &end, 10);
  bool valid = end != saved && *end == '\0';
  unsetenv(kStackMarker);
  struct rlimit rl;
  if (valid && getrlimit(RLIMIT_STACK, &rl) == 0 && value < rl.rlim_cur) {
    rl.rlim_cur = rlim_t(value);
    setrlimit(RLIMIT_STACK, &rl);
  }
}

/// Huge pages for malloc and the 1 GiB stack; true when either changed.
bool prepareMemory() {
  if (std::getenv("INM_REEXEC_DONE")) return false;
  bool change = false;
  if (!std::getenv("INM_NO_HUGEPAGES")) {
    const char* old = std::getenv("GLIBC_TUNABLES");
    if (!old || std::string(old).find("glibc.malloc.hugetlb") == std::string::npos) {
      std::string saved = old ? std::string("=") + old : std::string("-");
      std::string tunables =
          old && *old ? std::string(old) + ":glibc.malloc.hugetlb=1" : "glibc.malloc.hugetlb=1";
      if (setenv(kTunablesMarker, saved.c_str(), 1) == 0) {
        if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) == 0)
          change = true;
        else
          unsetenv(kTunablesMarker);
      }
    }
  }
  const rlim_t want = rlim_t(1) << 30;
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    rlim_t next = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want) ? want : rl.rlim_max;
    if (next > rl.rlim_cur) { // at the hard limit already: nothing to gain, no exec for it
      bool inherited = std::getenv(kStackMarker) != nullptr; // the original of an `inmanta` up the chain
      std::string saved = std::to_string((unsigned long long)rl.rlim_cur);
      rl.rlim_cur = next;
      if (inherited || setenv(kStackMarker, saved.c_str(), 1) == 0) {
        if (setrlimit(RLIMIT_STACK, &rl) == 0)
          change = true;
        else if (!inherited)
          unsetenv(kStackMarker);
      }
    }
  }
  return change;
}

/// tcmalloc in LD_PRELOAD (after nothing, before the caller's own preloads); true when set.
bool prepareAllocator(const StartUpPlan& plan) {
#ifdef INM_TCMALLOC_PATH
  if (!plan.fastAllocator) return false;
  const char* old = std::getenv("LD_PRELOAD");
  std::string saved = old ? std::string("=") + old : std::string("-");
  std::string preload = INM_TCMALLOC_PATH;
  if (old && *old) preload += std::string(":") + old;
  if (setenv(kPreloadMarker, saved.c_str(), 1) != 0 || setenv("LD_PRELOAD", preload.c_str(), 1) != 0) {
    restoreAllocator();
    return false;
  }
  if (plan.decommit && (setenv(kDecommitMarker, "1", 1) != 0 || setenv(kDecommit, "true", 1) != 0)) {
    restoreAllocator();
    return false;
  }
  return true;
#else
  (void)plan;
  return false;
#endif
}

} // namespace

VerbCall findVerb(const std::vector<std::string>& args) {
  VerbCall call;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-v" || a == "-vv" || a == "-vvv" || a == "-vvvv") {
      call.verbose += int(a.size()) - 1;
      continue;
    }
    if ((a == "-c" || a == "--config") && i + 1 < args.size()) {
      call.globalConfig.insert(call.globalConfig.end(), {"-c", args[++i]});
      continue;
    }
    if (a.empty() || a[0] == '-') break;
    call.name = a;
    call.index = i;
    return call;
  }
  return VerbCall{};
}

StartUpPlan planStartUp(int argc, char** argv) {
  StartUpPlan plan;
  if (argc < 1 || !argv[0]) return plan;
  const char* slash = std::strrchr(argv[0], '/');
  if (std::strcmp(slash ? slash + 1 : argv[0], "inmanta") != 0) return plan; // inmanta-compile, -export, -cli
  plan.verb = findVerb(std::vector<std::string>(argv + 1, argv + argc)).name;
  plan.childrenAreCommands = plan.verb == "executor" || plan.verb == "agent";
#ifdef INM_TCMALLOC_PATH
  if ((plan.verb == "scheduler" || plan.verb == "executor") && access(INM_TCMALLOC_PATH, R_OK) == 0) {
    plan.fastAllocator = true;
    plan.decommit = plan.verb == "executor" && !std::getenv(kDecommit);
  }
#endif
  return plan;
}

void prepareProcess(int argc, char** argv) {
  if (std::getenv(kExecMarker)) {
    unsetenv(kExecMarker);
    restoreAllocator();
    restoreTunables();
    restoreStack(planStartUp(argc, argv).childrenAreCommands);
    return;
  }
  StartUpPlan plan = planStartUp(argc, argv);
  bool change = prepareMemory();
  change |= prepareAllocator(plan);
  if (!change || setenv(kExecMarker, "1", 1) != 0) {
    restoreAllocator();
    restoreTunables();
    restoreStack(plan.childrenAreCommands);
    return;
  }
  execv("/proc/self/exe", argv);
  unsetenv(kExecMarker); // exec failed: carry on as we are (with glibc malloc)
  restoreAllocator();
  restoreTunables();
  restoreStack(plan.childrenAreCommands);
}

} // namespace inm::tools

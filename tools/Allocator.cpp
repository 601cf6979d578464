// Preloading tcmalloc for the scheduler and executor verbs (Allocator.h). With glibc malloc, malloc, free,
// malloc_consolidate and unlink_chunk were a quarter of the scheduler's CPU at 100k resources; linked into
// the whole binary instead, tcmalloc raised the compile+export peak (bench/deploy/RESULTS.md), hence per
// verb. The executor also runs with TCMALLOC_AGGRESSIVE_DECOMMIT (its peak, see below).
#include "Allocator.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace inm::tools {

namespace {

/// Set while re-executing: "-" when the caller had no LD_PRELOAD, else "=" followed by its value.
constexpr const char* kMarker = "INM_ALLOCATOR_PRELOADED";
/// Set while re-executing when we (not the caller) set kDecommit, so the restore removes it again.
constexpr const char* kDecommitMarker = "INM_ALLOCATOR_DECOMMIT";
/// tcmalloc's switch to return freed spans to the system at once instead of keeping them for reuse.
constexpr const char* kDecommit = "TCMALLOC_AGGRESSIVE_DECOMMIT";

enum class Verb { Other, Scheduler, Executor };

Verb fastAllocatorVerb(int argc, char** argv) {
  const char* slash = std::strrchr(argv[0], '/');
  if (std::strcmp(slash ? slash + 1 : argv[0], "inmanta") != 0) return Verb::Other;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-v" || a == "-vv" || a == "-vvv" || a == "-vvvv") continue;
    if ((a == "-c" || a == "--config") && i + 1 < argc) {
      ++i;
      continue;
    }
    return a == "scheduler" ? Verb::Scheduler : a == "executor" ? Verb::Executor : Verb::Other;
  }
  return Verb::Other;
}

void restore(const std::string& saved) {
  if (saved.empty() || saved == "-")
    unsetenv("LD_PRELOAD");
  else
    setenv("LD_PRELOAD", saved.c_str() + 1, 1);
  unsetenv(kMarker);
  if (std::getenv(kDecommitMarker)) {
    unsetenv(kDecommit);
    unsetenv(kDecommitMarker);
  }
}

} // namespace

void preloadFastAllocator(int argc, char** argv) {
#ifdef INM_TCMALLOC_PATH
  if (argc < 1) return;
  Verb verb = fastAllocatorVerb(argc, argv);
  if (verb == Verb::Other) return;
  if (const char* saved = std::getenv(kMarker)) {
    restore(saved); // tcmalloc is loaded now; children get the caller's LD_PRELOAD
    return;
  }
  if (access(INM_TCMALLOC_PATH, R_OK) != 0) return;
  const char* old = std::getenv("LD_PRELOAD");
  std::string saved = old ? std::string("=") + old : std::string("-");
  std::string preload = INM_TCMALLOC_PATH;
  if (old && *old) preload += std::string(":") + old;
  if (setenv(kMarker, saved.c_str(), 1) != 0 || setenv("LD_PRELOAD", preload.c_str(), 1) != 0) {
    restore(saved);
    return;
  }
  // The executor's worker threads each keep a cache of freed memory and tcmalloc keeps freed spans mapped:
  // +5 MiB of peak against glibc at 100k resources. Returning spans at once brings it back to glibc's level
  // at no measurable CPU cost there (bench/deploy/RESULTS.md); the scheduler, whose peak is dominated by live
  // data, would pay CPU for it. A caller's own setting wins.
  if (verb == Verb::Executor && !std::getenv(kDecommit)) {
    if (setenv(kDecommitMarker, "1", 1) != 0 || setenv(kDecommit, "true", 1) != 0) {
      restore(saved);
      return;
    }
  }
  execv("/proc/self/exe", argv);
  restore(saved); // exec failed: carry on with glibc malloc
#else
  (void)argc;
  (void)argv;
#endif
}

} // namespace inm::tools

// Preloading tcmalloc for the scheduler and executor verbs (Allocator.h). With glibc malloc, malloc, free,
// malloc_consolidate and unlink_chunk were a quarter of the scheduler's CPU at 100k resources; linked into
// the whole binary instead, tcmalloc raised the compile+export peak (bench/deploy/RESULTS.md), hence per
// verb.
#include "Allocator.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace inm::tools {

namespace {

/// Set while re-executing: "-" when the caller had no LD_PRELOAD, else "=" followed by its value.
constexpr const char* kMarker = "INM_ALLOCATOR_PRELOADED";

bool wantsFastAllocator(int argc, char** argv) {
  const char* slash = std::strrchr(argv[0], '/');
  if (std::strcmp(slash ? slash + 1 : argv[0], "inmanta") != 0) return false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-v" || a == "-vv" || a == "-vvv" || a == "-vvvv") continue;
    if ((a == "-c" || a == "--config") && i + 1 < argc) {
      ++i;
      continue;
    }
    return a == "scheduler" || a == "executor";
  }
  return false;
}

void restore(const std::string& saved) {
  if (saved.empty() || saved == "-")
    unsetenv("LD_PRELOAD");
  else
    setenv("LD_PRELOAD", saved.c_str() + 1, 1);
  unsetenv(kMarker);
}

} // namespace

void preloadFastAllocator(int argc, char** argv) {
#ifdef INM_TCMALLOC_PATH
  if (argc < 1 || !wantsFastAllocator(argc, argv)) return;
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
  execv("/proc/self/exe", argv);
  restore(saved); // exec failed: carry on with glibc malloc
#else
  (void)argc;
  (void)argv;
#endif
}

} // namespace inm::tools

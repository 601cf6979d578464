// The allocator of the scheduler and executor processes (docs/deploy.md "Allocator"). The `inmanta` binary
// serves every verb; only these two hot, allocation-heavy verbs run with tcmalloc, preloaded by re-executing
// themselves once at start, so the compiler, exporter and server keep glibc malloc and their own tuning.
// Invariant: a process re-executes at most once for this (an environment marker), and its children see the
// LD_PRELOAD it was started with, not tcmalloc.
#pragma once

namespace inm::tools {

/// Call at start, after any other start-up re-exec. For `inmanta [-v…] [-c F] scheduler|executor …` in a
/// build that found tcmalloc (and where the library exists), re-executes the process with tcmalloc in
/// LD_PRELOAD; in the re-executed process, restores the caller's LD_PRELOAD. Returns when nothing is to be
/// done, after the restore, or when the exec failed (the process then runs with glibc malloc).
void preloadFastAllocator(int argc, char** argv);

} // namespace inm::tools

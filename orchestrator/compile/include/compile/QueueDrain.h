// `inmanta compile-service-run`'s process (orchestrator/compile): the compile service without the HTTP
// server — recover unfinished runs, purge old reports, optionally queue one request, keep the
// auto_full_compile crons running for a while and return once every queue is idle. The verb's entry
// (tools/CompileServiceMain.cpp) only parses flags. Invariant: it never leaves a run claimed: runs in
// progress are waited for before it returns.
#pragma once

#include "compile/CompileService.h"

#include <optional>

namespace inm::compile {

/// What one drain does besides recovering the queues.
struct DrainOptions {
  std::optional<CompileRequest> request; ///< queued once the service started
  double serveSeconds = 0;               ///< keep running (crons fire) at least this long
  long retention = -1;                   ///< purge reports older than this many seconds; < 0: no purge
};

/// Runs the service on a private io_context and a 2-thread pool until the queues are idle; prints progress
/// (`queued compile <id>`, `idle`) on stdout and failures as `inmanta compile-service-run: …` on stderr.
/// Returns the exit code: 1 when the service could not start or the request was refused, else 0.
int drainQueues(CompileServiceOptions options, const DrainOptions& drain);

} // namespace inm::compile

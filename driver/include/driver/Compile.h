// Running `inmanta compile` / `inmanta export` (library inm_driver): the compiler pipeline loadProject ->
// lower -> passes::run -> evaluate -> exportModel, stopping after the first stage that reports errors, and
// the export's two ends (the artifact file of -j, written atomically, or the push to a server). Output
// contract: std::print output on stdout; diagnostics on stderr in compiler style, followed by the
// reference-style summary (`= COMPILATION FAILURE =`, `Error: … caused by: …`); exit 0 on success, 1 on any
// model error. Invariant: once the pipeline has started, the process ends inside runCompileCommand through
// _exit after flushing its output (the products are never torn down); only --dump-ast returns.
#pragma once

#include "driver/CompileOptions.h"

namespace inm::driver {

/// Installs the process's safety nets (SIGPIPE ignored, the heap limit of --max-memory-mib, one clear line
/// on out of memory) and runs `opts.command` ("compile" or "export"). Returns the exit code (--dump-ast) or
/// does not return.
int runCompileCommand(const CompileOptions& opts);

} // namespace inm::driver

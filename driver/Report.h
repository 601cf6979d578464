// The end of a compile/export run (private to driver/): the diagnostics printed in the chosen format with the
// reference-style failure summary, the --export-compile-data file, the phase-timing helpers of -vvv/-vvvv,
// and the process exit without teardown. Invariant: every path of runCompileCommand that ends the process
// goes through exitNow, so what was written is flushed and a failed write to stdout becomes exit 1.
#pragma once

#include "driver/CompileOptions.h"
#include "support/Diagnostics.h"

#include <chrono>
#include <string>

namespace inm::driver {

/// Resident memory now, in MiB (for the -vvvv phase log).
long rssMiB();

/// Seconds since t0 in fixed notation ("0.123456"): logs are parsed by tools expecting plain decimals.
std::string secondsSince(std::chrono::steady_clock::time_point t0);

/// Prints the diagnostics and, on errors, the reference-style failure summary. Returns the exit code.
int finish(const DiagnosticEngine& diags, const CompileOptions& opts, const char* banner);

/// Ends the process without running destructors: the compiler's stores hold millions of small objects whose
/// teardown costs a tenth of a second at 100k resources and achieves nothing. Everything written is flushed
/// first. A failed write to stdout (closed, a broken pipe, a full disk) turns the exit code into 1 with a
/// message on stderr; a failed write to stderr can only be signalled by the exit code.
[[noreturn]] void exitNow(int rc);

} // namespace inm::driver

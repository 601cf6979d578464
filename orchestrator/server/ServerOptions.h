// The configuration side of the server host (orchestrator/server): the defaults and checks that turn
// [server], [database] and [compiler] options into the options of the compile service, the console directory,
// and the advice for a database error that retrying will not cure. Private to orchestrator/server.
// Invariant: reads only the configuration and the file system; prints nothing but the `inmanta server: `
// line of fail().
#pragma once

#include "api/HttpServer.h"
#include "compile/CompileService.h"
#include "config/Config.h"
#include "store/Store.h"

#include <llvm/Support/Error.h>

#include <string>

namespace inm::server {

/// Prints `inmanta server: <msg>` on stderr; returns 1 (the exit code).
int fail(const std::string& msg);
/// The default console directory: <binary dir>/../share/inmanta/console, else <source tree>/console/dist.
std::string defaultConsoleDir();
/// The compile service's options from the configuration (docs/autonomous.md, "Configuration").
llvm::Error compileOptions(const config::Config& cfg, const store::DbSettings& db,
                           const api::HttpOptions& http, compile::CompileServiceOptions& co);
/// A database error that waiting will not cure (PostgreSQL answered, and refused): the line saying what to
/// do, or "" for transient failures (refused connection, starting up, too many clients), which are retried.
std::string permanentDatabaseError(const std::string& msg, const store::DbSettings& db);

} // namespace inm::server

// `inmanta export` push mode, driver side (private to driver/): the export flags that name a server, merged
// with the configuration (.inmanta, [compiler_rest_transport], [config] environment) into a ready client, the
// plugins' server connection during the compile, and the push of the exported model. The push sequence itself
// is client::pushArtifact (orchestrator/client). Invariant: flags win over files; every failure of the push
// becomes one diagnostic of the export and its exit code (Report.h finish).
#pragma once

#include "client/Push.h"
#include "driver/CompileOptions.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace inm {
class DiagnosticEngine;
namespace runtime {
class Model;
}
namespace pybridge {
struct PythonSetup;
}
} // namespace inm

namespace inm::driver {

/// A configured push: the client (endpoint filled in) and the push options.
struct PushSession {
  std::unique_ptr<client::Client> client;
  client::PushOptions options;
};

/// Builds the session from flags and configuration read relative to `projectDir`. Returns nullptr when no
/// server is configured at all (no -e, no --server_address, no [config] environment, no
/// [compiler_rest_transport] host); an error for bad values or a server without an environment.
llvm::Expected<std::unique_ptr<PushSession>>
openPushSession(const PushFlags& flags, const std::string& projectDir, const std::string& compilerVersion);

/// Opens the push session before the compile and hands its client to the Python bridge; nullptr (the export
/// reports why later) when no server is configured or the configuration is wrong.
std::unique_ptr<PushSession> openPluginServer(const CompileOptions& opts, const std::string& projectDir);

/// `inmanta export` without -j: reserve a version, export into memory, push it (files, code, version,
/// release). `opened` is the session of openPluginServer, if any. Returns the exit code.
int pushExport(const CompileOptions& opts, const std::string& projectDir, const runtime::Model& model,
               DiagnosticEngine& diags, std::chrono::steady_clock::time_point t0,
               const pybridge::PythonSetup& python, std::unique_ptr<PushSession> opened);

} // namespace inm::driver

// `inmanta export` push mode, driver side: the export flags that name a server, merged with the configuration
// (.inmanta, [compiler_rest_transport], [config] environment) into a ready client. The push itself is
// client::pushArtifact (orchestrator/client). Invariant: flags win over files; nothing here touches the
// compiler.
#pragma once

#include "client/Push.h"

#include <memory>
#include <string>
#include <vector>

namespace inm::tools {

/// The push-related flags of `inmanta export`, as given (empty = not given).
struct PushFlags {
  std::vector<std::string> configFiles; // -c FILE (global)
  std::string environment;              // -e
  std::string serverAddress;            // --server_address
  std::string serverPort;               // --server_port
  std::string token;                    // --token
  std::string sslCaCert;                // --ssl-ca-cert
  std::string metadata;                 // -m / --metadata (JSON object)
  int ssl = -1;                         // --ssl = 1, --no-ssl = 0, unset = -1
  bool partial = false;
  bool release = false; // -d
  std::vector<std::string> deleteResourceSets;
};

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

} // namespace inm::tools

// The external agent process (`inmanta agent`, docs/deploy.md "External agents") as a library
// (orchestrator/agent, inm_agent): connect to the server with an HTTP upgrade, wait as a standby until
// promoted, run the executor protocol through an AgentRouter (private) in `inmanta executor` children, retry
// with backoff, drain on SIGTERM/SIGINT. The verb's entry (tools/AgentMain.cpp) reads flags and configuration
// into AgentOptions. Sits above executor/ (and uses api/'s header-only splice); nothing below includes it.
// Invariant: runAgent returns the process exit code and never throws.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace inm::agent {

/// Everything one agent process needs, already checked by the caller.
struct AgentOptions {
  std::string host = "localhost";  ///< the server
  int port = 8888;                 ///< its port (1-65535)
  std::string environment;         ///< the environment id the agents belong to
  std::vector<std::string> agents; ///< the agent names this process claims (no commas)
  std::string token;               ///< bearer token, "" for none
  bool ssl = false;                ///< TLS to the server, verified against caCert or the system's CAs
  std::string caCert;              ///< CA file, "" for the system's
  int threads = 4;                 ///< handler threads per executor child
  std::string codeDir;             ///< <state dir>/agent-code
  std::chrono::milliseconds shutdownGrace{30000}; ///< on SIGTERM: how long running actions may finish
};

/// Runs the agent until a stop signal (exit 0), a fatal refusal by the server (1) or a CA certificate that
/// cannot be loaded (2, with a message on stderr). Installs the SIGTERM/SIGINT handlers and ignores SIGPIPE.
int runAgent(const AgentOptions& options);

} // namespace inm::agent

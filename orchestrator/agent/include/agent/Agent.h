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
  std::string host = "localhost";
  int port = 8888;
  std::string environment;
  std::vector<std::string> agents;
  std::string token;
  bool ssl = false;
  std::string caCert;
  int threads = 4;
  std::string codeDir;                            ///< <state dir>/agent-code
  std::chrono::milliseconds shutdownGrace{30000}; ///< on SIGTERM: how long running actions may finish
};

/// Runs the agent until a stop signal (exit 0), a fatal refusal by the server (1) or a CA certificate that
/// cannot be loaded (2, with a message on stderr). Installs the SIGTERM/SIGINT handlers and ignores SIGPIPE.
int runAgent(const AgentOptions& options);

} // namespace inm::agent

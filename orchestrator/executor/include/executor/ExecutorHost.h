// The executor process's side of the protocol (`inmanta executor`, tools/ExecutorMain.cpp): reads frames from
// one fd, runs each requested action on a small worker pool through the handler registry, and writes one
// `result` frame per action to the other fd. Handlers fetch file contents through `get_file` round trips to
// the scheduler. One HandlerCache per agent lives as long as the process. Invariants: exactly one `result`
// per request, even when the handler is missing or throws; nothing but frames is ever written to the output
// fd.
#pragma once

#include "executor/Handler.h"

#include <map>

namespace inm::executor {

/// Knobs of the executor process.
struct HostOptions {
  int threads = 4;                 ///< worker threads (the scheduler bounds parallelism per agent)
  double fileTimeoutSeconds = 120; ///< how long a handler waits for a `get_file` answer
  /// Agent name -> URI (`--agent-uri`); an agent not here deploys on this host. ssh:// agents get an SshIo.
  std::map<std::string, model::AgentUri> agentUris;
  SshSettings ssh; ///< known_hosts / identity file for ssh:// agents
};

/// Serves the protocol on (inFd, outFd) until `shutdown` or end of input. Returns the process exit code:
/// 0 after `shutdown` or EOF, 2 on a protocol error (also reported as an `error` frame when possible).
int runExecutorHost(int inFd, int outFd, const HandlerRegistry& registry, HostOptions options = {});

/// Runs one request against `registry` with the given services (what each worker does); exposed for tests.
struct DeployRequest;
struct ActionResult;
ActionResult runAction(const DeployRequest& request, const HandlerRegistry& registry,
                       const HandlerServices& services);

} // namespace inm::executor

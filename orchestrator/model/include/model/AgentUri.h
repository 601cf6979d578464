// Agent URIs (docs/deploy.md "Agentless over SSH"): where an agent's resources are deployed. `local:` (and
// `localhost`, and an empty value) means the machine the executor runs on; `ssh://[user@]host[:port][?k=v&…]`
// (or a bare host name, as the reference accepts) means that host over SSH. The environment setting
// `autostart_agent_map` maps agent names to these; the scheduler hands them to executors. Pure values, no
// I/O. Invariant: a parsed Ssh URI always has a non-empty host and a port in 1..65535.
#pragma once

#include <llvm/Support/Error.h>

#include <map>
#include <string>

namespace inm::model {

struct AgentUri {
  enum class Scheme { Local, Ssh };
  Scheme scheme = Scheme::Local;
  std::string user; ///< "" = the ssh client's default (the executor's user)
  std::string host;
  int port = 22;
  std::map<std::string, std::string> options; ///< the query: python=…, known_hosts=…, identity=…, …

  bool local() const { return scheme == Scheme::Local; }
  /// The canonical text: "local:" or "ssh://user@host:port?k=v&…" (options sorted).
  std::string str() const;
  /// "user@host:port" (for messages).
  std::string target() const;
};

/// Parses an agent URI; the error names the URI and what is wrong with it.
llvm::Expected<AgentUri> parseAgentUri(const std::string& text);

} // namespace inm::model

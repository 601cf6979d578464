// Credentials for private module repositories (projectmgr library), handed to libgit2's credential callback.
// Filled from the `[module_auth]` section of the project's .inmanta / .inmanta.cfg, ~/.inmanta.cfg or
// /etc/inmanta/inmanta.cfg, and from INMANTA_MODULE_AUTH_* environment variables (docs/modules.md).
// Invariant: each credential kind is offered once per connection, so a rejected secret fails instead of
// looping.
#pragma once

#include <string>
#include <vector>

namespace inm::projectmgr {

struct GitAuth {
  std::string sshKey;        ///< private key file for ssh:// and user@host:path URLs
  std::string sshPublicKey;  ///< its public key (optional)
  std::string sshPassphrase; ///< the key's passphrase (optional)
  bool sshAgent = true;      ///< try the ssh agent (SSH_AUTH_SOCK) when no key file is configured
  std::string sshKnownHosts; ///< known_hosts file for host keys (default ~/.ssh/known_hosts + /etc/ssh's)
  std::string username;      ///< https user (default "git" with a token)
  std::string password;      ///< https password or access token
};

/// The known_hosts files an ssh connection's host key is checked against.
std::vector<std::string> knownHostsFiles(const GitAuth& auth);

/// Reads the credentials for a project in `projectDir`: config files first (later files win), then the
/// environment. `sources` receives the files that were read.
GitAuth loadGitAuth(const std::string& projectDir, std::vector<std::string>* sources = nullptr);

} // namespace inm::projectmgr

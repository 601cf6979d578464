// SSH host key verification for git remotes (projectmgr; also used by compile/Git.cpp): libgit2 1.5 hands the
// server's host key to a callback and checks nothing itself, so GitRepo.cpp asks this module whether the key
// is the one OpenSSH's known_hosts files record for that host. Invariant: a host without an entry, or with a
// different key, or a revoked one, is refused with a message naming the host, the files read and the fix; it
// is never accepted silently.
#pragma once

#include <string>
#include <vector>

namespace inm::projectmgr {

/// The host and port an ssh remote URL connects to: `ssh://[user@]host[:port]/path` or scp-like
/// `[user@]host:path` (port 22). Returns false for other URLs.
bool sshEndpoint(const std::string& url, std::string& host, int& port);

/// Checks `key` (the SSH wire-format public key blob) against the known_hosts `files` for host:port. Plain,
/// comma-separated, wildcard (`*`, `?`), negated (`!`) and hashed (`|1|salt|hash`) host fields are
/// understood;
/// `@revoked` lines refuse their key; `@cert-authority` lines are skipped. On refusal `error` says why.
bool hostKeyKnown(const std::vector<std::string>& files, const std::string& host, int port,
                  const std::string& key, std::string& error);

} // namespace inm::projectmgr

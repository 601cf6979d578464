// The git stages of a server compile, on libgit2 (private to the compile service; blocking, so callers run it
// on the bounded blocking pool). Each function performs one reported stage and returns what the report row
// needs. Invariant: libgit2 errors never escape as exceptions or aborts; they come back as a failed
// StageResult whose errstream names the URL, branch and libgit2's message, and a clone that fails leaves no
// half-made checkout.
#pragma once

#include <string>

namespace inm::compile {

/// Credentials for the environment's repository (from the server config, or user:password in an https URL).
struct GitCredentials {
  std::string username;     ///< https basic user (default "git" with a token, or the URL's user)
  std::string password;     ///< https password or access token
  std::string sshKey;       ///< path of a private key for ssh:// and scp-like URLs
  std::string sshPublicKey; ///< its public key (optional)
  std::string sshPassphrase;
};

/// The outcome of one git stage, in report-row terms.
struct StageResult {
  std::string command;  ///< the equivalent git command line, for the report
  std::string out, err; ///< text for outstream / errstream
  int returncode = 0;   ///< 0 on success
  std::string commit;   ///< HEAD after the stage (hex), when known
};

/// Initialises libgit2 once per process (reference counted by libgit2; safe to call again).
void initGit();

/// True if `dir` holds a git checkout.
bool isCheckout(const std::string& dir);

/// `git clone <url> . -b <branch>` into `dir` (created; must be empty or absent).
StageResult cloneRepository(const std::string& url, const std::string& branch, const std::string& dir,
                            const GitCredentials& creds);

/// `git fetch origin` (the remote's URL is updated to `url` first), then a hard checkout of origin/<branch>
/// as the local branch <branch>: the "Pulling updates" stage.
StageResult pullBranch(const std::string& url, const std::string& branch, const std::string& dir,
                       const GitCredentials& creds);

/// The branch HEAD is on in `dir` ("" if detached or no checkout).
std::string currentBranch(const std::string& dir);

/// The commit HEAD points at in `dir` ("" if none).
std::string headCommit(const std::string& dir);

} // namespace inm::compile

// libgit2 adapter for the compile service's clone and pull stages (see Git.h). Credentials are offered once
// per kind: libgit2 calls the credential callback again after a rejection, and a second offer of the same
// secret would only loop, so the callback refuses and the stage fails with "authentication failed".
#include "compile/Git.h"

#include "projectmgr/GitAuth.h"
#include "projectmgr/KnownHosts.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <cstring>
#include <git2.h>

namespace inm::compile {
namespace {

struct CredentialState {
  const GitCredentials* creds;
  int attempts = 0;
  std::string tried;
  std::string url;
};

/// ssh remotes: the host key must be in the server user's known_hosts (~/.ssh/known_hosts or
/// /etc/ssh/ssh_known_hosts), as for `inmanta project install`; TLS: libgit2's own verification.
int certificateCallback(git_cert* cert, int valid, const char* host, void* payload) {
  (void)valid;
  if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) return GIT_PASSTHROUGH;
  const auto* st = static_cast<const CredentialState*>(payload);
  const auto* hk = reinterpret_cast<const git_cert_hostkey*>(cert);
  std::string h, err;
  int port = 22;
  if (!projectmgr::sshEndpoint(st->url, h, port)) h = host ? host : "";
  if ((hk->type & GIT_CERT_SSH_RAW) &&
      projectmgr::hostKeyKnown(projectmgr::knownHostsFiles(projectmgr::GitAuth{}), h, port,
                               std::string(hk->hostkey, hk->hostkey_len), err))
    return 0;
  git_error_set_str(GIT_ERROR_SSH, err.empty() ? "the SSH host key cannot be checked" : err.c_str());
  return GIT_EUSER;
}

std::string lastGitError() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

int credentialCallback(git_credential** out, const char* url, const char* userFromUrl, unsigned int allowed,
                       void* payload) {
  auto* st = static_cast<CredentialState*>(payload);
  const GitCredentials& c = *st->creds;
  if (++st->attempts > 1) {
    git_error_set_str(GIT_ERROR_NET,
                      "authentication failed: the repository rejected the configured credentials");
    return GIT_EUSER;
  }
  if ((allowed & GIT_CREDENTIAL_SSH_KEY) && !c.sshKey.empty()) {
    st->tried = "ssh key " + c.sshKey;
    return git_credential_ssh_key_new(
        out, userFromUrl ? userFromUrl : "git", c.sshPublicKey.empty() ? nullptr : c.sshPublicKey.c_str(),
        c.sshKey.c_str(), c.sshPassphrase.empty() ? nullptr : c.sshPassphrase.c_str());
  }
  if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && !c.password.empty()) {
    st->tried = "password/token";
    std::string user = !c.username.empty() ? c.username : (userFromUrl && *userFromUrl ? userFromUrl : "git");
    return git_credential_userpass_plaintext_new(out, user.c_str(), c.password.c_str());
  }
  git_error_set_str(GIT_ERROR_NET,
                    "the repository asks for credentials and none are configured "
                    "(set [compiler] git_token / git_ssh_key, or put user:token in the https URL)");
  return GIT_EUSER;
}

/// Splits `https://user:secret@host/...` into a URL without the secret plus credentials, so the password
/// never lands in reports or in .git/config.
std::string stripUrlCredentials(const std::string& url, GitCredentials& creds) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  auto hostStart = scheme + 3;
  auto at = url.find('@', hostStart);
  auto slash = url.find('/', hostStart);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  std::string userinfo = url.substr(hostStart, at - hostStart);
  auto colon = userinfo.find(':');
  if (colon == std::string::npos) {
    if (creds.username.empty()) creds.username = userinfo;
    return url; // ssh://user@host keeps its user
  }
  if (creds.username.empty()) creds.username = userinfo.substr(0, colon);
  if (creds.password.empty()) creds.password = userinfo.substr(colon + 1);
  return url.substr(0, hostStart) + creds.username + url.substr(at);
}

std::string oidHex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

/// Recursively removes `dir`'s contents (a failed clone must not leave a broken checkout behind).
void removeTree(const std::string& dir) {
  (void)llvm::sys::fs::remove_directories(dir, /*IgnoreErrors=*/true);
}

} // namespace

void initGit() { git_libgit2_init(); }

bool isCheckout(const std::string& dir) { return llvm::sys::fs::exists(dir + "/.git"); }

std::string headCommit(const std::string& dir) {
  git_repository* repo = nullptr;
  if (git_repository_open(&repo, dir.c_str()) != 0) return "";
  std::string out;
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo, "HEAD") == 0) out = oidHex(&oid);
  git_repository_free(repo);
  return out;
}

std::string currentBranch(const std::string& dir) {
  git_repository* repo = nullptr;
  if (git_repository_open(&repo, dir.c_str()) != 0) return "";
  std::string out;
  git_reference* head = nullptr;
  if (git_repository_head(&head, repo) == 0 && git_reference_is_branch(head))
    out = git_reference_shorthand(head);
  git_reference_free(head);
  git_repository_free(repo);
  return out;
}

StageResult cloneRepository(const std::string& urlIn, const std::string& branch, const std::string& dir,
                            const GitCredentials& credsIn) {
  GitCredentials creds = credsIn;
  std::string url = stripUrlCredentials(urlIn, creds);
  StageResult r;
  r.command = "git clone " + url + " . -b " + branch;
  if (isCheckout(dir)) removeTree(dir);
  if (auto ec = llvm::sys::fs::create_directories(dir)) {
    r.returncode = 1;
    r.err = "cannot create " + dir + ": " + ec.message() + "\n";
    return r;
  }
  CredentialState st{&creds, 0, {}, url};
  git_clone_options opts = GIT_CLONE_OPTIONS_INIT;
  opts.checkout_branch = branch.c_str();
  opts.fetch_opts.callbacks.credentials = credentialCallback;
  opts.fetch_opts.callbacks.certificate_check = certificateCallback;
  opts.fetch_opts.callbacks.payload = &st;
  git_repository* repo = nullptr;
  int rc = git_clone(&repo, url.c_str(), dir.c_str(), &opts);
  if (rc != 0) {
    std::string msg = lastGitError();
    if (msg.find("refs/remotes/origin/" + branch) != std::string::npos ||
        msg.find("'" + branch + "'") != std::string::npos)
      msg = "branch '" + branch + "' does not exist in the repository (" + msg + ")";
    r.returncode = 1;
    r.err = "cloning " + url + " (branch " + branch + ") failed: " + msg + " (checkout " + dir + ")\n";
    removeTree(dir);
    (void)llvm::sys::fs::create_directories(dir);
    return r;
  }
  git_oid oid;
  if (git_reference_name_to_id(&oid, repo, "HEAD") == 0) r.commit = oidHex(&oid);
  git_repository_free(repo);
  r.out = "Cloned " + url + " branch " + branch + "\nHEAD is now at " + r.commit + "\n";
  return r;
}

StageResult pullBranch(const std::string& urlIn, const std::string& branch, const std::string& dir,
                       const GitCredentials& credsIn) {
  GitCredentials creds = credsIn;
  std::string url = stripUrlCredentials(urlIn, creds);
  StageResult r;
  r.command = "git fetch origin && git checkout -B " + branch + " origin/" + branch;
  auto fail = [&](const std::string& what) {
    r.returncode = 1;
    // The checkout is named in every failure: a full or read-only state dir must be recognisable.
    r.err += what + (what.find(dir) == std::string::npos ? " in " + dir : std::string()) + ": " +
             lastGitError() + "\n";
    return r;
  };
  git_repository* repo = nullptr;
  if (git_repository_open(&repo, dir.c_str()) != 0) return fail("opening the checkout in " + dir);
  struct Guard {
    git_repository* repo;
    git_remote* remote = nullptr;
    git_object* target = nullptr;
    git_reference* branchRef = nullptr;
    ~Guard() {
      git_reference_free(branchRef);
      git_object_free(target);
      git_remote_free(remote);
      git_repository_free(repo);
    }
  } g{repo};
  std::string before = headCommit(dir);
  if (git_remote_set_url(repo, "origin", url.c_str()) != 0) return fail("setting the origin URL to " + url);
  if (git_remote_lookup(&g.remote, repo, "origin") != 0) return fail("looking up the remote origin");
  CredentialState st{&creds, 0, {}, url};
  git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
  fo.callbacks.credentials = credentialCallback;
  fo.callbacks.certificate_check = certificateCallback;
  fo.callbacks.payload = &st;
  fo.prune = GIT_FETCH_PRUNE;
  if (git_remote_fetch(g.remote, nullptr, &fo, "fetch") != 0) return fail("fetching " + url);
  std::string remoteRef = "refs/remotes/origin/" + branch;
  if (git_revparse_single(&g.target, repo, remoteRef.c_str()) != 0) {
    r.returncode = 1;
    r.err = "branch '" + branch + "' does not exist in " + url + "\n";
    return r;
  }
  git_object* commit = nullptr;
  if (git_object_peel(&commit, g.target, GIT_OBJECT_COMMIT) != 0) return fail("resolving " + remoteRef);
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
  int rc = git_checkout_tree(repo, commit, &co);
  // libgit2 refuses to move the branch HEAD is on: detach first, then move the branch and re-attach.
  if (rc == 0) rc = git_repository_set_head_detached(repo, git_object_id(commit));
  if (rc == 0) rc = git_branch_create(&g.branchRef, repo, branch.c_str(), (git_commit*)commit, /*force=*/1);
  std::string localRef = "refs/heads/" + branch;
  if (rc == 0) rc = git_repository_set_head(repo, localRef.c_str());
  git_object_free(commit);
  if (rc != 0) return fail("checking out " + branch);
  r.commit = headCommit(dir);
  r.out = "Fetched " + url + "\n";
  r.out += before == r.commit
               ? "Already up to date: " + r.commit + "\n"
               : "Updated " + (before.empty() ? std::string("(none)") : before) + " -> " + r.commit + "\n";
  r.out += "HEAD is now at " + r.commit + "\n";
  return r;
}

} // namespace inm::compile

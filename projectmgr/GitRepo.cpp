// libgit2 operations on module checkouts (see GitRepo.h). Credentials: libgit2 calls the callback again after
// a rejection, so each kind (key file, agent, user/password) is offered at most once per operation and the
// operation then fails with "authentication failed" instead of looping.
#include "GitRepo.h"

#include "projectmgr/Config.h"
#include "projectmgr/KnownHosts.h"

#include <llvm/Support/FileSystem.h>

#include <git2.h>

namespace inm::projectmgr::git {
namespace {

std::string lastError() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

std::string hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

struct CredState {
  const GitAuth* auth;
  std::string url;
  bool keyTried = false, agentTried = false, passTried = false;
};

/// ssh: the host key must be the one known_hosts records (KnownHosts.h); TLS: libgit2's own verification.
int certificateCheck(git_cert* cert, int valid, const char* host, void* payload) {
  (void)valid;
  if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) return GIT_PASSTHROUGH;
  auto* st = static_cast<CredState*>(payload);
  const auto* hk = reinterpret_cast<const git_cert_hostkey*>(cert);
  if (!(hk->type & GIT_CERT_SSH_RAW)) {
    git_error_set_str(GIT_ERROR_SSH, "the SSH host key cannot be checked (libgit2 gave no raw key)");
    return GIT_EUSER;
  }
  std::string h;
  int port = 22;
  if (!sshEndpoint(st->url, h, port)) h = host ? host : "";
  std::string err;
  if (hostKeyKnown(knownHostsFiles(*st->auth), h, port, std::string(hk->hostkey, hk->hostkey_len), err))
    return 0;
  git_error_set_str(GIT_ERROR_SSH, err.c_str());
  return GIT_EUSER;
}

constexpr const char* rsaHint = " (the key is an RSA key: libssh2 signs with ssh-rsa, SHA-1, which OpenSSH "
                                "8.8 and later refuse by default; "
                                "use an ed25519 or ECDSA key)";

/// Is the configured key file an RSA key (PEM header, or its .pub says ssh-rsa)?
bool isRsaKey(const GitAuth& a) {
  std::string head;
  if (readWholeFile(a.sshKey, head) && head.find("BEGIN RSA PRIVATE KEY") != std::string::npos) return true;
  std::string pub;
  return readWholeFile(a.sshPublicKey.empty() ? a.sshKey + ".pub" : a.sshPublicKey, pub) &&
         pub.rfind("ssh-rsa ", 0) == 0;
}

int credentials(git_credential** out, const char* url, const char* userFromUrl, unsigned int allowed,
                void* payload) {
  (void)url;
  auto* st = static_cast<CredState*>(payload);
  const GitAuth& a = *st->auth;
  const char* user = userFromUrl && *userFromUrl ? userFromUrl : "git";
  if (allowed & GIT_CREDENTIAL_SSH_KEY) {
    if (!a.sshKey.empty() && !st->keyTried) {
      st->keyTried = true;
      return git_credential_ssh_key_new(out, user, a.sshPublicKey.empty() ? nullptr : a.sshPublicKey.c_str(),
                                        a.sshKey.c_str(),
                                        a.sshPassphrase.empty() ? nullptr : a.sshPassphrase.c_str());
    }
    if (a.sshAgent && !st->agentTried && std::getenv("SSH_AUTH_SOCK")) {
      st->agentTried = true;
      return git_credential_ssh_key_from_agent(out, user);
    }
  }
  if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && !a.password.empty() && !st->passTried) {
    st->passTried = true;
    std::string u = !a.username.empty() ? a.username : (userFromUrl && *userFromUrl ? userFromUrl : "git");
    return git_credential_userpass_plaintext_new(out, u.c_str(), a.password.c_str());
  }
  if (allowed & GIT_CREDENTIAL_USERNAME) return git_credential_username_new(out, user);
  std::string msg = st->keyTried || st->agentTried || st->passTried
                        ? "authentication failed: the server rejected the configured credentials"
                        : "the server asks for credentials and none are configured (see the "
                          "[module_auth] section in docs/modules.md)";
  if (st->keyTried && isRsaKey(a)) msg += rsaHint;
  git_error_set_str(GIT_ERROR_NET, msg.c_str());
  return GIT_EUSER;
}

struct Repo {
  git_repository* r = nullptr;
  explicit Repo(const std::string& dir) {
    if (git_repository_open_ext(&r, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) r = nullptr;
  }
  ~Repo() { git_repository_free(r); }
  explicit operator bool() const { return r != nullptr; }
};

bool commitTree(git_repository* repo, const std::string& commit, git_tree** tree) {
  git_oid oid;
  if (git_oid_fromstr(&oid, commit.c_str()) != 0) return false;
  git_commit* c = nullptr;
  if (git_commit_lookup(&c, repo, &oid) != 0) return false;
  int rc = git_commit_tree(tree, c);
  git_commit_free(c);
  return rc == 0;
}

} // namespace

void init() { git_libgit2_init(); }

bool isRepository(const std::string& dir) { return static_cast<bool>(Repo(dir)); }

bool clone(const std::string& url, const std::string& dir, const GitAuth& auth, std::string& error) {
  CredState st{&auth, url};
  git_clone_options o = GIT_CLONE_OPTIONS_INIT;
  o.fetch_opts.callbacks.credentials = credentials;
  o.fetch_opts.callbacks.certificate_check = certificateCheck;
  o.fetch_opts.callbacks.payload = &st;
  o.fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  git_repository* repo = nullptr;
  if (git_clone(&repo, url.c_str(), dir.c_str(), &o) != 0) {
    error = lastError();
    (void)llvm::sys::fs::remove_directories(dir, true);
    return false;
  }
  git_repository_free(repo);
  return true;
}

bool fetch(const std::string& dir, const GitAuth& auth, std::string& error) {
  Repo repo(dir);
  if (!repo) {
    error = "cannot open the git repository in " + dir + ": " + lastError();
    return false;
  }
  git_remote* remote = nullptr;
  if (git_remote_lookup(&remote, repo.r, "origin") != 0) {
    error = dir + " has no remote 'origin': " + lastError();
    return false;
  }
  CredState st{&auth, git_remote_url(remote) ? git_remote_url(remote) : ""};
  git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
  fo.callbacks.credentials = credentials;
  fo.callbacks.certificate_check = certificateCheck;
  fo.callbacks.payload = &st;
  fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  fo.prune = GIT_FETCH_PRUNE;
  int rc = git_remote_fetch(remote, nullptr, &fo, "fetch");
  if (rc != 0)
    error = "fetching " + std::string(git_remote_url(remote)) + " into " + dir + ": " + lastError();
  git_remote_free(remote);
  return rc == 0;
}

bool tags(const std::string& dir, std::vector<Tag>& out, std::string& error) {
  Repo repo(dir);
  if (!repo) {
    error = "cannot open the git repository in " + dir;
    return false;
  }
  git_strarray names{};
  if (git_tag_list(&names, repo.r) != 0) {
    error = "listing the tags of " + dir + ": " + lastError();
    return false;
  }
  for (size_t i = 0; i < names.count; ++i) {
    std::string ref = std::string("refs/tags/") + names.strings[i];
    git_object* obj = nullptr;
    if (git_revparse_single(&obj, repo.r, ref.c_str()) != 0) continue;
    git_object* commit = nullptr;
    if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) == 0) {
      out.push_back(Tag{names.strings[i], hex(git_object_id(commit))});
      git_object_free(commit);
    }
    git_object_free(obj);
  }
  git_strarray_dispose(&names);
  return true;
}

bool defaultBranchCommit(const std::string& dir, std::string& commit, std::string& branch,
                         std::string& error) {
  Repo repo(dir);
  if (!repo) {
    error = "cannot open the git repository in " + dir;
    return false;
  }
  for (const char* ref :
       {"refs/remotes/origin/HEAD", "refs/remotes/origin/master", "refs/remotes/origin/main"}) {
    git_reference* r = nullptr;
    if (git_reference_lookup(&r, repo.r, ref) != 0) continue;
    git_reference* resolved = nullptr;
    if (git_reference_resolve(&resolved, r) == 0) {
      commit = hex(git_reference_target(resolved));
      branch = git_reference_shorthand(resolved);
      git_reference_free(resolved);
      git_reference_free(r);
      return true;
    }
    git_reference_free(r);
  }
  error = dir + " has no origin/HEAD, origin/master or origin/main branch";
  return false;
}

bool readAt(const std::string& dir, const std::string& commit, const std::string& path, std::string& out) {
  Repo repo(dir);
  git_tree* tree = nullptr;
  if (!repo || !commitTree(repo.r, commit, &tree)) return false;
  git_tree_entry* e = nullptr;
  bool ok = false;
  if (git_tree_entry_bypath(&e, tree, path.c_str()) == 0) {
    git_blob* blob = nullptr;
    if (git_tree_entry_type(e) == GIT_OBJECT_BLOB &&
        git_blob_lookup(&blob, repo.r, git_tree_entry_id(e)) == 0) {
      out.assign(static_cast<const char*>(git_blob_rawcontent(blob)), size_t(git_blob_rawsize(blob)));
      ok = true;
      git_blob_free(blob);
    }
    git_tree_entry_free(e);
  }
  git_tree_free(tree);
  return ok;
}

std::vector<std::string> listAt(const std::string& dir, const std::string& commit, const std::string& folder,
                                const std::string& suffix) {
  std::vector<std::string> out;
  Repo repo(dir);
  git_tree* tree = nullptr;
  if (!repo || !commitTree(repo.r, commit, &tree)) return out;
  struct Walk {
    std::string folder, suffix;
    std::vector<std::string>* out;
  } w{folder + "/", suffix, &out};
  git_tree_walk(
      tree, GIT_TREEWALK_PRE,
      [](const char* root, const git_tree_entry* e, void* p) -> int {
        auto* w = static_cast<Walk*>(p);
        std::string path = std::string(root) + git_tree_entry_name(e);
        if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
          return (path + "/").rfind(w->folder, 0) == 0 || w->folder.rfind(path + "/", 0) == 0 ? 0 : 1;
        if (path.rfind(w->folder, 0) == 0 && path.size() >= w->suffix.size() &&
            path.compare(path.size() - w->suffix.size(), w->suffix.size(), w->suffix) == 0)
          w->out->push_back(path);
        return 0;
      },
      &w);
  git_tree_free(tree);
  return out;
}

bool checkout(const std::string& dir, const std::string& commit, bool force, std::string& error) {
  Repo repo(dir);
  git_oid oid;
  git_object* obj = nullptr;
  if (!repo || git_oid_fromstr(&oid, commit.c_str()) != 0 ||
      git_object_lookup(&obj, repo.r, &oid, GIT_OBJECT_COMMIT) != 0) {
    error = "cannot find commit " + commit + " in " + dir + ": " + lastError();
    return false;
  }
  git_checkout_options co = GIT_CHECKOUT_OPTIONS_INIT;
  co.checkout_strategy = force ? GIT_CHECKOUT_FORCE : GIT_CHECKOUT_SAFE;
  int rc = git_checkout_tree(repo.r, obj, &co);
  if (rc == 0) rc = git_repository_set_head_detached(repo.r, &oid);
  git_object_free(obj);
  if (rc != 0) error = "checking out " + commit + " in " + dir + ": " + lastError();
  return rc == 0;
}

std::string head(const std::string& dir) {
  Repo repo(dir);
  git_oid oid;
  if (!repo || git_reference_name_to_id(&oid, repo.r, "HEAD") != 0) return "";
  return hex(&oid);
}

std::string originUrl(const std::string& dir) {
  Repo repo(dir);
  git_remote* remote = nullptr;
  if (!repo || git_remote_lookup(&remote, repo.r, "origin") != 0) return "";
  std::string url = git_remote_url(remote) ? git_remote_url(remote) : "";
  git_remote_free(remote);
  return url;
}

std::vector<std::string> changedPaths(const std::string& dir) {
  std::vector<std::string> out;
  Repo repo(dir);
  if (!repo) return out;
  git_status_options so = GIT_STATUS_OPTIONS_INIT;
  so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* list = nullptr;
  if (git_status_list_new(&list, repo.r, &so) != 0) return out;
  for (size_t i = 0; i < git_status_list_entrycount(list); ++i) {
    const git_status_entry* e = git_status_byindex(list, i);
    const git_diff_delta* d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
    if (d && d->new_file.path) out.push_back(d->new_file.path);
  }
  git_status_list_free(list);
  return out;
}

} // namespace inm::projectmgr::git

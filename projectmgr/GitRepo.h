// libgit2 operations the installer needs on one module checkout (private to projectmgr): clone, fetch, list
// tags, read files at a commit without checking it out, check out a commit detached, and inspect the working
// tree. Invariant: no libgit2 error escapes as an exception; every failure returns false with `error` set
// to a message naming the URL or folder and libgit2's reason.
#pragma once

#include "projectmgr/GitAuth.h"

#include <string>
#include <vector>

namespace inm::projectmgr::git {

void init();

struct Tag {
  std::string name;   ///< "1.2.0" or "v1.2.0"
  std::string commit; ///< hex of the commit it points at (annotated tags peeled)
};

bool clone(const std::string& url, const std::string& dir, const GitAuth& auth, std::string& error);
bool fetch(const std::string& dir, const GitAuth& auth, std::string& error);
bool tags(const std::string& dir, std::vector<Tag>& out, std::string& error);
/// The commit of the remote's default branch (origin/HEAD, else origin/master, origin/main).
bool defaultBranchCommit(const std::string& dir, std::string& commit, std::string& branch,
                         std::string& error);
/// The text of `path` in `commit`; false when it is absent.
bool readAt(const std::string& dir, const std::string& commit, const std::string& path, std::string& out);
/// Paths of the files under `folder` in `commit` whose names end in `suffix`.
std::vector<std::string> listAt(const std::string& dir, const std::string& commit, const std::string& folder,
                                const std::string& suffix);
/// Detached checkout of `commit`; `force` overwrites the working tree (a fresh clone).
bool checkout(const std::string& dir, const std::string& commit, bool force, std::string& error);
std::string head(const std::string& dir);
std::string originUrl(const std::string& dir);
/// Modified, added, deleted and untracked (not ignored) paths of the working tree.
std::vector<std::string> changedPaths(const std::string& dir);
bool isRepository(const std::string& dir);

} // namespace inm::projectmgr::git

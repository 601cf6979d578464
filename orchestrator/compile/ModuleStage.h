// The "Installing modules" stage of a server compile (private to the compile service): resolves and installs
// the project's v1 modules with projectmgr into a per-environment cache of clones (<env dir>/modules), and
// links each into the checkout's downloadpath so the compiler finds them. The cache survives pulls of the
// project (which remove untracked files), so a recompile fetches only when a module has to move. Blocking:
// callers run it on the blocking pool.
#pragma once

#include "compile/Git.h"

#include <string>

namespace inm::compile {

/// True when the checkout's project.yml names module sources (`repo:`) or requirements (`requires:`): a
/// project with neither has nothing to install and its compile has no "Installing modules" stage.
bool needsModuleInstall(const std::string& checkout);

/// Installs for the project in `checkout`, with `cacheDir` as the clones' home; `update` moves every module
/// to the newest matching version (the notify `update` flag).
StageResult installModules(const std::string& checkout, const std::string& cacheDir, bool update,
                           const GitCredentials& creds);

} // namespace inm::compile

// Installing a project's v1 modules from git, and inspecting what is installed (projectmgr library; used by
// the `project`/`module` verbs in tools/ModuleMain.cpp, the compile-time check in driver/Pipeline.cpp and
// the server's "Installing modules" compile stage). Resolution: the project's `requires:` and main.cf imports
// are the roots; every chosen module's module.yml `requires:` and model imports join them, and choices are
// recomputed until nothing changes. For each module the newest tag whose version satisfies every constraint
// on it wins (release: no pre-releases; prerelease: with them; master: the default branch head), except that
// `install` keeps an installed version that still satisfies them, while `update` always moves to the newest.
// Invariant: nothing in a checkout changes unless the whole graph resolved; a checkout with local changes is
// never overwritten.
#pragma once

#include "projectmgr/Config.h"
#include "projectmgr/GitAuth.h"

#include <functional>
#include <string>
#include <vector>

namespace inm::projectmgr {

/// The compiler version this compiler answers for when a module.yml names a `compiler_version`: the value of
/// the reference line we follow (inmanta-core 11.x). `project install` passes over tags that need a newer
/// one.
inline constexpr const char* kCompilerVersion = "2024.1.1";

/// One module as installed (or as chosen by an install).
struct ModuleState {
  std::string name;
  std::string dir;                     ///< where it is ("" when not installed)
  std::string version;                 ///< module.yml version ("" when not installed)
  std::string source;                  ///< origin URL, "local" (not a managed clone) or "built-in" (our std)
  std::string constraint;              ///< all constraints on it, joined with ','; "" means any version
  std::vector<std::string> requiredBy; ///< "project.yml", "main.cf", "<module> <version>"
  std::string tag;                     ///< the tag HEAD is on ("" when off-tag or not a clone)
  std::string commit;                  ///< HEAD
  bool installed = false;
  bool managed = false; ///< a git clone in downloadpath, which install/update may move
  bool dirty = false;   ///< local changes in the working tree
  bool matches = true;  ///< the installed version satisfies every constraint
  std::vector<std::string> changedPaths;
};

struct InstallOptions {
  bool update = false; ///< `project update`: move every module to the newest matching version
  GitAuth auth;
  std::function<void(const std::string&)> log; ///< progress lines (may be empty)
  std::string builtinStdDir;                   ///< our std, used when the project installs none
};

struct InstallReport {
  bool ok = false;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::vector<ModuleState> modules; ///< sorted by name
  int changed = 0;                  ///< checkouts cloned or moved
};

InstallReport installProject(const ProjectConfig& project, const InstallOptions& opts);

/// What is installed now against the constraints, without any network access. `problems` holds one line per
/// module that is required but missing or whose version does not match, each ending with the command that
/// fixes it.
struct InspectReport {
  std::vector<ModuleState> modules; ///< sorted by name
  std::vector<std::string> problems;
};
/// `gitDetails` adds tag, HEAD and working-tree state per clone (list/status/verify); the compile check skips
/// it.
InspectReport inspectProject(const ProjectConfig& project, const std::string& builtinStdDir,
                             bool gitDetails = true);

} // namespace inm::projectmgr

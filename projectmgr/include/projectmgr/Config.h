// project.yml and module.yml as the module installer reads them (projectmgr library). The compiler's own
// reading of project.yml (frontend/Project.cpp) stays separate: it needs only the module path; this side
// needs repositories, requirements and install modes. Invariant: read functions never throw; every problem
// comes back in `errors` as "<file>: <what>".
#pragma once

#include "projectmgr/Version.h"

#include <string>
#include <vector>

namespace inm::projectmgr {

/// One `repo:` entry: a git URL (template with `{}` for the module name, else the name is appended), or a
/// `type: package` index, which this implementation records but cannot install from.
struct RepoEntry {
  std::string type = "git"; ///< "git" or "package"
  std::string url;
  /// The URL to try for `module`.
  std::string urlFor(const std::string& module) const;
};

enum class InstallMode { Release, Prerelease, Master };
const char* installModeName(InstallMode m);

struct ProjectConfig {
  std::string dir;  ///< absolute project folder
  std::string file; ///< absolute path of project.yml
  std::string name;
  std::vector<std::string> modulePath; ///< absolute
  std::string downloadPath;            ///< absolute; default: first modulepath entry, else <dir>/libs
  std::vector<RepoEntry> repos;
  std::vector<Requirement> requirements;
  InstallMode installMode = InstallMode::Release;
  bool freezeRecursive = false;
  bool builtinStd =
      false; ///< `builtin_std: true` (or --builtin-std): the built-in std even when one is installed
  std::string freezeOperator = "~=";
  std::vector<std::string> errors;
};

struct ModuleConfig {
  std::string dir;
  std::string name;
  std::string versionText;
  std::optional<Version> version;
  std::vector<Requirement> requirements;
  std::string compilerVersion;
  std::vector<std::string> errors;
};

/// Reads <projectDir>/project.yml.
ProjectConfig readProjectConfig(const std::string& projectDir);
/// Parses module.yml text (`where` names it in errors).
ModuleConfig parseModuleConfig(const std::string& text, const std::string& where);
/// Reads <moduleDir>/module.yml.
ModuleConfig readModuleConfig(const std::string& moduleDir);

/// Returns `yamlText` with its top-level `requires:` block replaced by `entries` (appended when absent),
/// keeping every other line and comment as it was.
std::string replaceRequiresBlock(const std::string& yamlText, const std::vector<std::string>& entries);

/// The top-level module names imported by the .cf text (`import a::b` gives "a"; `import x as y` gives "x").
std::vector<std::string> importedModules(const std::string& cfText);

/// Small file helpers shared by the verbs. readWholeFile is false for a missing file, one that is not a
/// regular file (FIFO, device) or one over 64 MiB (the default source-size limit), without opening it.
bool readWholeFile(const std::string& path, std::string& out);
bool writeWholeFile(const std::string& path, const std::string& text, std::string& error);
std::string joinPath(const std::string& a, const std::string& b);

} // namespace inm::projectmgr

// Loading a project: project.yml, the module path, and every file reachable through imports, each
// parsed and tagged with its namespace. Part of the frontend stage (its product is a list of ASTs).
// Invariant: files appear once each, main.cf first; a namespace's files precede nothing in particular
// (order carries no meaning: declarations and statements are order-independent).
#pragma once

#include "frontend/Ast.h"
#include "frontend/Frontend.h"
#include "support/Diagnostics.h"

#include <string>
#include <vector>

namespace inm::frontend {

/// One parsed source file and the namespace it defines ("__config__", "std", "mod::sub").
struct SourceFile {
  std::string ns;
  std::string moduleName; // top-level module ("__config__" for main.cf)
  std::string moduleDir;  // directory of the module (project dir for main.cf)
  Ast ast;
};

/// The project as the compiler sees it.
struct Project {
  std::string dir; // absolute project directory
  std::string name;
  std::vector<std::string> modulePath;               // absolute directories searched for modules
  std::vector<std::string> relationPrecedencePolicy; // raw rules from project.yml
  std::vector<SourceFile> files;                     // main.cf first
  /// The std module the compile loads (docs/modules.md "The std module"): the project's own std (a `std`
  /// module on its module path) unless `builtin_std: true` in project.yml or LoadOptions::builtinStd.
  std::string stdDir;
  bool ownStd = false;      // stdDir is the project's own std, loaded like any module (model and Python)
  std::string builtinStdBy; // why the built-in std is used although the project has one ("" = not forced)
  bool builtinStdOption = false; // project.yml `builtin_std: true`
};

struct LoadOptions {
  std::string projectDir = ".";
  std::string mainFile = "main.cf";
  std::string stdDir;      // our shipped std module (found next to the binary if empty)
  bool autostd = true;     // implicitly load std
  bool builtinStd = false; // --builtin-std: our built-in std even when the module path has a std
  ParseOptions parse;      // for every file of the project
};

/// Reads project.yml, then parses main.cf and all transitively imported module files. Problems
/// (missing project.yml, bad yaml, unknown module, syntax errors) are reported to `diags`.
Project loadProject(const LoadOptions& opts, SourceManager& sm, StringTable& strings,
                    DiagnosticEngine& diags);

/// Directory of the std module shipped with this build (install or source tree), "" if not found.
std::string defaultStdDir();

} // namespace inm::frontend

// Entry of the Python bridge: a project's module `plugins/` packages, imported as `inmanta_plugins.<module>`
// in an embedded CPython, become plugin signatures for ir::lower, plugin implementations for
// runtime::evaluate, resource registrations for exporter::exportModel, and the code registered with the
// version. Runs between loadProject and lower. Invariant: a project without Python plugin packages starts no
// interpreter (findPythonModules is plain file-system work and loadPython returns an inactive setup).
#pragma once

#include "exporter/Exporter.h"
#include "exporter/ResourceRegistry.h"
#include "frontend/Project.h"
#include "ir/Lower.h"
#include "runtime/Plugins.h"
#include "support/Diagnostics.h"

#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace inm::pybridge {

/// A module of the project with a Python plugins package.
struct PythonModule {
  std::string name;      ///< top-level module name ("fs")
  std::string moduleDir; ///< the module's directory
};

/// What the Python code of the project contributes to the pipeline (owned by the driver).
struct PythonSetup {
  std::deque<std::string> signatures;      ///< storage behind pluginSpecs[i].signature
  std::vector<ir::PluginSpec> pluginSpecs; ///< for ir::lower
  runtime::PluginRegistry plugins;         ///< for EvalOptions::extraPlugins
  exporter::ResourceRegistry resources;    ///< std + Python registrations, for ExportOptions::registry
  std::vector<exporter::ModuleCode> code;  ///< for ExportOptions::code
  bool active = false;                     ///< an interpreter was started
  /// The project's own std is loaded with its Python: its plugins and resources replace the native std's (no
  /// native std plugin, resource registration or dependency manager is used).
  bool ownStd = false;

  PythonSetup() : resources(exporter::ResourceRegistry::standard()) {}
};

/// The loaded modules that have `plugins/__init__.py`: std among them only when it is the project's own std
/// (the built-in std's plugins are native).
std::vector<PythonModule> findPythonModules(const frontend::Project& project);

/// Starts the interpreter (if `modules` is not empty), imports every module's plugins package and collects
/// its plugins and resource classes into `out`. Import errors and invalid annotations are diagnostics.
void loadPython(const frontend::Project& project, const std::vector<PythonModule>& modules, SourceManager& sm,
                DiagnosticEngine& diags, PythonSetup& out);

/// One request of a plugin's server client (`Context.get_client()`): path below the server root, query pairs,
/// JSON body text (empty = none) and the environment for X-Inmanta-tid (empty = the configured one).
struct ServerRequest {
  std::string method, path;
  std::vector<std::pair<std::string, std::string>> query;
  std::string body;
  std::string environment;
};
/// The server's answer: its status and body text; status 0 when there was no answer (body = the error text).
struct ServerAnswer {
  unsigned status = 0;
  std::string body;
};
using ServerCall = std::function<ServerAnswer(const ServerRequest&)>;

/// Makes the orchestrator reachable from plugins for this compile (push-mode export, the server's compile
/// service): `Context.get_client()` sends its calls through `call`; `environment` is the compile's
/// environment. Without it, get_client()/run_sync() raise.
void setServer(ServerCall call, std::string environment);

/// Directory of our `inmanta` Python package (install or source tree), "" if not found.
std::string pythonPackageDir();

} // namespace inm::pybridge

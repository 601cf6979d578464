// Entry of the exporter stage: evaluated model -> versioned resource graph artifact (docs/artifact.md).
// Resources are the instances of entities registered in the resource registry (std's File, Directory,
// NullResource, …); their ids, fields, requires edges, undefined flags, resource sets and files are
// serialised deterministically (sorted keys, stable order) and streamed to the output.
#pragma once

#include "runtime/Model.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace inm::exporter {

class ResourceRegistry;

/// The Python code of one module, registered with the version (orchestrator.md §3.3 step 4) so executors
/// load the code of the version they deploy: its plugins/ files (path relative to the module directory,
/// content) and its Python requirements (module.yml / requirements.txt lines).
struct ModuleCode {
  std::string module;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> requirements;
};

struct ExportOptions {
  int64_t version = 0;     // model version written into ids (",v=N")
  std::string environment; // environment id, if known
  std::string projectDir;
  /// The resource registrations to use; nullptr = ResourceRegistry::standard() (the std resources).
  const ResourceRegistry* registry = nullptr;
  /// Python code of the modules with plugins (written as `python_code`, contents in `files`); empty: no key.
  std::vector<ModuleCode> code;
  /// Called at the end of each inner phase ("export collect", "export graph", "export write") when set: the
  /// driver's per-phase statistics.
  std::function<void(llvm::StringRef)> phaseEnd;
  /// The caller ends the process right after: the export's working data is not freed (like
  /// runtime::EvalOptions::skipTeardown).
  bool skipTeardown = false;
};

struct ExportSummary {
  size_t resources = 0;
  size_t undefined = 0;
  size_t files = 0;
  size_t agents = 0;
  size_t resourceSets = 0;
};

/// Writes the artifact JSON for `model` to `os`. Export errors (dependency cycles, a resource in two
/// resource sets, …) go to `diags`; returns the counts for the one-line summary.
ExportSummary exportModel(const runtime::Model& model, DiagnosticEngine& diags, const ExportOptions& opts,
                          llvm::raw_ostream& os);

} // namespace inm::exporter

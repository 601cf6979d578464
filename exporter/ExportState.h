// The exporter's working data between its phases (private to the stage): collect resources from the
// model (Collect.cpp), order them by id and build the requires graph and resource sets (Exporter.cpp),
// write the artifact (ArtifactWriter.cpp). Field values are runtime Values; strings computed by mappers
// live in this state's arena. Invariant after ordering: resources are sorted by unversioned id, unique,
// and byInstance maps an instance to its resource number (kNone when it is not exported).
#pragma once

#include "exporter/Exporter.h"
#include "exporter/Files.h"
#include "exporter/ResourceRegistry.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace inm::exporter {

inline constexpr uint32_t kNone = UINT32_MAX;

struct ExportedResource {
  uint32_t type = 0; ///< index into the registry's types()
  runtime::InstanceId inst;
  std::string id; ///< unversioned, escaped
  std::string agent;
  uint32_t firstField = 0; ///< values in ExportState::fieldValues, one per type's field
  bool undefined = false;
  std::vector<uint32_t> deps; ///< resource numbers, sorted, unique (after ordering)
};

struct ExportState {
  ExportState(const runtime::Model& m, const BoundRegistry& b) : model(m), bound(b) {}
  const runtime::Model& model;
  const BoundRegistry& bound;
  runtime::ValueArena arena;
  std::vector<std::unique_ptr<runtime::ValueArena>> moreArenas; ///< of a parallel collection's other part
  FileStore files;
  std::vector<ExportedResource> resources;
  std::vector<runtime::Value> fieldValues;
  std::vector<uint32_t> byInstance;                  ///< per instance index
  std::vector<std::string> agents;                   ///< sorted, unique
  std::map<std::string, std::vector<uint32_t>> sets; ///< name -> sorted resource numbers

  const ResourceType& typeOf(const ExportedResource& r) const { return bound.registry().types()[r.type]; }
  /// The exported value of field `name` of resource `r`, nullptr if the type has no such field.
  const runtime::Value* field(uint32_t r, llvm::StringRef name) const;
};

/// Builds every resource of the model (ids, fields, undefined flags, files); errors go to `diags`.
void collectResources(ExportState& state, DiagnosticEngine& diags);

/// Writes the artifact (docs/artifact.md) for a complete, error-free state.
void writeArtifact(const ExportState& state, const ExportOptions& opts, llvm::raw_ostream& os);

} // namespace inm::exporter

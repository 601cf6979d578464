// The exporter's memory of its last push to an environment, for delta versions (docs/server.md "Delta
// versions"): which version it stored there, that version's content token, each resource's fingerprint and
// resource set, and the files the server has. Kept in one file per environment under the project
// (`.inmanta_export/<environment>.state`) and written only after a push the server accepted. Invariant: a
// state describes exactly the resources of `version` as this exporter sent them; a state that cannot be read
// is treated as absent (the next push is a whole one), never as partial knowledge.
#pragma once

#include <llvm/Support/Error.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace inm::client {

struct DeltaResource {
  uint64_t fingerprint[2] = {0, 0};
  std::string resourceSet; ///< "" = the shared set
};

struct DeltaState {
  std::string server;      ///< the endpoint's address (host:port) the state was pushed to
  std::string environment; ///< lower-case uuid
  int64_t version = 0;
  std::string token;                                        ///< the version's content token on the server
  std::unordered_map<std::string, DeltaResource> resources; ///< by unversioned id
  std::unordered_set<std::string> files;                    ///< sha1 hex of the files stored on the server
};

/// The state file of `environment` under `projectDir`.
std::string deltaStatePath(const std::string& projectDir, const std::string& environment);

/// Reads a state file; nullopt when it is absent or not a state this code wrote (the caller pushes whole).
std::optional<DeltaState> readDeltaState(const std::string& path);

/// Writes the state atomically (a temporary file renamed over `path`), creating the folder.
llvm::Error writeDeltaState(const std::string& path, const DeltaState& state);

} // namespace inm::client

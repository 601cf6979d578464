// `inmanta export` push mode: turns our export artifact (docs/artifact.md, format_version 1) into the calls
// of the reference's 11.5.5 exporter (orchestrator.md §18): reserve_version, file stat + upload, codebatched,
// put_version (or v2 partial), and release with -d. Invariant: the artifact text is parsed once and the
// put_version body serialised once; files go up in parallel, never one request per resource.
#pragma once

#include "client/Client.h"

#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <string>
#include <vector>

namespace inm::client {

struct PushOptions {
  bool partial = false; // --partial: PUT /api/v2/version/partial, the server picks the version
  bool release = false; // -d: release the stored version
  std::vector<std::string> removedResourceSets; // --delete-resource-set (partial only)
  nlohmann::json exportMetadata;                // version_info.export_metadata (an object)
  std::string compilerVersion;
  unsigned parallelUploads = 8;
  bool fileBatches = true; // use our server's `PUT /api/v1/files` when it announces it (docs/server.md)
  /// The delta state file (DeltaState.h); "" = always push whole versions. With a state that describes the
  /// environment's latest version and a server announcing `delta_version`, only the changes go up.
  std::string deltaStatePath;
};

struct PushResult {
  int64_t version = 0;
  size_t resources = 0;
  size_t filesUploaded = 0; // missing on the server, so sent
  size_t filesKnown = 0;    // already on the server
  size_t fileBatches = 0;   // requests of our file-batch extension they went up in (0: one request per file)
  /// With -d: true when the server had already released the version itself (the environment's auto_deploy)
  /// and answered the release with 409; the reference's exporter ignores that answer, and so do we.
  bool releasedByServer = false;
  bool delta = false; ///< the version went up as a delta (PUT /api/v2/version/delta)
  int64_t deltaBase = 0;
  size_t changed = 0; ///< with delta: new or changed resources sent
  size_t removed = 0; ///< with delta: ids of removed resources sent
  /// Set when a delta was refused and the whole version was pushed instead: the line saying why.
  std::string deltaFallback;
};

/// POST /api/v2/reserve_version: the next version number of the client's environment.
llvm::Expected<int64_t> reserveVersion(Client& client);

/// Pushes `artifact` (the exporter's JSON, written with model version `version`; 0 for a partial export).
/// Progress lines go to `log` when given.
llvm::Expected<PushResult> pushArtifact(Client& client, const std::string& artifact, int64_t version,
                                        const PushOptions& options, llvm::raw_ostream* log = nullptr);

} // namespace inm::client

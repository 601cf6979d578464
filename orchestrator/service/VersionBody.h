// The put_version body as store rows (VersionBody.cpp), for the version use cases in ServiceVersions.cpp.
#pragma once

#include "StreamInput.h"
#include "store/Store.h"

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

namespace inm::service {

/// A version being built: the store input plus each resource's unversioned requires (same order).
struct Built {
  store::VersionInput in;
  std::vector<std::vector<std::string>> requiresOf;
};

/// Parses a put_version body into store rows; Failure(BadRequest) names the offending field. The graph
/// checks run unless `partial` (a partial export may require resources of its base version) or not `graph`
/// (a delta's resources require resources of its base: the store checks the materialised version).
llvm::Expected<Built> parseVersion(const std::string& env, const nlohmann::json& body, bool partial,
                                   bool graph = true);

/// Merges a partial export into its base version's resources (orchestrator.md §3.7); Failure(BadRequest)
/// names the rule that is broken.
llvm::Error mergePartial(Built& b, const nlohmann::json& base, const std::set<std::string>& removedSets);

/// Parses a put_version body from `in` for Store::putVersionStreamed: resources are checked, hashed and
/// written to `sink` in batches of kStreamBatch as they are read (held back only while the body has not yet
/// named its version); the rest is checked like parseVersion does.
llvm::Expected<store::StreamedVersion> streamVersion(FileChunks& in, store::ResourceSink& sink,
                                                     size_t& count);

} // namespace inm::service

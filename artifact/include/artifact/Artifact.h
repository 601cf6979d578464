// The export artifact (docs/artifact.md, format_version 1) as data, and its reader. The exporter writes the
// document; the orchestrator and tools read it back through readArtifact, which checks what a consumer relies
// on: a known format_version, parseable ids, closed requires, and every file's content matching its sha1 key.
// Invariant: a value returned by readArtifact passed every check; a failure names the key and the cause.
#pragma once

#include "artifact/ResourceId.h"

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace inm::artifact {

/// The format_version this library reads and writes.
inline constexpr int kFormatVersion = 1;

/// One exported resource.
struct ArtifactResource {
  ResourceId id;                      ///< parsed versioned id
  std::string unversionedId;          ///< id.str()
  std::vector<std::string> requires_; ///< unversioned ids
  bool undefined = false;             ///< depends on an unknown
  nlohmann::json attributes;          ///< every key but id, version, requires, undefined
};

/// A whole artifact document.
struct Artifact {
  int formatVersion = kFormatVersion;
  int64_t version = 0;
  nlohmann::json compile; ///< compile metadata, as written
  std::vector<std::string> agents;
  std::vector<ArtifactResource> resources;
  std::map<std::string, std::vector<std::string>> resourceSets; ///< set name -> unversioned ids
  std::map<std::string, std::string> files;                     ///< sha1 hex -> content
};

/// Parses and checks an artifact document; `origin` names it in errors.
llvm::Expected<Artifact> readArtifact(const std::string& text, const std::string& origin);

/// sha1 hex of `bytes` (the key of a file in the artifact and in the orchestrator's file store).
std::string sha1Hex(const std::string& bytes);

} // namespace inm::artifact

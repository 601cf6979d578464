// The artifact turned into the put_version body the server takes (orchestrator.md §13, docs/cli.md "push"),
// built on the streaming reader (ArtifactScan.h) without a JSON tree of the resources: each resource's
// members are copied as text, except that the artifact's `undefined` member is dropped (it becomes a
// `resource_state` entry) and every `requires` entry gets the `,v=<version>` suffix. Used by the client's
// push and by its delta push (the per-resource fingerprints). Invariant: the output is valid JSON whenever
// the input is; malformed input is an error naming the resource or the byte offset.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace inm::artifact {

/// The put_version wire spelling of the state of a resource that depends on an unknown (`resource_state`
/// values; the orchestrator's model/Vocabulary.h spells the same word, checked by a unit test).
inline constexpr llvm::StringLiteral kUndefinedResourceState = "undefined";

/// One resource of the rewritten array: its unversioned id, a 128-bit fingerprint of everything but its id
/// and version (so the same resource exported as another version has the same fingerprint: the delta push
/// compares them), whether it is undefined, and where its rewritten object lies in `resourcesJson`.
struct PutVersionEntry {
  std::string id;
  uint64_t fingerprint[2] = {0, 0};
  bool undefined = false;
  size_t begin = 0, end = 0;
};

struct PutVersionParts {
  int64_t formatVersion = 0;
  std::string resourcesJson; // the rewritten `resources` array, as JSON text
  size_t resources = 0;
  nlohmann::json resourceState = nlohmann::json::object(); // unversioned id -> "undefined"
  std::set<std::string> types;                             // resource types (the id before '[')
  nlohmann::json files = nlohmann::json::object();         // sha1 -> content, as in the artifact
  nlohmann::json resourceSets = nlohmann::json::object();  // set name -> unversioned ids
  nlohmann::json pythonCode = nlohmann::json::array();     // the optional `python_code` (docs/pybridge.md)
  std::vector<PutVersionEntry> entries;                    // per resource, in the artifact's order
};

/// Splits and rewrites the artifact `text` for model version `version`; without `withFiles` the `files`
/// member is only skipped (parts.files stays empty: the caller reads it with artifactFiles).
llvm::Expected<PutVersionParts> toPutVersionBody(std::string_view text, int64_t version,
                                                 bool withFiles = true);

/// Only the artifact's `files` (sha1 -> content): the other members are skipped, not rewritten, so the file
/// uploads can start while the resources are rewritten.
llvm::Expected<nlohmann::json> artifactFiles(std::string_view text);

/// The sources of a codebatched body for one resource type, from an artifact's `python_code`:
/// {sha1: [path, python module name, [requirements]]}, e.g. "plugins/sub/x.py" of module m ->
/// "inmanta_plugins.m.sub.x".
nlohmann::json codeSources(const nlohmann::json& pythonCode);

} // namespace inm::artifact

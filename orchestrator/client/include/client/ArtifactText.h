// Used by pushArtifact (public for its unit tests): a one-pass rewrite of the export artifact's text into the
// resource list of a put_version body, without building a JSON tree of 100k resources. Only the top level and
// each resource's own members are scanned; member texts are copied as they are, except that the `undefined`
// member is dropped (it becomes a `resource_state` entry) and every `requires` entry gets the `,v=<version>`
// suffix. Invariant: the output is valid JSON whenever the input is; malformed input is an error naming the
// byte offset.
#pragma once

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace inm::client::detail {

/// One resource of the rewritten array: its unversioned id, a 128-bit fingerprint of everything but its id
/// and version (so the same resource exported as another version has the same fingerprint: the delta push
/// compares them, Push.cpp), whether it is undefined, and where its rewritten object lies in `resourcesJson`.
struct ResourceEntry {
  std::string id;
  uint64_t fingerprint[2] = {0, 0};
  bool undefined = false;
  size_t begin = 0, end = 0;
};

struct ArtifactParts {
  int64_t formatVersion = 0;
  std::string resourcesJson; // the rewritten `resources` array, as JSON text
  size_t resources = 0;
  nlohmann::json resourceState = nlohmann::json::object(); // unversioned id -> "undefined"
  std::set<std::string> types;                             // resource types (the id before '[')
  nlohmann::json files = nlohmann::json::object();         // sha1 -> content, as in the artifact
  nlohmann::json resourceSets = nlohmann::json::object();  // set name -> unversioned ids
  nlohmann::json pythonCode = nlohmann::json::array();     // the optional `python_code` (docs/pybridge.md)
  std::vector<ResourceEntry> entries;                      // per resource, in the artifact's order
  std::string scratch;                                     // reused by the rewrite (fingerprint text)
};

/// The sources of a codebatched body for one resource type, from an artifact's `python_code`:
/// {sha1: [path, python module name, [requirements]]}, e.g. "plugins/sub/x.py" of module m ->
/// "inmanta_plugins.m.sub.x".
nlohmann::json codeSources(const nlohmann::json& pythonCode);

/// Splits and rewrites `text` for model version `version`; without `withFiles` the `files` member is only
/// skipped (parts.files stays empty: the caller reads it with artifactFiles).
llvm::Expected<ArtifactParts> rewriteArtifact(const std::string& text, int64_t version,
                                              bool withFiles = true);

/// Only the artifact's `files` (sha1 -> content): the other members are skipped, not rewritten, so the file
/// uploads can start while the resources are rewritten.
llvm::Expected<nlohmann::json> artifactFiles(const std::string& text);

} // namespace inm::client::detail

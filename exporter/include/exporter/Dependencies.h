// Requires-graph logic of the exporter on plain data, so it is testable without a model: std's
// dir_before_file rule, edge normalisation and cycle detection. Resources are numbered 0..n-1 in
// artifact order (ascending id), which makes every result deterministic.
// Invariant: functions here never look at ids or the model; callers map numbers to resources.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace inm::exporter {

/// A File or Directory for dir_before_file: its host (any stable number identifying the Host instance),
/// whether it is a Directory, and its path.
struct PathResource {
  uint32_t host = 0;
  bool isDirectory = false;
  llvm::StringRef path;
};

/// std's dir_before_file: every resource whose path starts with (plain string prefix) the path of a
/// Directory on the same host, other than itself, requires that Directory. Appends (from, to) pairs of
/// indices into `resources`. Runs in O(total path length) hash lookups instead of the reference's
/// all-pairs loop, with the same result ("/app2/x" requires "/app"; a File requires a Directory of equal
/// path; a Directory never requires itself).
void dirBeforeFile(llvm::ArrayRef<PathResource> resources, std::vector<std::pair<uint32_t, uint32_t>>& edges);

/// Adjacency lists: requires[i] = resources i requires.
using Graph = std::vector<std::vector<uint32_t>>;

/// Sorts every adjacency list and removes duplicates.
void normalizeGraph(Graph& graph);

/// The dependency cycles of `graph` (normalised): one per strongly connected component that contains a
/// cycle (size > 1, or a self edge), as the node sequence of one shortest cycle through the component's
/// smallest node, starting at that node (the closing repetition is not included). Components are listed
/// by ascending smallest node. Iterative: safe for very long chains.
std::vector<std::vector<uint32_t>> findCycles(const Graph& graph);

} // namespace inm::exporter

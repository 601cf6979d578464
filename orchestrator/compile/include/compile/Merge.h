// The compile queue's merging rule (orchestrator.md §11) as a pure function: when a run starts, the oldest
// queued request of an environment runs and absorbs every other queued request with an equal (environment,
// do_export, requested environment variables, partial); they share its result through substitute_compile_id,
// and the run pulls first if any of them asked for it. No I/O: the store feeds rows in and applies the Batch.
#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <cstddef>
#include <string>
#include <vector>

namespace inm::compile {

/// One queued (not yet started) compile request, as read from its `compile` row.
struct QueuedCompile {
  std::string id;          ///< compile.id (uuid text)
  std::string environment; ///< compile.environment
  std::string envVars;     ///< requested_environment_variables, canonical JSON (keys sorted)
  bool doExport = true;
  bool partial = false;
  bool forceUpdate = false;
};

/// What one run does: the request that runs and the ones it absorbs.
struct Batch {
  size_t head = 0;              ///< index into the queue of the request that runs
  std::vector<size_t> absorbed; ///< indices of requests that take the head's result
  bool forceUpdate = false;     ///< pull first: true if any request of the batch asked for it
};

/// True if `b` may share the result of a run of `a`.
bool canMerge(const QueuedCompile& a, const QueuedCompile& b);

/// The batch for the next run of a queue given oldest first (all of one environment); the queue must not be
/// empty.
Batch planBatch(llvm::ArrayRef<QueuedCompile> queue);

} // namespace inm::compile

// The merging rule of the compile queue (see include/compile/Merge.h).
#include "compile/Merge.h"

#include <cassert>

namespace inm::compile {

bool canMerge(const QueuedCompile& a, const QueuedCompile& b) {
  return a.environment == b.environment && a.doExport == b.doExport && a.envVars == b.envVars &&
         a.partial == b.partial;
}

Batch planBatch(llvm::ArrayRef<QueuedCompile> queue) {
  assert(!queue.empty() && "planBatch needs a queued request");
  Batch b;
  b.forceUpdate = queue[0].forceUpdate;
  for (size_t i = 1; i < queue.size(); ++i)
    if (canMerge(queue[0], queue[i])) {
      b.absorbed.push_back(i);
      b.forceUpdate |= queue[i].forceUpdate;
    }
  return b;
}

} // namespace inm::compile

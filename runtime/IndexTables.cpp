// Entity indexes and the lookups waiting on them (see IndexTables.h).
#include "Evaluator.h"

namespace inm::runtime {

void IndexTables::addAndWake(uint32_t index, llvm::StringRef key, InstanceId inst,
                             llvm::SmallVectorImpl<UnitId>& woken) {
  tables_[index].try_emplace(key, inst.index);
  if (lookupWaiters_.empty()) return;
  auto range = lookupWaiters_.equal_range(std::to_string(index) + "|" + key.str());
  for (auto w = range.first; w != range.second; ++w) woken.push_back(w->second);
  lookupWaiters_.erase(range.first, range.second);
}

void IndexTables::waitFor(const std::string& waitKey, PendingLookup p) {
  lookupWaiters_.emplace(waitKey, p.unit);
  pendingLookups_.push_back(std::move(p));
}

} // namespace inm::runtime

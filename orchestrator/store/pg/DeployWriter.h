// The deploy part of SchedulerStore::write (private to inm_store_scheduler): action rows, action->resource
// rows and the rps result columns of one Effects, sent with COPY (Copy.h). Invariant: runs inside the
// caller's transaction and writes, per resource, the state of its latest event in the Effects (by seq).
#pragma once

#include "scheduler/Scheduler.h"

#include <pqxx/pqxx>

#include <string>

namespace inm::scheduler::pg {

void writeDeploys(pqxx::work& tx, const std::string& env, const Effects& e);

} // namespace inm::scheduler::pg

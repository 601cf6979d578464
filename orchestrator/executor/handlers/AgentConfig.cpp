// std::AgentConfig (std.md §4) where no scheduler applies it: `inmanta scheduler` writes the agent's entry of
// `autostart_agent_map` itself (orchestrator/schedhost/SchedulerExecutors.cpp, docs/deploy.md "Agentless over
// SSH") and never sends this resource to an executor; an executor that gets one anyway (embedded `inmanta
// deploy`, an external agent) cannot reach the environment's settings, so it does nothing and reports
// deployed (dry in a dry run).
#include "StdHandlers.h"

namespace inm::executor::handlers {

namespace {

class AgentConfigHandler : public HandlerAPI {
 public:
  void execute(HandlerContext& ctx, const Resource& resource, bool dryRun) override {
    ctx.debug(
        "AgentConfig %(resource_id)s needs no action here: only the scheduler writes autostart_agent_map",
        {{"resource_id", resource.id}});
    ctx.setResourceState(dryRun ? ResourceState::Dry : ResourceState::Deployed);
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeAgentConfigHandler() { return std::make_unique<AgentConfigHandler>(); }

} // namespace inm::executor::handlers

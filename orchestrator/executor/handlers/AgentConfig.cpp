// std::AgentConfig (std.md §4): in the reference it edited the removed `autostart_agent_map` setting; agents
// are now started by the scheduler, so the handler does nothing and reports deployed (dry in a dry run).
#include "StdHandlers.h"

namespace inm::executor::handlers {

namespace {

class AgentConfigHandler : public HandlerAPI {
 public:
  void execute(HandlerContext& ctx, const Resource& resource, bool dryRun) override {
    ctx.debug("AgentConfig %(resource_id)s needs no action: agents are started by the scheduler",
              {{"resource_id", resource.id}});
    ctx.setResourceState(dryRun ? ResourceState::Dry : ResourceState::Deployed);
  }
};

} // namespace

std::unique_ptr<HandlerAPI> makeAgentConfigHandler() { return std::make_unique<AgentConfigHandler>(); }

} // namespace inm::executor::handlers

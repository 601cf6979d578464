// std::testing::NullResource (std.md §4): touches nothing. read fails when `fail` is true;
// create/update/delete only report the change. It is the deploy benchmark's resource, so it does no I/O at
// all.
#include "StdHandlers.h"

namespace inm::executor::handlers {

namespace {

class NullResourceHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    const Json& fail = current.get("fail");
    if (fail.is_boolean() && fail.get<bool>()) throw std::runtime_error("This resource is set to fail");
  }
  void createResource(HandlerContext& ctx, const Resource&) override { ctx.setCreated(); }
  void updateResource(HandlerContext& ctx, const Json&, const Resource&) override { ctx.setUpdated(); }
  void deleteResource(HandlerContext& ctx, const Resource&) override { ctx.setPurged(); }
};

} // namespace

std::unique_ptr<HandlerAPI> makeNullResourceHandler() { return std::make_unique<NullResourceHandler>(); }

} // namespace inm::executor::handlers

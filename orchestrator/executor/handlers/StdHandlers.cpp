// The std handler table: resource type -> handler (std.md §4). `std::File` and friends are also registered
// under the `fs::` names the types moved to, since the handler behaviour is the same.
#include "StdHandlers.h"

namespace inm::executor {

namespace handlers {
std::string optString(const Resource& r, const char* name) {
  const Json& v = r.get(name);
  return v.is_string() ? v.get<std::string>() : std::string();
}
} // namespace handlers

void registerStdHandlers(HandlerRegistry& registry) {
  using namespace handlers;
  for (const char* ns : {"std", "fs"}) {
    std::string p = std::string(ns) + "::";
    registry.add(p + "File", makeFileHandler);
    registry.add(p + "Directory", makeDirectoryHandler);
    registry.add(p + "Symlink", makeSymlinkHandler);
  }
  registry.add("std::testing::NullResource", makeNullResourceHandler);
  registry.add("std::AgentConfig", makeAgentConfigHandler);
  registry.add("std::Package", makePackageHandler);
  registry.add("std::Service", makeServiceHandler);
}

} // namespace inm::executor

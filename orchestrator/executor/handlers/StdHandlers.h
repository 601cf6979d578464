// Factories of the std handlers, one per file in this folder (private to the executor library); the public
// entry is registerStdHandlers() in include/executor/Handler.h.
#pragma once

#include "executor/Handler.h"

#include <memory>

namespace inm::executor::handlers {

std::unique_ptr<HandlerAPI> makeFileHandler();
std::unique_ptr<HandlerAPI> makeDirectoryHandler();
std::unique_ptr<HandlerAPI> makeSymlinkHandler();
std::unique_ptr<HandlerAPI> makeNullResourceHandler();
std::unique_ptr<HandlerAPI> makeAgentConfigHandler();
std::unique_ptr<HandlerAPI> makePackageHandler();
std::unique_ptr<HandlerAPI> makeServiceHandler();

/// The optional string attribute `name` of `r` ("" when null or absent).
std::string optString(const Resource& r, const char* name);

} // namespace inm::executor::handlers

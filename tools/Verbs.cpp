// The table of orchestrator verbs (see Verbs.h). Add one row per verb; its code lives in tools/<Verb>Main.cpp.
#include "Verbs.h"

namespace inm::tools {

int compileServiceRunMain(const std::vector<std::string>& args, int verbose);

const Verb kVerbs[] = {
    {"compile-service-run", "drain the server's compile queues without HTTP (tests, benchmarks)", compileServiceRunMain},
    {nullptr, nullptr, nullptr},
};

int (*const kCliMain)(const std::vector<std::string>& args) = nullptr;

}  // namespace inm::tools

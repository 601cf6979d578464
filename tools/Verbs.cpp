// The table of orchestrator verbs (see Verbs.h). Add one row per verb; its code lives in tools/<Verb>Main.cpp.
#include "Verbs.h"

namespace inm::tools {

int serverMain(const std::vector<std::string>& args, int verbose);

const Verb kVerbs[] = {
    {"server", "run the orchestrator server (REST API on PostgreSQL, see docs/server.md)", serverMain},
    {nullptr, nullptr, nullptr},
};

int (*const kCliMain)(const std::vector<std::string>& args) = nullptr;

}  // namespace inm::tools

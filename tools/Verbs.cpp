// The table of orchestrator verbs (see Verbs.h). Add one row per verb; its code lives in tools/<Verb>Main.cpp.
#include "Verbs.h"

namespace inm::tools {

int executorMain(const std::vector<std::string>& args, int verbose);

const Verb kVerbs[] = {
    {"executor", "run handlers for the scheduler (framed protocol on stdin/stdout)", executorMain},
    {nullptr, nullptr, nullptr},
};

int (*const kCliMain)(const std::vector<std::string>& args) = nullptr;

}  // namespace inm::tools

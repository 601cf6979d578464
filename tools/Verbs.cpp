// The table of orchestrator verbs (see Verbs.h). Add one row per verb; its code lives in tools/<Verb>Main.cpp.
#include "Verbs.h"

namespace inm::tools {

int schedulerMain(const std::vector<std::string>& args, int verbose);  // SchedulerMain.cpp

const Verb kVerbs[] = {
    {"scheduler", "run the deploy scheduler of one environment (--environment UUID [-c FILE])", schedulerMain},
    {nullptr, nullptr, nullptr},
};

int (*const kCliMain)(const std::vector<std::string>& args) = nullptr;

}  // namespace inm::tools

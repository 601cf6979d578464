// The table of orchestrator verbs (see Verbs.h). Add one row per verb; its code lives in tools/<Verb>Main.cpp.
#include "Verbs.h"

namespace inm::tools {

const Verb kVerbs[] = {
    {nullptr, nullptr, nullptr},
};

int (*const kCliMain)(const std::vector<std::string>& args) = nullptr;

}  // namespace inm::tools

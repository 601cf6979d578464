// The table of orchestrator verbs (see Verbs.h). Add one row per verb; its code lives in
// tools/<Verb>Main.cpp.
#include "Verbs.h"

namespace inm::tools {

int executorMain(const std::vector<std::string>& args, int verbose);
int schedulerMain(const std::vector<std::string>& args, int verbose); // SchedulerMain.cpp
int deployMain(const std::vector<std::string>& args, int verbose);    // DeployMain.cpp
int serverMain(const std::vector<std::string>& args, int verbose);
int cliMain(const std::vector<std::string>& args);                // tools/CliMain.cpp
int agentMain(const std::vector<std::string>& args, int verbose); // AgentMain.cpp
int compileServiceRunMain(const std::vector<std::string>& args, int verbose);
int litConfigMain(const std::vector<std::string>& args, int verbose); // LitConfigMain.cpp
int projectMain(const std::vector<std::string>& args, int verbose);   // ModuleMain.cpp
int moduleMain(const std::vector<std::string>& args, int verbose);    // ModuleMain.cpp

const Verb kVerbs[] = {
    {"server", "run the orchestrator server (REST API on PostgreSQL, see docs/server.md)", serverMain},
    {"deploy",
     "embedded mode: private PostgreSQL + server, compile, export and deploy this project (--dry-run)",
     deployMain},
    {"scheduler", "run the deploy scheduler of one environment (--environment UUID [-c FILE])",
     schedulerMain},
    {"executor", "run handlers for the scheduler (framed protocol on stdin/stdout)", executorMain},
    {"agent",
     "external agent: run the named agents' resources for a remote server (--server H -e ENV --agent N)",
     agentMain},
    {"compile-service-run", "drain the server's compile queues without HTTP (tests, benchmarks)",
     compileServiceRunMain},
    {"lit-config",
     "print a lit config for tests of your own models (%inmanta, FileCheck, %project; docs/testing.md)",
     litConfigMain},
    {"project", "install|update|freeze|init: the project's v1 modules from git (docs/modules.md)",
     projectMain},
    {"module", "list|add|status|verify|freeze|create: v1 modules of this project (docs/modules.md)",
     moduleMain},
    {nullptr, nullptr, nullptr},
};

int (*const kCliMain)(const std::vector<std::string>& args) = cliMain;

} // namespace inm::tools

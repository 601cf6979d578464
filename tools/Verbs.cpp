// The table of the `inmanta` commands (see Verbs.h) and the help printed from it. Add one row per verb, with
// its usage; its code lives in tools/<Verb>Main.cpp. test/integration/test_cli_help.py runs `inmanta VERB
// --help` for every row.
#include "Verbs.h"

#include "support/Suggest.h"

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

// The options compile and export share (driver/CompileArgs.cpp parses them).
#define INM_COMPILE_OPTIONS                                                                                  \
  "  -f FILE               main file (default main.cf)\n"                                                    \
  "  --project DIR         project directory (default .)\n"                                                  \
  "  --syntax-only         only parse every file of the project and its modules\n"                           \
  "  --builtin-std         use the built-in std even when the module path has a std (docs/modules.md)\n"     \
  "  --dump-ast            print the syntax tree of main.cf and stop\n"                                      \
  "  --dump-ir             print the resolved declarations and stop\n"                                       \
  "  --dump-model          print the evaluated model after compiling\n"                                      \
  "  --diagnostics-format=text|json  how errors are printed (json: one object per line)\n"                   \
  "  --warnings=warn|ignore\n"                                                                               \
  "  --export-compile-data [--export-compile-data-file FILE]\n"                                              \
  "                        write the errors as JSON to FILE (default compile_data.json)\n"                   \
  "  -c, --config FILE     read this configuration file too\n"                                               \
  "  --max-NAME=N          resource limit NAME (docs/limits.md): nesting, inheritance, instances,\n"         \
  "                        string-bytes, list-items, template-steps, format-width, memory-mib, "             \
  "metadata-bytes\n"                                                                                         \
  "  --no-cache, -X        accepted for compatibility\n"                                                     \
  "  -v, -vv, -vvv         more logging (phase timings)\n"

const Verb kVerbs[] = {
    {"compile", "compile the project in the current directory", nullptr,
     "usage: inmanta [-v…] compile [options]\n\n"
     "Compile the project in the current directory (or --project DIR); errors on stderr, exit 1.\n\n"
     "options:\n" INM_COMPILE_OPTIONS
     "  --export-json FILE    compile and write the artifact JSON to FILE (as export -j)\n"},
    {"export", "compile and export the resources (-j FILE writes the artifact, else push to the server)",
     nullptr,
     "usage: inmanta [-v…] export [options] [-j FILE | -e ENV [-d] [server options]]\n\n"
     "Compile the project and export its resources: to FILE with -j, else to the server's environment.\n\n"
     "options:\n" INM_COMPILE_OPTIONS
     "  -j, --export-json FILE  write the artifact JSON to FILE instead of pushing\n"
     "  -e ENV                the environment to push to (else [config] environment in .inmanta)\n"
     "  -d                    release the pushed version (deploy it)\n"
     "  --server_address H, --server_port P\n"
     "                        the server (else [compiler_rest_transport] host, port)\n"
     "  --token T             the token (else [compiler_rest_transport] token)\n"
     "  --ssl | --no-ssl, --ssl-ca-cert FILE  TLS to the server\n"
     "  -m, --metadata JSON   version_info.export_metadata\n"
     "  --partial             a partial export (only the resource sets in this model)\n"
     "  --delete-resource-set S  with --partial: remove resource set S\n"},
    {"server", "run the orchestrator server (REST API on PostgreSQL, see docs/server.md)", serverMain,
     "usage: inmanta [-v…] server [-c FILE]...\n\n"
     "Run the orchestrator server (REST API, compile service, schedulers) on PostgreSQL; see "
     "docs/server.md.\n"
     "Everything else comes from the configuration: [server], [database], [config] state-dir, [auth].\n\n"
     "options:\n"
     "  -c, --config FILE     read this configuration file (repeatable; also --config=FILE)\n"},
    {"deploy",
     "embedded mode: private PostgreSQL + server, compile, export and deploy this project (--dry-run)",
     deployMain,
     "usage: inmanta deploy [--dry-run] [--project DIR]\n\n"
     "Embedded mode: start a private PostgreSQL and server, compile, export and deploy this project, then\n"
     "stop them; see docs/deploy.md.\n\n"
     "options:\n"
     "  --dry-run             report what would change, change nothing\n"
     "  --project DIR         the project directory (default .)\n"},
    {"scheduler", "run the deploy scheduler of one environment (--environment UUID [-c FILE])", schedulerMain,
     "usage: inmanta scheduler --environment UUID [-c FILE]... [--executor process|null]\n"
     "                         [--executor-threads N] [--max-in-flight N]\n\n"
     "Run the deploy scheduler of one environment (the server starts it; see docs/server.md).\n\n"
     "options:\n"
     "  -e, --environment UUID  the environment\n"
     "  -c, --config FILE     read this configuration file (repeatable)\n"
     "  --executor KIND       process (run handlers in executor processes) or null (deploy nothing)\n"
     "  --executor-threads N  handler threads per executor\n"
     "  --max-in-flight N     resources deploying at once\n"},
    {"executor", "run handlers for the scheduler (framed protocol on stdin/stdout)", executorMain,
     "usage: inmanta executor [--threads N] [--file-timeout SECONDS] [--python-artifact FILE | --python-code "
     "DIR]\n\n"
     "Run handlers for the scheduler, which starts it; speaks the executor protocol on stdin/stdout.\n\n"
     "options:\n"
     "  --threads N           handler threads\n"
     "  --file-timeout SECONDS  how long to wait for a file from the server\n"
     "  --python-artifact FILE  load the Python handlers of this artifact\n"
     "  --python-code DIR     load the Python handlers from this directory\n"},
    {"agent",
     "external agent: run the named agents' resources for a remote server (--server H -e ENV --agent N)",
     agentMain,
     "usage: inmanta agent --server HOST [--port PORT] -e ENV --agent NAME [--agent NAME…] [--token T]\n"
     "                     [--ssl] [--ssl-ca-cert FILE] [--threads N] [--state-dir DIR]\n"
     "                     [--shutdown-grace SECONDS] [-c FILE]…\n\n"
     "External agent: deploy the named agents' resources for a remote server; see docs/server.md.\n\n"
     "options:\n"
     "  --server, --host HOST  the server (else [agent_rest_transport] host)\n"
     "  --port PORT           its port (else [agent_rest_transport] port)\n"
     "  -e, --environment ENV  the environment (else [config] environment)\n"
     "  --agent NAME          an agent to run (repeatable; else [config] agent-names)\n"
     "  --token T             the agent token (else [agent_rest_transport] token)\n"
     "  --ssl, --ssl-ca-cert FILE  TLS to the server\n"
     "  --threads N           handler threads (1-256)\n"
     "  --state-dir DIR       where the agent keeps its state (else [config] state-dir)\n"
     "  --shutdown-grace SECONDS  how long running deploys may finish on SIGTERM (default 30)\n"
     "  -c, --config FILE     read this configuration file (repeatable)\n"},
    {"compile-service-run", "drain the server's compile queues without HTTP (tests, benchmarks)",
     compileServiceRunMain,
     "usage: inmanta compile-service-run --db CONNINFO --state-dir DIR [-e ENV --request [--update] "
     "[--no-export]\n"
     "         [--metadata JSON] [--env-var K=V]...] [--serve SECONDS] [--timeout SECONDS] [--compiler "
     "PATH]\n"
     "         [--server-address H --server-port P] [--token T] [--git-username U] [--git-token T]\n"
     "         [--git-ssh-key FILE] [--retention SECONDS]\n\n"
     "Drain the compile queues of the database (see docs/autonomous.md) and exit when they are idle.\n\n"
     "options:\n"
     "  --db CONNINFO         the PostgreSQL database\n"
     "  --state-dir DIR       the server's state directory\n"
     "  -e ENV --request      first request a compile of ENV (--update: pull first; --no-export;\n"
     "                        --metadata JSON; --env-var K=V for the compiler's environment)\n"
     "  --serve SECONDS       keep draining for this long\n"
     "  --timeout SECONDS     the compile timeout\n"
     "  --compiler PATH       the compiler binary\n"
     "  --server-address H, --server-port P, --token T  where the compiler exports to\n"
     "  --git-username U, --git-token T, --git-ssh-key FILE  git credentials\n"
     "  --retention SECONDS   how long compile reports are kept\n"},
    {"lit-config",
     "print a lit config for tests of your own models (%inmanta, FileCheck, %project; docs/testing.md)",
     litConfigMain,
     "usage: inmanta lit-config [-o FILE]          print (or write) a lit config for model tests\n"
     "       inmanta lit-config --lit              print the command that runs lit\n"
     "       inmanta lit-config [--module NAME=PATH]... --scaffold DIR FILE\n\n"
     "Lit tests of your own models; see docs/testing.md, \"For users\".\n\n"
     "options:\n"
     "  -o FILE               write the config to FILE\n"
     "  --lit                 print the command that runs lit\n"
     "  --module NAME=PATH    with --scaffold: a module the project uses (repeatable)\n"
     "  --scaffold DIR FILE   make DIR a project with main.cf = FILE (%project)\n"},
    {"project", "install|update|freeze|init: the project's v1 modules from git (docs/modules.md)",
     projectMain,
     "usage: inmanta project install|update|freeze|init [options]\n\n"
     "The project's v1 modules, installed from git repositories (docs/modules.md).\n\n"
     "commands:\n"
     "  install               resolve requires: (transitively) against the repositories' tags; clone or "
     "fetch\n"
     "                        into downloadpath and check out the chosen tags (nothing changes when up to "
     "date)\n"
     "  update                as install, moving every module to the newest matching version\n"
     "  freeze [-o FILE] [-r] [--operator OP]\n"
     "                        write the installed versions as requirements (project.yml, or FILE; - = "
     "stdout);\n"
     "                        -r: modules' own requirements too; OP one of ==, ~=, >=\n"
     "  init -n NAME [-o DIR] [--default]\n"
     "                        a new project skeleton\n\n"
     "options:\n"
     "  -o, --outfile FILE    freeze: where to write (- = stdout); init (-o, --output-dir): the parent "
     "folder\n"
     "  -r, --recursive       freeze: the modules' own requirements too\n"
     "  --operator OP         freeze: ==, ~= or >= (default: freeze_operator of project.yml)\n"
     "  -n, --name NAME       init: the project's name\n"},
    {"module", "list|add|status|verify|freeze|create: v1 modules of this project (docs/modules.md)",
     moduleMain,
     "usage: inmanta module list|add|status|verify|freeze|create [options]\n\n"
     "The v1 modules of the project in the current directory (docs/modules.md).\n\n"
     "commands:\n"
     "  list [--json] [-r]    name, installed version, constraint, source, dirty/off-tag; which std is used\n"
     "  add NAME[CONSTRAINT] [--override]\n"
     "                        add to requires: in project.yml and install (--v2 is refused: Python "
     "packages)\n"
     "  status                each module's checkout: tag, branch, local changes\n"
     "  verify                exit 1 when an installed module does not match its requirements\n"
     "  freeze [-o FILE] [-r] [--operator OP]\n"
     "                        write the installed versions of the module in the current directory\n"
     "  create NAME           a new v1 module skeleton\n\n"
     "options:\n"
     "  --json                list: one JSON document\n"
     "  --override            add: replace an existing requirement of the module\n"
     "  -o, --outfile FILE    freeze: where to write (- = stdout)\n"
     "  -r, --recursive       freeze: requirements of the modules it requires too\n"
     "  --operator OP         freeze: ==, ~= or >=\n"},
    {nullptr, nullptr, nullptr},
};

#undef INM_COMPILE_OPTIONS

int (*const kCliMain)(const std::vector<std::string>& args) = cliMain;

void printHelp(llvm::raw_ostream& os) {
  os << "usage: inmanta [-v|-vv|-vvv] <command> [options]\n\ncommands:\n";
  for (const Verb* v = kVerbs; v->name; ++v) {
    std::string name = v->name;
    os << "  " << name << std::string(name.size() < 19 ? 19 - name.size() : 1, ' ') << v->help << "\n";
  }
  os << "\nRun `inmanta <command> --help` for the options of a command (--list-verbs lists the commands).\n"
        "The compiler's own options (compile and export) are:\n";
  for (const Verb* v = kVerbs; v->name; ++v)
    if (llvm::StringRef(v->name) == "export") os << llvm::StringRef(v->usage).split("options:\n").second;
  os << "  --version, --help\n";
}

bool printCommandHelp(llvm::raw_ostream& os, llvm::StringRef name) {
  for (const Verb* v = kVerbs; v->name; ++v)
    if (name == v->name && v->usage) {
      os << v->usage;
      return true;
    }
  return false;
}

std::string unknownCommand(const std::string& name) {
  Suggester near(name);
  for (const Verb* v = kVerbs; v->name; ++v) near.add(v->name);
  return "unknown command '" + name + "'" + didYouMeanSuffix(near.best());
}

} // namespace inm::tools

// The per-command help of `inmanta-cli` (orchestrator/cli): one row per command (group, verb) with its
// synopsis, what it does and its options, printed by `inmanta-cli GROUP [VERB] --help`; `--list-verbs` prints
// every command; unknown groups and verbs get the nearest command as a suggestion; a 401 answer gets a hint
// on passing a token. Invariant: every command CliCommands.cpp dispatches has exactly one row here (the
// integration test test_cli_help.py checks the dispatch code against `--list-verbs`).
#include "cli/CliHelp.h"

#include "support/Suggest.h"

#include <llvm/Support/raw_ostream.h>

#include <set>

namespace inm::cli {

namespace {

/// One `inmanta-cli` command. `verb` is "" for a group without verbs (monitor); "setting X" for the
/// `environment setting` verbs.
struct CliCommand {
  const char* group;
  const char* verb;
  const char* synopsis; ///< the arguments after the command words
  const char* summary;
  const char* options; ///< one option per line, "  -x, --long VALUE   what it is"; "" when none
};

constexpr const char* kEnv = "  -e, --environment ENV  the environment (id or name)\n";

const CliCommand kCommands[] = {
    {"project", "create", "-n NAME", "Create a project.", "  -n, --name NAME   the project's name\n"},
    {"project", "list", "", "List the projects.", ""},
    {"project", "show", "PROJECT", "Show a project (by id or name).", ""},
    {"project", "modify", "-n NAME PROJECT", "Rename a project.", "  -n, --name NAME   the new name\n"},
    {"project", "delete", "PROJECT", "Delete a project.", ""},
    {"environment", "create", "-n NAME -p PROJECT [-r URL] [-b BRANCH] [-s]", "Create an environment.",
     "  -n, --name NAME      the environment's name\n"
     "  -p, --project P      its project (id or name)\n"
     "  -r, --repo-url URL   the git repository of the project's model\n"
     "  -b, --branch BRANCH  the branch (default master)\n"
     "  -s, --save           write [config] environment = ID to .inmanta\n"},
    {"environment", "list", "", "List the environments.", ""},
    {"environment", "show", "[--format F] ENV", "Show an environment.",
     "  --format F   print F with {field} replaced by the environment's fields (e.g. {id})\n"},
    {"environment", "save", "ENV", "Write [config] environment = ID to .inmanta.", ""},
    {"environment", "modify", "-n NAME [-r URL] [-b BRANCH] ENV",
     "Rename an environment or change its repository.",
     "  -n, --name NAME      the new name\n"
     "  -r, --repo-url URL   the git repository\n"
     "  -b, --branch BRANCH  the branch (default master)\n"},
    {"environment", "delete", "ENV", "Delete an environment.", ""},
    {"environment", "clear", "ENV", "Remove every version, resource and log of an environment.", ""},
    {"environment", "recompile", "[-u] ENV", "Request a compile of the environment's model on the server.",
     "  -u, --update   update the project's modules (git pull) before compiling\n"},
    {"environment", "setting list", "-e ENV", "List the settings of an environment and their values.", kEnv},
    {"environment", "setting get", "-e ENV -k KEY", "Show one setting.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -k, --key KEY          the setting's name\n"},
    {"environment", "setting set", "-e ENV -k KEY -o VALUE", "Change one setting.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -k, --key KEY          the setting's name\n"
     "  -o, --value VALUE      its new value (converted to the setting's type)\n"},
    {"environment", "setting delete", "-e ENV -k KEY", "Set a setting back to its default.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -k, --key KEY          the setting's name\n"},
    {"agent", "list", "-e ENV", "List the agents of an environment.", kEnv},
    {"compile", "list", "-e ENV [-l N]", "List the environment's compile reports, newest first.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -l, --limit N          at most N reports (default 50, at most 1000)\n"},
    {"dryrun", "request", "-e ENV [--wait] VERSION",
     "Ask the agents what VERSION would change, without changing anything.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -w, --wait             wait until every resource answered, then print the report\n"},
    {"dryrun", "list", "-e ENV [VERSION]", "List the dry runs (of one version).",
     "  -e, --environment ENV  the environment (id or name)\n"},
    {"dryrun", "show", "-e ENV VERSION ID",
     "Show a dry run: the resources that would change, their attributes, and diffs of file contents.",
     "  -e, --environment ENV  the environment (id or name)\n"},
    {"compile", "show", "-e ENV ID", "Show one compile report: each stage's command, exit code and output.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  ID                     the compile id, or a unique prefix of it\n"},
    {"agent", "pause", "-e ENV (--agent NAME | --all)", "Pause one agent or all of them.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --agent NAME           the agent\n"
     "  --all                  every agent of the environment\n"},
    {"agent", "unpause", "-e ENV (--agent NAME | --all)", "Unpause one agent or all of them.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --agent NAME           the agent\n"
     "  --all                  every agent of the environment\n"},
    {"version", "list", "-e ENV", "List the versions of an environment.", kEnv},
    {"version", "compare", "-e ENV FROM TO",
     "Show what changed from one version to another: resources added, deleted and modified, each changed "
     "attribute, and file contents as a unified diff.",
     kEnv},
    {"version", "release", "-e ENV [-p [--full]] VERSION", "Release a version.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -p, --push             deploy it now (an incremental deploy)\n"
     "  --full                 with --push: a full deploy\n"},
    {"version", "report", "-e ENV -i VERSION [-l]", "Show the resources of a version and their state.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  -i, --version VERSION  the version\n"
     "  -l                     detailed: the log of each resource\n"},
    {"param", "list", "-e ENV", "List the parameters of an environment.", kEnv},
    {"param", "get", "-e ENV --name N [--resource R]", "Show one parameter.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --name N               the parameter\n"
     "  --resource R           the resource it belongs to (default: none)\n"},
    {"param", "set", "-e ENV --name N --value V", "Set a parameter.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --name N               the parameter\n"
     "  --value V              its value\n"},
    {"token", "create", "-e ENV [--api] [--compiler] [--agent]", "Create a token for an environment.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --api, --compiler, --agent  the client types the token is for\n"},
    {"token", "bootstrap", "",
     "Sign a token locally with the key of the [auth_jwt_*] section that has sign=true.", ""},
    {"monitor", "", "-e ENV", "Wait until the latest released version is deployed; exit 1 if it failed.",
     kEnv},
    {"action-log", "list", "-e ENV --rvid RVID [--action A]", "List the actions on a resource version.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --rvid RVID            the resource version id (type[agent,attr=value],v=N)\n"
     "  --action A             only actions of this kind (deploy, dryrun, pull, …)\n"},
    {"action-log", "show-messages", "-e ENV --rvid RVID --action-id ID",
     "Show the log messages of one action.",
     "  -e, --environment ENV  the environment (id or name)\n"
     "  --rvid RVID            the resource version id\n"
     "  --action-id ID         the action\n"},
};

constexpr const char* kGlobals =
    "global options (before or after the command):\n"
    "  --host H, --port P     the server (else [cmdline_rest_transport] host, port)\n"
    "  --token T              the token (else [cmdline_rest_transport] token)\n"
    "  --ssl | --no-ssl, --ssl-ca-cert FILE  TLS to the server\n"
    "  -c, --config FILE      read this configuration file too\n"
    "  --json                 print the fetched data as JSON\n";

std::string commandWords(const CliCommand& c) {
  return *c.verb ? std::string(c.group) + " " + c.verb : std::string(c.group);
}

void printCommand(llvm::raw_ostream& os, const CliCommand& c) {
  os << "usage: inmanta-cli [global options] " << commandWords(c) << (*c.synopsis ? " " : "") << c.synopsis
     << "\n\n"
     << c.summary << "\n\n";
  if (*c.options) os << "options:\n" << c.options << "\n";
  os << kGlobals;
}

} // namespace

namespace {

/// The command words at the start of `args` (up to the first option): group, verb ("setting X" for the
/// environment settings).
std::pair<std::string, std::string> commandOf(const std::vector<std::string>& args) {
  std::vector<std::string> words;
  for (const std::string& a : args) {
    if (a.empty() || a[0] == '-' || words.size() == 3) break;
    words.push_back(a);
  }
  std::string group = words.empty() ? "" : words[0];
  std::string verb = words.size() > 1 ? words[1] : "";
  if (group == "environment" && verb == "setting" && words.size() > 2) verb += " " + words[2];
  return {group, verb};
}

bool known(const std::string& group, const std::string& verb) {
  for (const CliCommand& c : kCommands)
    if (group == c.group && verb == c.verb) return true;
  return false;
}

} // namespace

bool printCliHelp(llvm::raw_ostream& os, const std::vector<std::string>& args) {
  auto [group, verb] = commandOf(args);
  if (group.empty()) return false;
  if (group == "monitor") verb.clear();
  for (const CliCommand& c : kCommands)
    if (group == c.group && verb == c.verb) {
      printCommand(os, c);
      return true;
    }
  // A group (or `environment setting`) alone: its commands.
  bool any = false;
  for (const CliCommand& c : kCommands) {
    bool inGroup = group == c.group && (verb.empty() || llvm::StringRef(c.verb).startswith(verb + " "));
    if (!inGroup) continue;
    if (!any)
      os << "usage: inmanta-cli [global options] " << group << (verb.empty() ? "" : " " + verb)
         << " COMMAND ...\n\ncommands:\n";
    any = true;
    os << "  " << commandWords(c) << (*c.synopsis ? " " : "") << c.synopsis << "\n      " << c.summary
       << "\n";
  }
  if (any)
    os << "\nRun `inmanta-cli " << group << (verb.empty() ? "" : " " + verb)
       << " COMMAND --help` for a command's options.\n"
       << kGlobals;
  return any;
}

void listCliCommands(llvm::raw_ostream& os) {
  for (const CliCommand& c : kCommands) os << commandWords(c) << "\n";
}

std::string suggestCliCommand(const std::string& group, const std::string& verb) {
  if (known(group, verb) || group == "monitor") return "";
  std::set<std::string> groups;
  for (const CliCommand& c : kCommands) groups.insert(c.group);
  if (!groups.count(group)) {
    Suggester near(group);
    for (const std::string& g : groups) near.add(g);
    return near.best();
  }
  Suggester near(verb);
  for (const CliCommand& c : kCommands)
    if (group == c.group) near.add(c.verb);
  std::string best = near.best();
  return best.empty() ? best : group + " " + best;
}

std::string misspeltCliCommand(const std::vector<std::string>& args) {
  auto [group, verb] = commandOf(args);
  if (group.empty() || group == "monitor" || known(group, verb)) return "";
  std::string near = suggestCliCommand(group, verb);
  if (near.empty()) return "";
  bool groupKnown = near.find(' ') != std::string::npos; // "group verb": the verb is the unknown word
  std::string words = groupKnown ? group + " " + verb : group;
  return "unknown command '" + words + "'" + didYouMeanSuffix(near);
}

std::string withTokenHint(const std::string& text, unsigned status, const char* section) {
  std::string hint = tokenHint(status, section);
  return hint.empty() ? text : text + "\n" + hint;
}

std::string tokenHint(unsigned status, const char* section) {
  if (status != 401) return "";
  return std::string("the server requires a token: pass --token TOKEN, or set token=TOKEN in the [") +
         section +
         "] section of .inmanta (or of a file given with -c FILE); `inmanta-cli token bootstrap` on the "
         "server "
         "signs one";
}

} // namespace inm::cli

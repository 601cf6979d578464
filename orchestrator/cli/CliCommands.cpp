// `inmanta-cli`'s commands, with the reference's command groups, verbs and flags (project, environment [+
// setting], agent, version, param, token, monitor, action-log; compile and dryrun in CliCompile.cpp and
// CliDryrun.cpp) over the same REST calls its 11.5.5 client makes (orchestrator.md §18), and the session's
// call helpers. Output: aligned tables, or the fetched JSON with --json. Invariant: every failure is a thrown
// CliError (one `Error: …` line, exit 1; bad usage exit 2), never a partial print followed by success.
#include "CliCore.h"
#include "cli/CliHelp.h"
#include "client/Token.h"
#include "support/Suggest.h"

#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace inm::cli {

// ---- the session
// --------------------------------------------------------------------------------------------

json Cli::call(const std::string& method, const std::string& path, const json* body,
               const client::Query& query, const std::string& tenant) {
  client->endpoint().environment = tenant;
  auto r = client->call(method, path, body, query);
  if (r) return *r;
  client::Failure f = client::takeFailure(r.takeError());
  failure(withTokenHint(f.text, f.status, "cmdline_rest_transport"));
}

std::optional<json> Cli::callOptional(const std::string& method, const std::string& path,
                                      const client::Query& query, const std::string& tenant) {
  client->endpoint().environment = tenant;
  auto r = client->call(method, path, nullptr, query);
  if (r) return *r;
  client::Failure f = client::takeFailure(r.takeError());
  if (f.status == 404) return std::nullopt;
  failure(withTokenHint(f.text, f.status, "cmdline_rest_transport"));
}

json Cli::key(const json& answer, const char* k, const char* what) {
  if (!answer.is_object() || !answer.contains(k))
    failure(std::string("the server's answer to ") + what + " has no `" + k + "`");
  return answer[k];
}

std::string Cli::projectId(const std::string& ref) {
  if (isUuid(ref)) return ref;
  std::vector<std::string> ids;
  for (const json& p : key(call("GET", "/api/v1/project"), "projects", "list projects"))
    if (field(p, "name") == ref) ids.push_back(field(p, "id"));
  if (ids.empty()) failure("no project with id or name '" + ref + "'");
  if (ids.size() > 1) failure("several projects are named '" + ref + "': use the id");
  return ids[0];
}

std::string Cli::environmentId(const std::string& ref) {
  if (isUuid(ref)) return ref;
  std::vector<std::string> ids;
  for (const json& e : key(call("GET", "/api/v1/environment"), "environments", "list environments"))
    if (field(e, "name") == ref) ids.push_back(field(e, "id"));
  if (ids.empty()) failure("no environment with id or name '" + ref + "'");
  if (ids.size() > 1) failure("several environments are named '" + ref + "': use the id");
  return ids[0];
}

bool Cli::printedJson(const json& data) {
  if (!jsonOutput) return false;
  llvm::outs() << data.dump(2) << "\n";
  return true;
}

namespace {

// ---- project
// ------------------------------------------------------------------------------------------------

void projectTable(Cli& cli, const json& p) {
  if (cli.printedJson(p)) return;
  printTable({"Name", "Value"}, {{"ID", field(p, "id")}, {"Name", field(p, "name")}});
}

int project(Cli& cli, const std::string& verb, Args& a) {
  if (verb == "list") {
    a.done();
    json projects = Cli::key(cli.call("GET", "/api/v1/project"), "projects", "list projects");
    if (cli.printedJson(projects)) return 0;
    if (projects.empty()) {
      llvm::errs() << "No projects defined.\n";
      return 0;
    }
    std::vector<std::vector<std::string>> rows;
    for (const json& p : projects) rows.push_back({field(p, "id"), field(p, "name")});
    printTable({"ID", "Name"}, rows);
    return 0;
  }
  if (verb == "create") {
    std::string name = a.required({"--name", "-n"});
    a.done();
    json body = {{"name", name}};
    projectTable(cli, Cli::key(cli.call("PUT", "/api/v1/project", &body), "project", "create project"));
    return 0;
  }
  if (verb == "show") {
    std::string id = cli.projectId(a.positionals(1, "PROJECT")[0]);
    projectTable(cli, Cli::key(cli.call("GET", "/api/v1/project/" + seg(id)), "project", "get project"));
    return 0;
  }
  if (verb == "modify") {
    std::string name = a.required({"--name", "-n"});
    std::string id = cli.projectId(a.positionals(1, "PROJECT")[0]);
    json body = {{"id", id}, {"name", name}};
    projectTable(
        cli, Cli::key(cli.call("POST", "/api/v1/project/" + seg(id), &body), "project", "modify project"));
    return 0;
  }
  if (verb == "delete") {
    std::string id = cli.projectId(a.positionals(1, "PROJECT")[0]);
    cli.call("DELETE", "/api/v1/project/" + seg(id));
    llvm::outs() << "Project successfully deleted\n";
    return 0;
  }
  usageError("unknown command: project " + verb + " (create, list, show, modify, delete)");
}

// ---- environment
// --------------------------------------------------------------------------------------------

/// Writes `.inmanta` in the current directory: the environment and both transport sections.
void saveConfig(Cli& cli, const std::string& envId) {
  const client::Endpoint& ep = cli.client->endpoint();
  if (access(".inmanta", F_OK) == 0) {
    if (!isatty(0))
      failure(".inmanta exists: not overwriting it (remove it first, or run in a terminal to confirm)");
    llvm::outs() << ".inmanta exists, do you want to overwrite it? [y/N]: ";
    llvm::outs().flush();
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      llvm::errs() << "not writing config\n";
      return;
    }
  }
  std::string transport = "host=" + ep.host + "\nport=" + std::to_string(ep.port) + "\n";
  if (ep.ssl) transport += "ssl=true\n";
  if (!ep.caCertFile.empty()) transport += "ssl_ca_cert_file=" + ep.caCertFile + "\n";
  std::ofstream f(".inmanta");
  f << "[config]\nenvironment=" << envId << "\n\n[compiler_rest_transport]\n"
    << transport << "\n[cmdline_rest_transport]\n"
    << transport;
  if (!f) failure("cannot write .inmanta");
}

void environmentTable(Cli& cli, const json& e) {
  if (cli.printedJson(e)) return;
  printTable({"ID", "Name", "Repository URL", "Branch Name"},
             {{field(e, "id"), field(e, "name"), field(e, "repo_url"), field(e, "repo_branch")}});
}

int setting(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  if (verb == "list") {
    a.done();
    json all = cli.call("GET", "/api/v1/environment_settings", nullptr, {}, env);
    if (cli.printedJson(all)) return 0;
    json settings = all.value("settings", json::object());
    json meta = all.value("metadata", json::object());
    std::vector<std::vector<std::string>> rows;
    for (auto it = meta.begin(); it != meta.end(); ++it) {
      const json& m = it.value();
      rows.push_back({it.key(), settings.contains(it.key()) ? show(settings[it.key()]) : "",
                      m.contains("default") ? show(m["default"]) : "", field(m, "type"), field(m, "doc")});
    }
    llvm::outs() << "Settings for environment " << env << "\n";
    printTable({"Key", "Value", "Default value", "Type", "Help"}, rows);
    return 0;
  }
  std::string key = a.required({"--key", "-k"});
  if (verb == "set") {
    std::string value = a.required({"--value", "-o"});
    a.done();
    json body = {{"id", key}, {"value", value}};
    cli.call("POST", "/api/v1/environment_settings/" + seg(key), &body, {}, env);
    return 0;
  }
  if (verb == "get") {
    a.done();
    json v = cli.call("GET", "/api/v1/environment_settings/" + seg(key), nullptr, {}, env);
    if (cli.printedJson(v)) return 0;
    llvm::outs() << show(Cli::key(v, "value", "get setting")) << "\n";
    return 0;
  }
  if (verb == "delete") {
    a.done();
    cli.call("DELETE", "/api/v1/environment_settings/" + seg(key), nullptr, {}, env);
    return 0;
  }
  usageError("unknown command: environment setting " + verb + " (list, get, set, delete)");
}

int environment(Cli& cli, const std::string& verb, Args& a) {
  if (verb == "create") {
    std::string name = a.required({"--name", "-n"});
    std::string projectRef = a.required({"--project", "-p"});
    std::string repo = a.option({"--repo-url", "-r"}).value_or("");
    std::string branch = a.option({"--branch", "-b"}).value_or("master");
    bool save = a.flag({"--save", "-s"});
    a.done();
    std::string projectId = cli.projectId(projectRef);
    json body = {{"project_id", projectId}, {"name", name}, {"repository", repo}, {"branch", branch}};
    json env = Cli::key(cli.call("PUT", "/api/v1/environment", &body), "environment", "create environment");
    json prj = Cli::key(cli.call("GET", "/api/v1/project/" + seg(projectId)), "project", "get project");
    if (save) saveConfig(cli, field(env, "id"));
    if (cli.printedJson(env)) return 0;
    printTable({"Environment ID", "Environment name", "Project ID", "Project name"},
               {{field(env, "id"), field(env, "name"), field(prj, "id"), field(prj, "name")}});
    return 0;
  }
  if (verb == "list") {
    a.done();
    json envs = Cli::key(cli.call("GET", "/api/v1/environment"), "environments", "list environments");
    if (cli.printedJson(envs)) return 0;
    if (envs.empty()) {
      llvm::outs() << "No environment defined.\n";
      return 0;
    }
    std::map<std::string, std::string> projectNames;
    std::vector<std::vector<std::string>> rows;
    for (const json& e : envs) {
      std::string pid = e.contains("project") ? field(e, "project") : field(e, "project_id");
      if (!projectNames.count(pid))
        projectNames[pid] =
            field(Cli::key(cli.call("GET", "/api/v1/project/" + seg(pid)), "project", "get project"), "name");
      rows.push_back({projectNames[pid], pid, field(e, "name"), field(e, "id")});
    }
    printTable({"Project name", "Project ID", "Environment", "Environment ID"}, rows);
    return 0;
  }
  if (verb == "show") {
    std::optional<std::string> format = a.option({"--format"});
    std::string id = cli.environmentId(a.positionals(1, "ENVIRONMENT")[0]);
    json env = Cli::key(cli.call("GET", "/api/v1/environment/" + seg(id)), "environment", "get environment");
    if (format) {
      // {key} placeholders, as Python's str.format with the environment's fields.
      std::string out, f = *format;
      for (size_t i = 0; i < f.size(); ++i) {
        size_t close = f[i] == '{' ? f.find('}', i) : std::string::npos;
        if (close == std::string::npos) {
          out += f[i];
          continue;
        }
        std::string k = f.substr(i + 1, close - i - 1);
        if (!env.contains(k)) failure("--format: the environment has no field '" + k + "'");
        out += show(env[k]);
        i = close;
      }
      llvm::outs() << out << "\n";
      return 0;
    }
    environmentTable(cli, env);
    return 0;
  }
  if (verb == "save") {
    std::string id = cli.environmentId(a.positionals(1, "ENVIRONMENT")[0]);
    json env = Cli::key(cli.call("GET", "/api/v1/environment/" + seg(id)), "environment", "get environment");
    saveConfig(cli, field(env, "id"));
    return 0;
  }
  if (verb == "modify") {
    std::string name = a.required({"--name", "-n"});
    std::string repo = a.option({"--repo-url", "-r"}).value_or("");
    std::string branch = a.option({"--branch", "-b"}).value_or("master");
    std::string id = cli.environmentId(a.positionals(1, "ENVIRONMENT")[0]);
    json body = {{"id", id}, {"name", name}, {"repository", repo}, {"branch", branch}};
    environmentTable(cli, Cli::key(cli.call("POST", "/api/v1/environment/" + seg(id), &body), "environment",
                                   "modify environment"));
    return 0;
  }
  if (verb == "delete") {
    std::string id = cli.environmentId(a.positionals(1, "ENVIRONMENT")[0]);
    cli.call("DELETE", "/api/v1/environment/" + seg(id));
    llvm::outs() << "Environment successfully deleted\n";
    return 0;
  }
  if (verb == "clear") {
    std::string id = cli.environmentId(a.positionals(1, "ENVIRONMENT")[0]);
    cli.call("DELETE", "/api/v2/decommission/" + seg(id));
    llvm::outs() << "Environment successfully cleared\n";
    return 0;
  }
  if (verb == "recompile") {
    bool update = a.flag({"--update", "-u"});
    std::string id = cli.environmentId(a.positionals(1, "ENVIRONMENT")[0]);
    json body = {{"id", id},
                 {"update", update},
                 {"metadata", {{"type", "cli"}, {"message", "Compile triggered from the cli"}}}};
    json r = cli.call("POST", "/api/v1/notify/" + seg(id), &body);
    if (r.is_object() && r.contains("metadata") && r["metadata"].is_object() &&
        r["metadata"].contains("warnings")) {
      for (const json& w : r["metadata"]["warnings"]) llvm::outs() << show(w) << "\n";
    } else {
      llvm::outs() << (update ? "Update & Recompile triggered successfully\n"
                              : "Recompile triggered successfully\n");
    }
    return 0;
  }
  usageError("unknown command: environment " + verb +
             " (create, list, show, save, modify, delete, clear, recompile, setting)");
}

// ---- agent
// --------------------------------------------------------------------------------------------------

int agent(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  if (verb == "list") {
    a.done();
    json agents = Cli::key(cli.call("GET", "/api/v1/agent", nullptr, {}, env), "agents", "list agents");
    if (cli.printedJson(agents)) return 0;
    // Where each agent runs: an autostarted agent's entry of autostart_agent_map (local: when it has none),
    // an external agent's connection (the holder's peer address).
    json map = Cli::key(Cli::key(Cli::key(cli.call("GET", "/api/v2/environment_settings/autostart_agent_map",
                                                   nullptr, {}, env),
                                          "data", "read autostart_agent_map"),
                                 "settings", "read autostart_agent_map"),
                        "autostart_agent_map", "read autostart_agent_map");
    auto uriOf = [&](const json& ag, bool external) -> std::string {
      if (external) {
        std::string holder = field(ag, "process_name");
        size_t via = holder.rfind(" via ");
        return via == std::string::npos ? "remote" : "remote: " + holder.substr(via + 5);
      }
      std::string name = field(ag, "name");
      return map.is_object() && map.contains(name) && map[name].is_string() ? map[name].get<std::string>()
                                                                            : "local:";
    };
    // Ours after the reference's four columns: state, URI, and for external agents the primary process and
    // the standbys in promotion order (docs/deploy.md "Failover").
    std::vector<std::vector<std::string>> rows;
    for (const json& ag : agents) {
      bool external = ag.value("external", false);
      std::string primary = external && ag.value("connected", false) ? field(ag, "process_name") : "";
      std::string standbys;
      if (ag.contains("standbys") && ag["standbys"].is_array())
        for (const json& s : ag["standbys"])
          if (s.is_string()) standbys += (standbys.empty() ? "" : "; ") + s.get<std::string>();
      if (!standbys.empty()) standbys = std::to_string(ag["standbys"].size()) + ": " + standbys;
      rows.push_back({field(ag, "name"), field(ag, "environment"), field(ag, "paused"),
                      field(ag, "last_failover"), field(ag, "status"), uriOf(ag, external), primary,
                      standbys});
    }
    printTable({"Agent", "Environment", "Paused", "Last fail over", "State", "URI", "Primary", "Standbys"},
               rows);
    return 0;
  }
  if (verb == "pause" || verb == "unpause") {
    std::optional<std::string> name = a.option({"--agent"});
    bool all = a.flag({"--all"});
    a.done();
    if (name && all) usageError("The --agent option and the --all flag cannot be used simultaneously.");
    if (!name && !all)
      usageError("Either set --agent or use --all to " + verb + " all agents of the environment.");
    json body = json::object();
    if (name)
      cli.call("POST", "/api/v2/agent/" + seg(*name) + "/" + verb, &body, {}, env);
    else
      cli.call("POST", "/api/v2/agents/" + verb, &body, {}, env);
    return 0;
  }
  usageError("unknown command: agent " + verb + " (list, pause, unpause)");
}

// ---- version
// ------------------------------------------------------------------------------------------------

std::vector<std::string> versionRow(const json& x) {
  return {field(x, "date"),  field(x, "version"), field(x, "released"), field(x, "deployed"),
          field(x, "total"), field(x, "done"),    field(x, "result")};
}
const std::vector<std::string> kVersionHeader = {"Created at",  "Version", "Released", "Deployed",
                                                 "# Resources", "# Done",  "State"};

int version(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  if (verb == "list") {
    a.done();
    json versions =
        Cli::key(cli.call("GET", "/api/v1/version", nullptr, {}, env), "versions", "list versions");
    if (cli.printedJson(versions)) return 0;
    std::vector<std::vector<std::string>> rows;
    int64_t newestReleased = 0;
    size_t retired = 0;
    for (const json& x : versions) {
      rows.push_back(versionRow(x));
      if (x.value("released", false) && x.value("version", json()).is_number_integer())
        newestReleased = std::max(newestReleased, x["version"].get<int64_t>());
    }
    for (const json& x : versions)
      retired += x.value("released", false) && x.value("version", json()).is_number_integer() &&
                 x["version"].get<int64_t>() < newestReleased;
    printTable(kVersionHeader, rows);
    // A superseded version has no deploy state of its own: say so rather than let its counts look stale or
    // wrong when they move.
    if (retired)
      llvm::outs() << "\nVersions released before version " << newestReleased
                   << " are retired: their # Done, Deployed and State follow the current state of their "
                      "resources (as later versions deploy them), so they can still change.\n";
    return 0;
  }
  if (verb == "compare") {
    std::vector<std::string> pos = a.positionals(2, "two versions: FROM TO");
    json diffs = Cli::key(
        cli.call("GET", "/api/v2/desiredstate/diff/" + seg(pos[0]) + "/" + seg(pos[1]), nullptr, {}, env),
        "data", "compare versions");
    if (cli.printedJson(diffs)) return 0;
    llvm::outs() << "Version " << pos[0] << " -> " << pos[1] << ":\n";
    if (!printResourceDiffs(diffs)) llvm::outs() << "No differences.\n";
    return 0;
  }
  if (verb == "release") {
    bool push = a.flag({"--push", "-p"});
    bool full = a.flag({"--full"});
    std::string v = a.positionals(1, "VERSION")[0];
    json body = {{"id", v}};
    if (push) {
      body["push"] = true;
      body["agent_trigger_method"] = full ? "push_full_deploy" : "push_incremental_deploy";
    }
    json model = Cli::key(cli.call("POST", "/api/v1/version/" + seg(v), &body, {}, env), "model", "release");
    if (cli.printedJson(model)) return 0;
    printTable(kVersionHeader, {versionRow(model)});
    return 0;
  }
  if (verb == "report") {
    std::string v = a.required({"--version", "-i"});
    bool detailed = a.flag({"-l"});
    a.done();
    json r = cli.call("GET", "/api/v1/version/" + seg(v), nullptr, {{"include_logs", "True"}}, env);
    if (cli.printedJson(r)) return 0;
    // agent -> resource type -> resources
    std::map<std::string, std::map<std::string, std::vector<json>>> agents;
    for (const json& res : r.value("resources", json::array())) {
      json actions = res.value("actions", json::array());
      if (!actions.empty() || detailed)
        agents[field(res, "agent")][field(res, "resource_type")].push_back(res);
    }
    for (auto& [ag, types] : agents) {
      llvm::outs() << "Agent: " << ag << "\n" << std::string(72, '=') << "\n";
      for (auto& [type, list] : types) {
        llvm::outs() << "Resource type: " << type << "\n" << std::string(72, '-') << "\n";
        for (const json& res : list) {
          std::string rvid = field(res, "resource_version_id");
          size_t eq = rvid.find('=', rvid.find(','));
          size_t end = rvid.rfind(']');
          std::string value =
              eq == std::string::npos || end == std::string::npos ? rvid : rvid.substr(eq + 1, end - eq - 1);
          llvm::outs() << value << " (#actions=" << res.value("actions", json::array()).size() << ")\n";
        }
        llvm::outs() << "\n";
      }
    }
    return 0;
  }
  usageError("unknown command: version " + verb + " (list, release, report)");
}

// ---- param
// --------------------------------------------------------------------------------------------------

void paramTable(Cli& cli, const json& p) {
  if (cli.printedJson(p)) return;
  printTable({"Name", "Value", "Source", "Updated"},
             {{field(p, "name"), field(p, "value"), field(p, "source"), field(p, "updated")}});
}

int param(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  if (verb == "list") {
    a.done();
    json body = {{"query", json::object()}};
    json r = cli.call("POST", "/api/v1/parameter", &body, {}, env);
    json params = Cli::key(r, "parameters", "list parameters");
    if (cli.printedJson(params)) return 0;
    std::vector<std::vector<std::string>> rows;
    for (const json& p : params)
      rows.push_back({field(p, "resource_id"), field(p, "name"), field(p, "source"), field(p, "updated")});
    printTable({"Resource", "Name", "Source", "Updated"}, rows);
    return 0;
  }
  std::string name = a.required({"--name"});
  if (verb == "get") {
    std::string resource = a.option({"--resource"}).value_or("");
    a.done();
    paramTable(cli, Cli::key(cli.call("GET", "/api/v1/parameter/" + seg(name), nullptr,
                                      {{"resource_id", resource}}, env),
                             "parameter", "get parameter"));
    return 0;
  }
  if (verb == "set") {
    std::string value = a.required({"--value"});
    a.done();
    auto existing = cli.callOptional("GET", "/api/v1/parameter/" + seg(name), {{"resource_id", ""}}, env);
    json old = existing && existing->contains("parameter") ? (*existing)["parameter"] : json::object();
    json body = {{"id", name},
                 {"value", value},
                 {"source", old.value("source", "user")},
                 {"resource_id", ""},
                 {"metadata", old.value("metadata", json::object())}};
    paramTable(cli, Cli::key(cli.call("PUT", "/api/v1/parameter/" + seg(name), &body, {}, env), "parameter",
                             "set parameter"));
    return 0;
  }
  usageError("unknown command: param " + verb + " (list, get, set)");
}

// ---- token, monitor, action-log
// -----------------------------------------------------------------------------

int token(Cli& cli, const std::string& verb, Args& a) {
  if (verb == "create") {
    std::string env = cli.environmentId(a.required({"--environment", "-e"}));
    json types = json::array();
    if (a.flag({"--api"})) types.push_back("api");
    if (a.flag({"--compiler"})) types.push_back("compiler");
    if (a.flag({"--agent"})) types.push_back("agent");
    a.done();
    json body = {{"client_types", types}};
    json r = cli.call("POST", "/api/v2/environment_auth", &body, {}, env);
    llvm::outs() << "Token: " << show(Cli::key(r, "data", "create token")) << "\n";
    return 0;
  }
  if (verb == "bootstrap") {
    a.done();
    auto key = client::signingKeyFromConfig(cli.cfg);
    if (!key) failure(llvm::toString(key.takeError()));
    auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    llvm::outs() << "Token: " << client::signToken(*key, {"api", "compiler", "agent"}, "", 3600, now.count())
                 << "\n";
    return 0;
  }
  usageError("unknown command: token " + verb + " (create, bootstrap)");
}

/// Waits until every resource of the latest released version is done; a live line on a terminal.
int monitor(Cli& cli, Args& a) {
  std::string ref = a.required({"--environment", "-e"});
  std::string env = cli.environmentId(ref);
  a.done();
  json versions = Cli::key(cli.call("GET", "/api/v1/version", nullptr, {}, env), "versions", "list versions");
  const json* first = nullptr;
  for (const json& v : versions)
    if (field(v, "result") != "pending" && (!first || v.value("version", 0) > first->value("version", 0)))
      first = &v;
  if (!first) failure("Environment " + ref + " doesn't contain a released configuration model");
  int64_t ident = first->value("version", int64_t(0));
  json model = *first;
  bool tty = isatty(1);
  for (;;) {
    int64_t total = model.value("total", int64_t(0)), done = model.value("done", int64_t(0));
    if (tty) {
      llvm::outs() << "\rversion:" << ident << "  " << done << "/" << total;
      llvm::outs().flush();
    }
    if (done >= total) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    json r = cli.call("GET", "/api/v1/version/" + std::to_string(ident), nullptr, {{"limit", "0"}}, env);
    model = Cli::key(r, "model", "get version");
  }
  if (tty) llvm::outs() << "\n";
  llvm::outs() << "Complete: " << model.value("done", int64_t(0)) << "/" << model.value("total", int64_t(0))
               << "\n";
  std::string result = field(model, "result");
  if (result == "failed") {
    llvm::errs() << "Error: version " << ident << " finished with failures\n";
    return 1;
  }
  return 0;
}

int actionLog(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  std::string rvid = a.required({"--rvid"});
  if (llvm::Expected<model::ResourceVersionId> parsed = model::ResourceVersionId::parse(rvid); !parsed)
    usageError("--rvid: '" + rvid + "' is not a resource version id (" + llvm::toString(parsed.takeError()) +
               ")");
  if (verb == "list") {
    std::optional<std::string> action = a.option({"--action"});
    a.done();
    client::Query q = {{"logs", "True"}};
    if (action) q.push_back({"log_action", *action});
    json logs =
        Cli::key(cli.call("GET", "/api/v1/resource/" + seg(rvid), nullptr, q, env), "logs", "get resource");
    if (cli.printedJson(logs)) return 0;
    if (logs.empty()) {
      llvm::outs() << "No resource action log entry found.\n";
      return 0;
    }
    std::vector<std::vector<std::string>> rows;
    for (const json& l : logs)
      rows.push_back({field(l, "action_id"), field(l, "action"), field(l, "started"), field(l, "finished"),
                      field(l, "status")});
    printTable({"Action ID", "Action", "Started", "Finished", "Status"}, rows);
    return 0;
  }
  if (verb == "show-messages") {
    std::string actionId = a.required({"--action-id"});
    a.done();
    json logs = Cli::key(cli.call("GET", "/api/v1/resource/" + seg(rvid), nullptr, {{"logs", "True"}}, env),
                         "logs", "get resource");
    for (const json& l : logs)
      if (field(l, "action_id") == actionId) {
        if (cli.printedJson(l)) return 0;
        for (const json& m : l.value("messages", json::array()))
          llvm::outs() << field(m, "timestamp") << " " << field(m, "level") << " " << field(m, "msg") << "\n";
        return 0;
      }
    llvm::outs() << "No log messages found for action-id " << actionId << "\n";
    return 0;
  }
  usageError("unknown command: action-log " + verb + " (list, show-messages)");
}

} // namespace

const char* const kCliHelp =
    "usage: inmanta-cli [--host H] [--port P] [--token T] [--ssl] [--ssl-ca-cert F] [-c FILE] [--json] "
    "COMMAND\n\n"
    "  project create -n NAME | list | show P | modify -n NAME P | delete P\n"
    "  environment create -n NAME -p PROJECT [-r URL] [-b BRANCH] [-s] | list | show ENV [--format F]\n"
    "              | save ENV | modify -n NAME [-r URL] [-b BRANCH] ENV | delete ENV | clear ENV\n"
    "              | recompile ENV [-u]\n"
    "  environment setting list|get|set|delete -e ENV [-k KEY] [-o VALUE]\n"
    "  agent list|pause|unpause -e ENV [--agent NAME | --all]\n"
    "  compile list -e ENV [-l N] | show -e ENV ID\n"
    "  dryrun request -e ENV [--wait] VERSION | list -e ENV [VERSION] | show -e ENV VERSION ID\n"
    "  version list -e ENV | compare -e ENV FROM TO | release -e ENV [--push [--full]] VERSION |\n"
    "    report -e ENV -i VERSION [-l]\n"
    "  param list -e ENV | get -e ENV --name N [--resource R] | set -e ENV --name N --value V\n"
    "  token create -e ENV [--api] [--compiler] [--agent] | bootstrap\n"
    "  monitor -e ENV\n"
    "  action-log list -e ENV --rvid RVID [--action A] | show-messages -e ENV --rvid RVID --action-id ID\n"
    "Projects and environments are named by id or by name. --json prints the fetched data as JSON.\n"
    "`inmanta-cli COMMAND --help` shows a command's options; --list-verbs lists every command.\n";

int runCommand(Cli& cli, const std::vector<std::string>& words) {
  std::string group = words[0];
  if (group == "monitor") {
    Args a(std::vector<std::string>(words.begin() + 1, words.end()));
    return monitor(cli, a);
  }
  std::string verb = words.size() > 1 ? words[1] : "";
  size_t skip = 2;
  if (group == "environment" && verb == "setting") {
    verb = words.size() > 2 ? words[2] : "";
    skip = 3;
    group = "setting";
  }
  if (verb.empty() || verb[0] == '-') usageError("missing command after '" + group + "'");
  Args a(std::vector<std::string>(words.begin() + long(std::min(skip, words.size())), words.end()));
  if (group == "project") return project(cli, verb, a);
  if (group == "environment") return environment(cli, verb, a);
  if (group == "setting") return setting(cli, verb, a);
  if (group == "agent") return agent(cli, verb, a);
  if (group == "compile") return compile(cli, verb, a);
  if (group == "dryrun") return dryrun(cli, verb, a);
  if (group == "version") return version(cli, verb, a);
  if (group == "param") return param(cli, verb, a);
  if (group == "token") return token(cli, verb, a);
  if (group == "action-log") return actionLog(cli, verb, a);
  usageError("unknown command '" + group + "'" + didYouMeanSuffix(suggestCliCommand(group, "")));
}

} // namespace inm::cli

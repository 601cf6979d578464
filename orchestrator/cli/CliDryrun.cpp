// `inmanta-cli dryrun request|list|show`: ask the environment's agents what a version would change without
// changing it (POST /api/v2/dryrun/<version>), list the dry runs (GET /api/v1/dryrun), and print one report
// (GET /api/v2/dryrun/<version>/<id>): each resource that would change, each changed attribute as
// `current -> desired`, and for file contents the unified diff the server adds. Part of inmanta-cli
// (orchestrator/cli/CliCore.h).
#include "CliCore.h"

#include <chrono>
#include <thread>

namespace inm::cli {
namespace {

std::string compact(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// obj[key] when obj is an object holding it, else null (answers are checked, never trusted to have a shape).
json member(const json& obj, const char* key) {
  if (!obj.is_object()) return json();
  auto it = obj.find(key);
  return it == obj.end() ? json() : *it;
}

void printReport(const json& report) {
  llvm::outs() << "Dry run " << field(report, "id") << " of version " << field(report, "model") << ": "
               << field(report, "total") << " resources, " << field(report, "todo") << " not answered yet\n";
  if (!printResourceDiffs(member(report, "diff"))) llvm::outs() << "No changes.\n";
}

} // namespace

size_t printResourceDiffs(const json& diffs) {
  size_t changed = 0;
  for (const json& d : diffs.is_array() ? diffs : json::array()) {
    std::string status = field(d, "status");
    if (status == "unmodified") continue;
    ++changed;
    llvm::outs() << "\n" << status << " " << field(d, "resource_id") << "\n";
    json attributes = member(d, "attributes");
    for (const auto& [name, a] : attributes.is_object() ? attributes.items() : json::object().items()) {
      llvm::outs() << "  " << name << ": " << compact(member(a, "from_value")) << " -> "
                   << compact(member(a, "to_value")) << "\n";
      if (json diff = member(a, "diff"); diff.is_string()) printIndented(diff.get<std::string>(), "    ");
    }
  }
  return changed;
}

int dryrun(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  if (verb == "request") {
    bool wait = a.flag({"--wait", "-w"});
    std::string version = a.positionals(1, "one version")[0];
    json body = json::object();
    json row = Cli::key(cli.call("POST", "/api/v2/dryrun/" + seg(version), &body, {}, env), "data",
                        "request a dry run");
    std::string id = field(row, "id");
    if (!wait) {
      if (!cli.printedJson(row))
        llvm::outs() << "Dry run " << id << " requested for version " << version << "\n";
      return 0;
    }
    // --wait: until every resource answered (at most 10 minutes), then the report.
    int settle = 0;
    for (int i = 0; i < 6000; ++i) {
      json report =
          Cli::key(cli.call("GET", "/api/v2/dryrun/" + seg(version) + "/" + seg(id), nullptr, {}, env),
                   "data", "get dry run");
      if (json todo = member(report, "todo"); todo.is_number_integer() && todo.get<int64_t>() == 0) {
        // The current contents the executors offered are stored beside the results, not with them: give
        // them up to 2 s to land before a diff says the server does not have them.
        if (report.dump().find("does not have the old content") != std::string::npos && ++settle < 10) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          continue;
        }
        if (!cli.printedJson(report)) printReport(report);
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    failure("dry run " + id + " did not finish within 10 minutes");
  }
  if (verb == "list") {
    std::vector<std::string> pos = a.rest();
    if (pos.size() > 1) usageError("expected at most one version");
    if (!pos.empty() && pos[0].size() > 1 && pos[0][0] == '-') usageError("unknown option " + pos[0]);
    client::Query q;
    if (!pos.empty()) q.push_back({"version", pos[0]});
    json rows = Cli::key(cli.call("GET", "/api/v1/dryrun", nullptr, q, env), "dryruns", "list dry runs");
    if (cli.printedJson(rows)) return 0;
    std::vector<std::vector<std::string>> table;
    for (const json& r : rows)
      table.push_back(
          {field(r, "id"), field(r, "model"), field(r, "date"), field(r, "total"), field(r, "todo")});
    printTable({"Id", "Version", "Date", "Total", "Todo"}, table);
    return 0;
  }
  if (verb == "show") {
    std::vector<std::string> pos = a.positionals(2, "a version and a dry run id");
    json report =
        Cli::key(cli.call("GET", "/api/v2/dryrun/" + seg(pos[0]) + "/" + seg(pos[1]), nullptr, {}, env),
                 "data", "get dry run");
    if (cli.printedJson(report)) return 0;
    printReport(report);
    return 0;
  }
  usageError("unknown command: dryrun " + verb + " (request, list, show)");
}

} // namespace inm::cli

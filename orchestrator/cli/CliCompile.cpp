// `inmanta-cli compile list|show`: the environment's compile reports (GET /api/v2/compilereport) as a table,
// newest first, and one report with each stage's command, exit code and output (GET
// /api/v2/compilereport/<id>). A compile id may be abbreviated to a unique prefix of the listed ones. Part of
// inmanta-cli (orchestrator/cli/CliCore.h).
#include "CliCore.h"

namespace inm::cli {
namespace {

std::string result(const json& c) {
  if (c.value("completed", json()).is_null())
    return c.value("started", json()).is_null() ? "queued" : "running";
  const json& s = c.value("success", json());
  return s.is_boolean() ? (s.get<bool>() ? "success" : "failed") : "";
}

std::string trigger(const json& c) {
  const json md = c.value("metadata", json::object());
  if (!md.is_object()) return "";
  std::string t = md.contains("type") ? show(md["type"]) : "";
  if (md.contains("message")) t += (t.empty() ? "" : ": ") + show(md["message"]);
  return t;
}

/// The stage output, each line indented under its stage.
void printStream(const char* name, const json& text) {
  if (!text.is_string() || text.get<std::string>().empty()) return;
  llvm::outs() << "  " << name << ":\n";
  printIndented(text.get<std::string>(), "    ");
}

} // namespace

int compile(Cli& cli, const std::string& verb, Args& a) {
  std::string env = cli.environmentId(a.required({"--environment", "-e"}));
  if (verb == "list") {
    std::string limit = a.option({"--limit", "-l"}).value_or("50");
    a.done();
    json list = Cli::key(cli.call("GET", "/api/v2/compilereport", nullptr, {{"limit", limit}}, env), "data",
                         "list compile reports");
    if (cli.printedJson(list)) return 0;
    if (list.empty()) {
      llvm::outs() << "No compile reports for this environment.\n";
      return 0;
    }
    std::vector<std::vector<std::string>> rows;
    for (const json& c : list)
      rows.push_back({field(c, "id"), field(c, "requested"), field(c, "completed"), result(c),
                      c.value("version", json()).is_null() ? "" : field(c, "version"), trigger(c)});
    printTable({"Id", "Requested", "Completed", "Result", "Version", "Trigger"}, rows);
    return 0;
  }
  if (verb == "show") {
    std::string id = a.positionals(1, "one compile id")[0];
    if (!isUuid(id)) { // a unique prefix of a listed compile
      json list = Cli::key(cli.call("GET", "/api/v2/compilereport", nullptr, {{"limit", "1000"}}, env),
                           "data", "list compile reports");
      std::vector<std::string> hits;
      for (const json& c : list)
        if (field(c, "id").rfind(id, 0) == 0) hits.push_back(field(c, "id"));
      if (hits.empty()) failure("no compile of this environment has an id starting with '" + id + "'");
      if (hits.size() > 1)
        failure("'" + id + "' is the start of " + std::to_string(hits.size()) + " compile ids");
      id = hits[0];
    }
    json c = Cli::key(cli.call("GET", "/api/v2/compilereport/" + seg(id), nullptr, {}, env), "data",
                      "get compile report");
    if (cli.printedJson(c)) return 0;
    llvm::outs() << "Compile " << field(c, "id") << ": " << result(c) << "\n"
                 << "Requested " << field(c, "requested") << ", started " << field(c, "started")
                 << ", completed " << field(c, "completed") << "\n";
    if (!c.value("version", json()).is_null()) llvm::outs() << "Version " << field(c, "version") << "\n";
    if (std::string t = trigger(c); !t.empty()) llvm::outs() << "Trigger " << t << "\n";
    for (const json& r : c.value("reports", json::array())) {
      llvm::outs() << "\n== " << field(r, "name") << " (exit " << field(r, "returncode") << ")\n";
      if (!field(r, "command").empty()) llvm::outs() << "  command: " << field(r, "command") << "\n";
      printStream("output", r.value("outstream", json()));
      printStream("errors", r.value("errstream", json()));
    }
    return 0;
  }
  usageError("unknown command: compile " + verb + " (list, show)");
}

} // namespace inm::cli

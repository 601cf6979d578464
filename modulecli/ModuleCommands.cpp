// The commands of `inmanta project …` and `inmanta module …` for v1 modules (docs/modules.md; the verbs'
// entries are tools/ModuleMain.cpp): install, update, freeze and init of a project; list, add, status,
// verify, freeze and create of modules. Names and flags follow the reference's module tool; the work is done
// by the projectmgr library. All commands act on the project in the current directory. Output contract:
// progress and tables on stdout, "warning: …" / "error: …" lines on stderr; exit 0 on success, 1 when
// something failed, 2 on bad usage.
#include "modulecli/ModuleCommands.h"

#include "frontend/Project.h"
#include "projectmgr/Config.h"
#include "projectmgr/Install.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace inm::modulecli {
namespace {

using namespace inm::projectmgr;

int usageError(const std::string& msg) {
  llvm::errs() << "inmanta: error: " << msg << "\n";
  return 2;
}

std::string cwd() {
  llvm::SmallString<256> p;
  llvm::sys::fs::current_path(p);
  return std::string(p.str());
}

/// The project this command acts on: the current directory (or --project-dir / the parent holding project.yml
/// for module commands run inside a module).
bool loadProject(ProjectConfig& out) {
  out = readProjectConfig(cwd());
  for (const std::string& e : out.errors) llvm::errs() << "error: " << e << "\n";
  return out.errors.empty();
}

int printReport(const InstallReport& r) {
  for (const std::string& w : r.warnings) llvm::errs() << "warning: " << w << "\n";
  for (const std::string& e : r.errors) llvm::errs() << "error: " << e << "\n";
  if (!r.ok) return 1;
  llvm::outs() << (r.changed ? "Installed " + std::to_string(r.modules.size()) + " modules (" +
                                   std::to_string(r.changed) + " changed)\n"
                             : "All " + std::to_string(r.modules.size()) + " modules are up to date\n");
  return 0;
}

int runInstall(bool update) {
  ProjectConfig p;
  if (!loadProject(p)) return 1;
  InstallOptions o;
  o.update = update;
  o.auth = loadGitAuth(p.dir);
  o.builtinStdDir = frontend::defaultStdDir();
  o.log = [](const std::string& s) { llvm::outs() << s << "\n"; };
  return printReport(installProject(p, o));
}

/// Flags shared by the freeze verbs: -o/--outfile FILE, -r/--recursive, --operator OP.
struct FreezeFlags {
  std::string outfile;
  int recursive = -1;
  std::string op;
};

std::string parseFreezeFlags(const std::vector<std::string>& args, size_t from, FreezeFlags& f) {
  for (size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-o" || a == "--outfile") && i + 1 < args.size())
      f.outfile = args[++i];
    else if (a == "-r" || a == "--recursive")
      f.recursive = 1;
    else if (a == "--operator" && i + 1 < args.size())
      f.op = args[++i];
    else
      return "unknown argument '" + a + "' (freeze takes -o/--outfile FILE, -r/--recursive, --operator OP)";
  }
  if (!f.op.empty() && f.op != "==" && f.op != "~=" && f.op != ">=")
    return "--operator must be one of ==, ~=, >= (got '" + f.op + "')";
  return "";
}

/// `name op version` for every installed module in `names`, sorted.
std::vector<std::string> frozenEntries(const InspectReport& r, const std::vector<std::string>& names,
                                       const std::string& op, std::string& error) {
  std::vector<std::string> out;
  for (const ModuleState& s : r.modules) {
    if (std::find(names.begin(), names.end(), s.name) == names.end()) continue;
    if (!s.installed) {
      error = "module " + s.name + " is not installed: run `inmanta project install` before freezing";
      return {};
    }
    if (s.source == "built-in") continue; // our std is not a project dependency
    out.push_back(s.name + op + s.version);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int writeFrozen(const std::string& file, const std::string& outfile,
                const std::vector<std::string>& entries) {
  std::string text, err;
  if (!readWholeFile(file, text)) {
    llvm::errs() << "error: cannot read " << file << "\n";
    return 1;
  }
  std::string updated = replaceRequiresBlock(text, entries);
  if (outfile == "-") {
    llvm::outs() << updated;
    return 0;
  }
  std::string target = outfile.empty() ? file : outfile;
  if (!writeWholeFile(target, updated, err)) {
    llvm::errs() << "error: " << err << "\n";
    return 1;
  }
  llvm::outs() << "Wrote " << entries.size() << " frozen requirements to " << target << "\n";
  return 0;
}

int projectFreeze(const std::vector<std::string>& args) {
  FreezeFlags f;
  if (std::string e = parseFreezeFlags(args, 1, f); !e.empty()) return usageError(e);
  ProjectConfig p;
  if (!loadProject(p)) return 1;
  bool recursive = f.recursive >= 0 ? f.recursive == 1 : p.freezeRecursive;
  std::string op = f.op.empty() ? p.freezeOperator : f.op;
  InspectReport r = inspectProject(p, frontend::defaultStdDir());
  std::vector<std::string> names;
  for (const ModuleState& s : r.modules) {
    bool direct = std::find(s.requiredBy.begin(), s.requiredBy.end(), "project.yml") != s.requiredBy.end() ||
                  std::find(s.requiredBy.begin(), s.requiredBy.end(), "main.cf") != s.requiredBy.end();
    if (recursive || direct) names.push_back(s.name);
  }
  std::string err;
  std::vector<std::string> entries = frozenEntries(r, names, op, err);
  if (!err.empty()) {
    llvm::errs() << "error: " << err << "\n";
    return 1;
  }
  return writeFrozen(p.file, f.outfile, entries);
}

int projectInit(const std::vector<std::string>& args) {
  std::string name, out = ".";
  for (size_t i = 1; i < args.size(); ++i) {
    if ((args[i] == "-n" || args[i] == "--name") && i + 1 < args.size())
      name = args[++i];
    else if ((args[i] == "-o" || args[i] == "--output-dir") && i + 1 < args.size())
      out = args[++i];
    else if (args[i] == "--default")
      continue;
    else
      return usageError("unknown argument '" + args[i] + "' (project init -n NAME [-o DIR])");
  }
  if (name.empty()) return usageError("project init needs -n NAME");
  std::string dir = joinPath(out, name), err;
  if (llvm::sys::fs::exists(dir)) {
    llvm::errs() << "error: " << dir << " already exists\n";
    return 1;
  }
  (void)llvm::sys::fs::create_directories(joinPath(dir, "libs"));
  bool ok =
      writeWholeFile(joinPath(dir, "project.yml"),
                     "name: " + name +
                         "\ndescription: ''\nmodulepath: libs\ndownloadpath: libs\nrepo:\n"
                         "  - type: git\n    url: https://github.com/inmanta/{}\ninstall_mode: release\n"
                         "requires: []\n",
                     err) &&
      writeWholeFile(joinPath(dir, "main.cf"), "# The configuration model of " + name + "\n", err) &&
      writeWholeFile(joinPath(dir, ".gitignore"), "libs/\n.env\n", err);
  if (!ok) {
    llvm::errs() << "error: " << err << "\n";
    return 1;
  }
  llvm::outs() << "Created project " << name << " in " << dir << "\n";
  return 0;
}

std::string stateOf(const ModuleState& s) {
  if (!s.installed) return "not installed";
  if (s.source == "built-in" || s.source == "local") return "-";
  std::string st = s.tag.empty() ? "off-tag" : "on tag " + s.tag;
  return st + (s.dirty ? ", dirty" : ", clean");
}

/// The last line of `module list`: which std the compile uses and whether its Python is loaded.
std::string stdLine(const ProjectConfig& p, const InspectReport& r, const std::string& builtin) {
  auto it =
      std::find_if(r.modules.begin(), r.modules.end(), [](const ModuleState& s) { return s.name == "std"; });
  if (it == r.modules.end() || it->source == "built-in") {
    std::string line =
        "std: the built-in std module (" + builtin + "; native plugins, resources and handlers)";
    if (p.builtinStd)
      for (const std::string& dir : p.modulePath)
        if (llvm::sys::fs::is_directory(dir + "/std")) {
          line += ", asked for by builtin_std/--builtin-std: the std in " + dir + "/std is not used";
          break;
        }
    return line;
  }
  std::string line = "std: the project's own std " + it->version + " in " + it->dir;
  if (llvm::sys::fs::is_regular_file(it->dir + "/plugins/__init__.py"))
    return line + " (its Python plugins/ are loaded: plugins, resources and handlers)";
  return line +
         " (model only, no plugins/__init__.py: the native std plugins, resources and handlers are used)";
}

int moduleList(const std::vector<std::string>& args) {
  bool json = false, forceBuiltin = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json")
      json = true;
    else if (args[i] == "-r" || args[i] == "--requires")
      continue;
    else if (args[i] == "--builtin-std")
      forceBuiltin = true;
    else
      return usageError("unknown argument '" + args[i] + "' (module list [--json] [--builtin-std])");
  }
  ProjectConfig p;
  if (!loadProject(p)) return 1;
  p.builtinStd = p.builtinStd || forceBuiltin;
  std::string builtin = frontend::defaultStdDir();
  InspectReport r = inspectProject(p, builtin);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ModuleState& s : r.modules)
      out.push_back(
          {{"name", s.name},
           {"type", "v1"},
           {"installed", s.installed},
           {"version", s.version},
           {"constraint", s.constraint},
           {"matches", s.matches},
           {"source", s.source},
           {"path", s.dir},
           {"tag", s.tag},
           {"commit", s.commit},
           {"dirty", s.dirty},
           {"off_tag", s.installed && s.source != "built-in" && s.source != "local" && s.tag.empty()},
           {"required_by", s.requiredBy}});
    llvm::outs() << out.dump(2) << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"Name", "Type", "Installed version", "Expected in project", "Matches", "Source", "State"}};
  for (const ModuleState& s : r.modules)
    rows.push_back({s.name, "v1", s.installed ? s.version : "-", s.constraint.empty() ? "*" : s.constraint,
                    s.matches ? "yes" : "no", s.source.empty() ? "-" : s.source, stateOf(s)});
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], row[c].size());
  auto line = [&] {
    llvm::outs() << "+";
    for (size_t c : w) llvm::outs() << std::string(c + 2, '-') << "+";
    llvm::outs() << "\n";
  };
  line();
  for (size_t i = 0; i < rows.size(); ++i) {
    llvm::outs() << "|";
    for (size_t c = 0; c < w.size(); ++c)
      llvm::outs() << " " << rows[i][c] << std::string(w[c] - rows[i][c].size(), ' ') << " |";
    llvm::outs() << "\n";
    if (i == 0) line();
  }
  line();
  llvm::outs() << stdLine(p, r, builtin) << "\n";
  return 0;
}

int moduleAdd(const std::vector<std::string>& args) {
  std::string spec;
  bool override = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--v1")
      continue;
    else if (args[i] == "--v2")
      return usageError("v2 modules (Python packages) are not supported here; add a v1 module from git");
    else if (args[i] == "--override")
      override = true;
    else if (spec.empty() && args[i][0] != '-')
      spec = args[i];
    else
      return usageError("unknown argument '" + args[i] + "' (module add NAME[CONSTRAINT] [--override])");
  }
  if (spec.empty())
    return usageError("module add needs a module requirement, e.g. `inmanta module add 'mymod>=1.0'`");
  std::string err;
  auto req = parseRequirement(spec, err);
  if (!req) return usageError(err);
  ProjectConfig p;
  if (!loadProject(p)) return 1;
  std::vector<std::string> entries;
  bool replaced = false;
  for (const Requirement& q : p.requirements) {
    if (q.name == req->name) {
      if (!override && q.str() != req->str()) {
        llvm::errs() << "error: project.yml already requires " << q.str()
                     << "; use --override to replace it with " << req->str() << "\n";
        return 1;
      }
      entries.push_back(req->str());
      replaced = true;
    } else {
      entries.push_back(q.str());
    }
  }
  if (!replaced) entries.push_back(req->str());
  std::string text;
  if (!readWholeFile(p.file, text) || !writeWholeFile(p.file, replaceRequiresBlock(text, entries), err)) {
    llvm::errs() << "error: cannot update " << p.file << (err.empty() ? "" : ": " + err) << "\n";
    return 1;
  }
  llvm::outs() << "Added " << req->str() << " to " << p.file << "\n";
  return runInstall(false);
}

int moduleStatus() {
  ProjectConfig p;
  if (!loadProject(p)) return 1;
  InspectReport r = inspectProject(p, frontend::defaultStdDir());
  for (const ModuleState& s : r.modules) {
    llvm::outs() << s.name << ": ";
    if (!s.installed) {
      llvm::outs() << "not installed\n";
      continue;
    }
    llvm::outs() << s.version << " (" << s.source << ")";
    if (!s.commit.empty()) llvm::outs() << ", " << stateOf(s) << ", HEAD " << s.commit.substr(0, 12);
    llvm::outs() << "\n";
    for (const std::string& c : s.changedPaths) llvm::outs() << "    changed: " << c << "\n";
  }
  return 0;
}

int moduleVerify() {
  ProjectConfig p;
  if (!loadProject(p)) return 1;
  InspectReport r = inspectProject(p, frontend::defaultStdDir());
  int rc = r.problems.empty() ? 0 : 1;
  for (const std::string& e : r.problems) llvm::errs() << "error: " << e << "\n";
  for (const ModuleState& s : r.modules) {
    if (!s.installed || s.commit.empty()) continue;
    if (s.dirty) llvm::errs() << "warning: module " << s.name << " in " << s.dir << " has local changes\n";
    if (s.tag.empty())
      llvm::errs() << "warning: module " << s.name << " is not on a release tag (HEAD "
                   << s.commit.substr(0, 12) << ")\n";
  }
  if (rc == 0) llvm::outs() << "All " << r.modules.size() << " modules match the project's requirements\n";
  return rc;
}

int moduleFreeze(const std::vector<std::string>& args) {
  FreezeFlags f;
  if (std::string e = parseFreezeFlags(args, 1, f); !e.empty()) return usageError(e);
  std::string moduleDir = cwd();
  ModuleConfig m = readModuleConfig(moduleDir);
  if (m.name.empty()) {
    llvm::errs() << "error: " << moduleDir << " is not a module (no module.yml with a name)\n";
    return 1;
  }
  // The project the module is installed in: the nearest parent folder with project.yml.
  std::string projectDir = moduleDir;
  while (!projectDir.empty() && !llvm::sys::fs::exists(joinPath(projectDir, "project.yml")))
    projectDir = llvm::sys::path::parent_path(projectDir).str();
  if (projectDir.empty()) {
    llvm::errs() << "error: module freeze needs the module to be inside a project (no project.yml above "
                 << moduleDir << ")\n";
    return 1;
  }
  ProjectConfig p = readProjectConfig(projectDir);
  InspectReport r = inspectProject(p, frontend::defaultStdDir());
  std::vector<std::string> names;
  for (const ModuleState& s : r.modules) {
    bool direct = false;
    for (const std::string& by : s.requiredBy) direct = direct || by.rfind(m.name + " ", 0) == 0;
    if (s.name != m.name && (direct || f.recursive == 1)) names.push_back(s.name);
  }
  std::string err;
  std::vector<std::string> entries = frozenEntries(r, names, f.op.empty() ? "~=" : f.op, err);
  if (!err.empty()) {
    llvm::errs() << "error: " << err << "\n";
    return 1;
  }
  return writeFrozen(joinPath(moduleDir, "module.yml"), f.outfile, entries);
}

int moduleCreate(const std::vector<std::string>& args) {
  std::string name;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--v1") continue;
    if (args[i] == "--v2") return usageError("v2 modules (Python packages) are not supported here");
    if (!name.empty()) return usageError("module create takes one NAME");
    name = args[i];
  }
  if (name.empty()) return usageError("module create needs a NAME");
  if (llvm::sys::fs::exists(name)) {
    llvm::errs() << "error: " << name << " already exists\n";
    return 1;
  }
  std::string err;
  (void)llvm::sys::fs::create_directories(joinPath(name, "model"));
  (void)llvm::sys::fs::create_directories(joinPath(name, "plugins"));
  (void)llvm::sys::fs::create_directories(joinPath(name, "files"));
  (void)llvm::sys::fs::create_directories(joinPath(name, "templates"));
  bool ok = writeWholeFile(joinPath(name, "module.yml"),
                           "name: " + name +
                               "\nlicense: ASL 2.0\nversion: 0.0.1\ncompiler_version: 2020.1\n"
                               "requires: []\n",
                           err) &&
            writeWholeFile(joinPath(name, "model/_init.cf"), "", err) &&
            writeWholeFile(joinPath(name, "plugins/__init__.py"), "", err);
  if (!ok) {
    llvm::errs() << "error: " << err << "\n";
    return 1;
  }
  llvm::outs() << "Created module " << name << " (v1) in " << joinPath(cwd(), name) << "\n";
  return 0;
}

} // namespace

int runProject(const std::vector<std::string>& args) {
  std::string sub = args.empty() ? "" : args[0];
  if (sub == "install")
    return args.size() == 1 ? runInstall(false) : usageError("project install takes no arguments");
  if (sub == "update")
    return args.size() == 1 ? runInstall(true) : usageError("project update takes no arguments");
  if (sub == "freeze") return projectFreeze(args);
  if (sub == "init") return projectInit(args);
  return usageError(
      "usage: inmanta project install|update|freeze [-o FILE] [-r] [--operator OP]|init -n NAME");
}

int runModule(const std::vector<std::string>& args) {
  std::string sub = args.empty() ? "" : args[0];
  if (sub == "list") return moduleList(args);
  if (sub == "add") return moduleAdd(args);
  if (sub == "status") return moduleStatus();
  if (sub == "verify") return moduleVerify();
  if (sub == "freeze") return moduleFreeze(args);
  if (sub == "create") return moduleCreate(args);
  if (sub == "install" || sub == "update")
    return usageError("for v1 modules use `inmanta project " + sub + "` in the project folder");
  return usageError(
      "usage: inmanta module list [--json]|add NAME[CONSTRAINT]|status|verify|freeze|create NAME");
}

} // namespace inm::modulecli

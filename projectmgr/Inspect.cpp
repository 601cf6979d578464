// What is installed now, against the constraints (see inspectProject in projectmgr/Install.h): the basis of
// `module list|status|verify` and of the check `inmanta compile` runs before loading. Reads only the module
// path and the checkouts' git metadata; never the network.
#include "GitRepo.h"
#include "projectmgr/Install.h"

#include <llvm/Support/FileSystem.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace inm::projectmgr {

namespace {

std::vector<std::string> modelImports(const std::string& dir, const std::string& self) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(joinPath(dir, "model"), ec), end; it != end && !ec;
       it.increment(ec)) {
    const std::string& p = it->path();
    if (p.size() < 3 || p.compare(p.size() - 3, 3, ".cf") != 0) continue;
    std::string cf;
    if (readWholeFile(p, cf))
      for (const std::string& i : importedModules(cf))
        if (i != self && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  return out;
}

} // namespace

InspectReport inspectProject(const ProjectConfig& p, const std::string& builtinStdDir, bool gitDetails) {
  git::init();
  InspectReport r;
  std::map<std::string, std::vector<std::pair<std::string, Requirement>>> reqs;
  std::map<std::string, ModuleState> states;
  std::deque<std::string> queue;
  auto want = [&](const std::string& name, const std::string& by) {
    auto [it, fresh] = states.try_emplace(name);
    it->second.name = name;
    it->second.requiredBy.push_back(by);
    if (fresh) queue.push_back(name);
  };
  for (const Requirement& q : p.requirements) {
    reqs[q.name].push_back({"project.yml", q});
    want(q.name, "project.yml");
  }
  std::string mainCf;
  if (readWholeFile(joinPath(p.dir, "main.cf"), mainCf))
    for (const std::string& i : importedModules(mainCf)) want(i, "main.cf");
  while (!queue.empty()) {
    std::string name = queue.front();
    queue.pop_front();
    ModuleState& s = states[name];
    for (const std::string& dir : p.modulePath) {
      std::string cand = joinPath(dir, name);
      if (!llvm::sys::fs::is_directory(cand)) continue;
      if (name == "std" && p.builtinStd) break; // the user asked for the built-in std (docs/modules.md)
      s.dir = cand;
      s.installed = true;
      break;
    }
    if (!s.installed && name == "std" && !builtinStdDir.empty()) {
      s.dir = builtinStdDir;
      s.installed = true;
      s.source = "built-in";
    }
    if (!s.installed) continue;
    ModuleConfig meta = readModuleConfig(s.dir);
    s.version = meta.versionText;
    if (s.source.empty()) {
      if (!gitDetails) {
        s.source = "(not inspected)";
      } else if (git::isRepository(s.dir)) {
        s.source = git::originUrl(s.dir);
        s.managed = llvm::StringRef(s.dir).startswith(p.downloadPath + "/");
        s.commit = git::head(s.dir);
        std::vector<git::Tag> tags;
        std::string err;
        if (git::tags(s.dir, tags, err))
          for (const auto& t : tags)
            if (t.commit == s.commit) {
              auto tv = parseVersion(t.name);
              if (!s.tag.empty() && !(tv && meta.version && *tv == *meta.version)) continue;
              s.tag = t.name;
            }
        s.changedPaths = git::changedPaths(s.dir);
        s.dirty = !s.changedPaths.empty();
      } else {
        s.source = "local";
      }
    }
    std::string by = name + " " + s.version;
    for (const Requirement& q : meta.requirements) {
      reqs[q.name].push_back({by, q});
      want(q.name, by);
    }
    for (const std::string& i : modelImports(s.dir, name)) want(i, by);
  }
  for (auto& [name, s] : states) {
    std::vector<std::string> cs;
    auto v = parseVersion(s.version);
    for (const auto& [by, q] : reqs[name]) {
      if (q.specs.empty()) continue;
      cs.push_back(q.constraintStr());
      if (!s.installed || !v || q.contains(*v)) continue;
      s.matches = false;
      if (s.source == "built-in" && p.builtinStd)
        continue; // asked for explicitly: its version is not checked
      if (s.source == "built-in") {
        r.problems.push_back("module std: the built-in std is version " + s.version +
                             ", which does not satisfy " + q.str() + " (required by " + by +
                             "): run `inmanta project install` to install a matching std from the project's "
                             "repositories");
        continue;
      }
      r.problems.push_back("module " + name + " " + s.version + " installed in " + s.dir +
                           " does not satisfy " + q.str() + " (required by " + by +
                           "): run `inmanta project install` to move it to a matching version");
    }
    s.constraint.clear();
    for (size_t i = 0; i < cs.size(); ++i) s.constraint += (i ? "," : "") + cs[i];
    // A missing module is a problem when project.yml names it; a missing import is the loader's to report.
    for (const auto& [by, q] : reqs[name])
      if (!s.installed && by == "project.yml") {
        r.problems.push_back("module " + name + " (required by project.yml as '" + q.str() +
                             "') is not installed: run `inmanta project install`");
        break;
      }
    r.modules.push_back(s);
  }
  return r;
}

} // namespace inm::projectmgr

// The resolver and installer behind `inmanta project install|update` (see projectmgr/Install.h). Clones go
// into the project's downloadpath; a module found elsewhere on the module path, or in downloadpath without
// .git, is "local": it is used as it is and only checked against the constraints. Versions are read from
// module.yml inside the git objects of each candidate commit, so resolution checks nothing out; the
// checkouts happen together at the end, only when the whole graph resolved.
#include "projectmgr/Install.h"

#include "GitRepo.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>

namespace inm::projectmgr {
namespace {

bool isDir(const std::string& p) { return llvm::sys::fs::is_directory(p); }

struct Candidate {
  Version version;
  std::string tag, commit;
};

struct Mod {
  std::string name;
  bool located = false, failed = false, managed = false, local = false, builtin = false;
  bool fresh = false, fetched = false, tagsLoaded = false;
  std::string dir, url;
  std::string
      builtinRefused; // std only: why the built-in std cannot answer (then it comes from a repository)
  std::vector<Candidate> candidates;
  std::vector<std::string> tooNew; // matching tags skipped: their compiler_version is newer than ours
  std::vector<std::string> notV1;  // matching tags skipped: no module.yml (a v2 module's release)
  // the current choice
  bool chosen = false;
  std::string commit, tag;
  ModuleConfig meta;
  std::vector<std::string> imports;
};

using Constraint = std::pair<std::string, Requirement>; // requirer, requirement

std::string joinList(const std::vector<std::string>& xs, const char* sep) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? sep : "") + xs[i];
  return s;
}

class Installer {
 public:
  Installer(const ProjectConfig& p, const InstallOptions& o, InstallReport& r) : p_(p), o_(o), r_(r) {}
  void run();

 private:
  void log(const std::string& s) {
    if (o_.log) o_.log(s);
  }
  void fail(Mod& m, const std::string& msg) {
    m.failed = true;
    r_.errors.push_back(msg);
  }
  /// stdNeed (std only): 0 imported only, 1 required by a module.yml (both: the built-in answers), 2 required
  /// by project.yml (installed from git like any module), 3 the
  /// built-in std does not satisfy a constraint (m.builtinRefused says which).
  void locate(Mod& m, int stdNeed);
  bool loadCandidates(Mod& m);
  bool choose(Mod& m, const std::vector<Constraint>& cs);
  bool readChoice(Mod& m, const std::string& commit, const std::string& tag);
  bool compilerAccepts(Mod& m, const Candidate& c);
  std::string noMatchMessage(const Mod& m, const std::vector<Constraint>& cs);
  bool allowed(const Version& v, const std::vector<Constraint>& cs) const {
    if (p_.installMode == InstallMode::Release && v.isPrerelease()) return false;
    for (const auto& c : cs)
      if (!c.second.contains(v)) return false;
    return true;
  }
  void apply(const std::vector<std::string>& wanted, std::map<std::string, std::vector<Constraint>>& reqs);

  const ProjectConfig& p_;
  const InstallOptions& o_;
  InstallReport& r_;
  std::map<std::string, Mod> mods_;
};

void Installer::locate(Mod& m, int stdNeed) {
  m.located = true;
  for (const std::string& dir : p_.modulePath) {
    std::string cand = joinPath(dir, m.name);
    if (!isDir(cand)) continue;
    m.dir = cand;
    if (dir == p_.downloadPath && git::isRepository(cand)) {
      m.managed = true;
      m.url = git::originUrl(cand);
    } else {
      m.local = true;
    }
    return;
  }
  // std that project.yml does not require: our built-in std answers, no repository is asked (choose() comes
  // back here with stdNeed 3 when a module's constraint excludes the built-in's version).
  if (m.name == "std" && stdNeed <= 1) {
    m.builtin = true;
    m.dir = o_.builtinStdDir;
    return;
  }
  std::vector<std::string> tried;
  bool anyGit = false;
  for (const RepoEntry& e : p_.repos) {
    if (e.type == "package") {
      tried.push_back(e.url + " (type: package: installing modules from a Python package index is not "
                              "supported here; give a git repository)");
      continue;
    }
    anyGit = true;
    std::string url = e.urlFor(m.name);
    if (url.rfind("./", 0) == 0 || url.rfind("../", 0) == 0) { // relative to the project
      llvm::SmallString<256> abs(joinPath(p_.dir, url));
      llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
      url = std::string(abs.str());
    }
    std::string dest = joinPath(p_.downloadPath, m.name);
    (void)llvm::sys::fs::create_directories(p_.downloadPath);
    std::string err;
    log("Cloning " + m.name + " from " + url);
    if (git::clone(url, dest, o_.auth, err)) {
      m.managed = m.fresh = m.fetched = true;
      m.dir = dest;
      m.url = url;
      ++r_.changed;
      return;
    }
    tried.push_back(url + " (" + err + ")");
  }
  if (m.name == "std" && stdNeed == 3) {
    fail(m, "module std: " + m.builtinRefused + ", and no repository has std" +
                (tried.empty() ? std::string(" (project.yml has no `repo:` entry)")
                               : "; tried:\n  " + joinList(tried, "\n  ")));
    return;
  }
  if (!anyGit && tried.empty()) {
    fail(m, "module " + m.name + " is not installed and project.yml has no `repo:` entry to install it from");
    return;
  }
  fail(m, "module " + m.name + ": no repository has it; tried:\n  " + joinList(tried, "\n  "));
}

bool Installer::loadCandidates(Mod& m) {
  if (m.tagsLoaded) return true;
  if (!m.fetched) {
    std::string err;
    log("Fetching " + m.name + " from " + m.url);
    if (!git::fetch(m.dir, o_.auth, err)) {
      fail(m, "module " + m.name + ": " + err);
      return false;
    }
    m.fetched = true;
  }
  std::vector<git::Tag> tags;
  std::string err;
  if (!git::tags(m.dir, tags, err)) {
    fail(m, "module " + m.name + ": " + err);
    return false;
  }
  for (const git::Tag& t : tags)
    if (auto v = parseVersion(t.name)) m.candidates.push_back(Candidate{*v, t.name, t.commit});
  std::sort(m.candidates.begin(), m.candidates.end(),
            [](const Candidate& a, const Candidate& b) { return b.version < a.version; });
  m.tagsLoaded = true;
  return true;
}

bool Installer::readChoice(Mod& m, const std::string& commit, const std::string& tag) {
  std::string text;
  if (!git::readAt(m.dir, commit, "module.yml", text)) {
    fail(m, "module " + m.name + ": " + (tag.empty() ? "commit " + commit : "tag " + tag) +
                " has no module.yml (is " + m.url + " an Inmanta module?)");
    return false;
  }
  ModuleConfig meta = parseModuleConfig(text, m.name + "/module.yml" + (tag.empty() ? "" : " at tag " + tag));
  if (!meta.errors.empty()) {
    fail(m, "module " + m.name + ": " + joinList(meta.errors, "; "));
    return false;
  }
  if (!tag.empty()) {
    auto tv = parseVersion(tag);
    if (tv && meta.version && !(*tv == *meta.version)) {
      fail(m, "module " + m.name + ": tag " + tag + " has version " + meta.versionText +
                  " in module.yml; the tag and module.yml must agree (retag or fix module.yml)");
      return false;
    }
  }
  m.imports.clear();
  for (const std::string& f : git::listAt(m.dir, commit, "model", ".cf")) {
    std::string cf;
    if (git::readAt(m.dir, commit, f, cf))
      for (const std::string& i : importedModules(cf))
        if (i != m.name && std::find(m.imports.begin(), m.imports.end(), i) == m.imports.end())
          m.imports.push_back(i);
  }
  m.meta = std::move(meta);
  m.commit = commit;
  m.tag = tag;
  m.chosen = true;
  return true;
}

bool Installer::compilerAccepts(Mod& m, const Candidate& c) {
  // As Inmanta's installer does: a release whose module.yml asks for a newer compiler_version than ours is
  // passed over for an older matching one; so is a tag without module.yml (not a v1 release).
  static const Version ours = *parseVersion(kCompilerVersion);
  std::string text;
  if (!git::readAt(m.dir, c.commit, "module.yml", text)) {
    m.notV1.push_back(
        c.tag); // e.g. std 6.1 and later: v2 modules (Python packages) tagged in the same repository
    return false;
  }
  ModuleConfig meta = parseModuleConfig(text, m.name + "/module.yml");
  if (meta.compilerVersion.empty()) return true;
  std::optional<Version> want = parseVersion(meta.compilerVersion);
  if (!want || !(ours < *want)) return true;
  m.tooNew.push_back(c.tag + " (compiler_version " + meta.compilerVersion + ")");
  return false;
}

std::string Installer::noMatchMessage(const Mod& m, const std::vector<Constraint>& cs) {
  std::vector<std::string> avail;
  for (auto it = m.candidates.rbegin(); it != m.candidates.rend(); ++it) avail.push_back(it->version.str());
  std::string available = avail.empty() ? "none (the repository has no version tags)" : joinList(avail, ", ");
  std::vector<const Constraint*> real;
  for (const auto& c : cs)
    if (!c.second.specs.empty()) real.push_back(&c);
  bool eachSatisfiable = real.size() >= 2;
  for (const Constraint* c : real) {
    bool any = false;
    for (const Candidate& cand : m.candidates) any = any || allowed(cand.version, {*c});
    eachSatisfiable = eachSatisfiable && any;
  }
  std::string mode =
      p_.installMode == InstallMode::Release ? " (install_mode release: pre-releases excluded)" : "";
  if (eachSatisfiable) {
    std::string s = "conflict for module " + m.name + ": no version satisfies all of its requirements:";
    for (const Constraint* c : real) s += "\n  " + c->first + " requires " + c->second.str();
    return s + "\n  available versions: " + available + mode;
  }
  std::vector<std::string> parts;
  for (const auto& c : cs) parts.push_back(c.second.str() + " (required by " + c.first + ")");
  std::string tooNew = m.tooNew.empty() ? std::string()
                                        : "; matching but made for a newer compiler than " +
                                              std::string(kCompilerVersion) + ": " + joinList(m.tooNew, ", ");
  std::string notV1 = m.notV1.empty()
                          ? std::string()
                          : "; matching but without module.yml (v2 releases, not installable from "
                            "git): " +
                                joinList(m.notV1, ", ");
  return "no version of module " + m.name + " matches " + joinList(parts, " and ") +
         "; available versions: " + available + mode + tooNew + notV1;
}

bool Installer::choose(Mod& m, const std::vector<Constraint>& cs) {
  if (m.builtin) {
    // The built-in std answers only while it satisfies every constraint; otherwise std is installed from the
    // project's repositories like any module (and the compiler then loads that one, see docs/modules.md).
    if (m.meta.versionText.empty() && !m.dir.empty()) m.meta = readModuleConfig(m.dir);
    for (const auto& c : cs)
      if (m.meta.version && !c.second.specs.empty() && !c.second.contains(*m.meta.version)) {
        Mod again;
        again.name = m.name;
        again.builtinRefused = "the built-in std is version " + m.meta.versionText +
                               ", which does not satisfy " + c.second.constraintStr() + " (required by " +
                               c.first + ")";
        m = std::move(again);
        m.located = true;
        locate(m, 3);
        if (m.failed) return false;
        (void)choose(m, cs);
        return !m.failed; // a different module now: resolve again with what it requires
      }
  }
  if (m.local || m.builtin) {
    if (!m.chosen) {
      if (!m.dir.empty()) m.meta = readModuleConfig(m.dir);
      m.chosen = true;
      m.imports.clear();
      if (m.dir.empty()) return true;
      std::error_code ec;
      for (llvm::sys::fs::recursive_directory_iterator it(joinPath(m.dir, "model"), ec), end;
           it != end && !ec; it.increment(ec)) {
        if (it->path().size() < 3 || it->path().compare(it->path().size() - 3, 3, ".cf") != 0) continue;
        std::string cf;
        if (readWholeFile(it->path(), cf))
          for (const std::string& i : importedModules(cf))
            if (i != m.name) m.imports.push_back(i);
      }
      return true;
    }
    return false;
  }
  if (p_.installMode == InstallMode::Master) {
    if (m.chosen) return false;
    std::string commit = git::head(m.dir), branch, err;
    if (o_.update || m.fresh) {
      if (!loadCandidates(m)) return false;
      if (!git::defaultBranchCommit(m.dir, commit, branch, err)) {
        fail(m, "module " + m.name + ": " + err);
        return false;
      }
    }
    if (!readChoice(m, commit, "")) return false;
    if (m.meta.version)
      for (const auto& c : cs)
        if (!c.second.contains(*m.meta.version))
          r_.warnings.push_back("module " + m.name + ": the default branch has version " +
                                m.meta.versionText + ", which does not satisfy " + c.second.str() +
                                " (required by " + c.first + "; install_mode master ignores tags)");
    return true;
  }
  // Keep what is installed when it still satisfies everything (install, not update).
  if (!o_.update && !m.fresh) {
    std::string head = git::head(m.dir);
    if (m.chosen && m.commit == head && m.meta.version && allowed(*m.meta.version, cs)) return false;
    std::string text;
    if (!head.empty() && git::readAt(m.dir, head, "module.yml", text)) {
      ModuleConfig meta = parseModuleConfig(text, m.name + "/module.yml");
      if (meta.errors.empty() && meta.version && allowed(*meta.version, cs)) {
        if (m.chosen && m.commit == head) return false;
        std::string tag;
        std::vector<git::Tag> tags;
        std::string err;
        if (git::tags(m.dir, tags, err))
          for (const auto& t : tags)
            if (t.commit == head) tag = t.name;
        return readChoice(m, head, tag);
      }
    }
  }
  if (!loadCandidates(m)) return false;
  m.tooNew.clear();
  m.notV1.clear();
  for (const Candidate& c : m.candidates) {
    if (!allowed(c.version, cs)) continue;
    if (!compilerAccepts(m, c)) continue;
    if (m.chosen && m.commit == c.commit) return false;
    return readChoice(m, c.commit, c.tag);
  }
  fail(m, noMatchMessage(m, cs));
  return false;
}

void Installer::run() {
  std::vector<std::string> roots;
  for (const Requirement& r : p_.requirements) roots.push_back(r.name);
  std::string mainCf;
  std::vector<std::string> mainImports;
  if (readWholeFile(joinPath(p_.dir, "main.cf"), mainCf)) mainImports = importedModules(mainCf);
  for (const std::string& i : mainImports) roots.push_back(i);

  std::map<std::string, std::vector<Constraint>> reqs;
  std::vector<std::string> wanted;
  std::map<std::string, std::vector<std::string>> requiredBy;
  for (int iter = 0; iter < 100; ++iter) {
    // The requirement graph of the current choices.
    reqs.clear();
    requiredBy.clear();
    wanted.clear();
    std::set<std::string> seen;
    std::deque<std::string> queue;
    auto want = [&](const std::string& name, const std::string& by) {
      requiredBy[name].push_back(by);
      if (seen.insert(name).second) queue.push_back(name);
    };
    for (const Requirement& r : p_.requirements) {
      reqs[r.name].push_back({"project.yml", r});
      want(r.name, "project.yml");
    }
    for (const std::string& i : mainImports) want(i, "main.cf");
    while (!queue.empty()) {
      std::string name = queue.front();
      queue.pop_front();
      wanted.push_back(name);
      auto it = mods_.find(name);
      if (it == mods_.end() || !it->second.chosen) continue;
      const Mod& m = it->second;
      std::string by = m.name + " " + m.meta.versionText;
      for (const Requirement& r : m.meta.requirements) {
        reqs[r.name].push_back({by, r});
        want(r.name, by);
      }
      for (const std::string& i : m.imports) want(i, by);
    }
    bool changed = false;
    for (const std::string& name : wanted) {
      Mod& m = mods_[name];
      m.name = name;
      if (m.failed) continue;
      if (!m.located) {
        int stdNeed = 0;
        for (const auto& c : reqs[name]) stdNeed = std::max(stdNeed, c.first == "project.yml" ? 2 : 1);
        locate(m, stdNeed);
        if (m.failed) continue;
      }
      if (choose(m, reqs[name])) changed = true;
    }
    if (!changed) break;
  }
  if (!r_.errors.empty()) return;
  apply(wanted, reqs);
  (void)requiredBy;
  for (const std::string& name : wanted) {
    const Mod& m = mods_[name];
    ModuleState s;
    s.name = name;
    s.dir = m.dir;
    s.version = m.meta.versionText;
    s.source = m.builtin ? "built-in" : m.local ? "local" : m.url;
    std::vector<std::string> cs;
    for (const auto& c : reqs[name])
      if (!c.second.specs.empty()) cs.push_back(c.second.constraintStr());
    s.constraint = joinList(cs, ",");
    s.requiredBy = requiredBy[name];
    s.tag = m.tag;
    s.commit = m.commit;
    s.installed = true;
    s.managed = m.managed;
    r_.modules.push_back(s);
  }
  std::sort(r_.modules.begin(), r_.modules.end(),
            [](const ModuleState& a, const ModuleState& b) { return a.name < b.name; });
  r_.ok = r_.errors.empty();
}

void Installer::apply(const std::vector<std::string>& wanted,
                      std::map<std::string, std::vector<Constraint>>& reqs) {
  (void)reqs;
  for (const std::string& name : wanted) {
    Mod& m = mods_[name];
    std::string label = m.name + " " + m.meta.versionText + (m.tag.empty() ? "" : " (tag " + m.tag + ")");
    if (m.builtin) {
      log("Using the built-in std module" + (m.dir.empty() ? std::string() : " in " + m.dir));
      continue;
    }
    if (m.local) {
      log("Using local module " + label + " in " + m.dir);
      continue;
    }
    std::string head = git::head(m.dir);
    std::vector<std::string> changed = m.fresh ? std::vector<std::string>{} : git::changedPaths(m.dir);
    if (head == m.commit) {
      if (!changed.empty())
        r_.warnings.push_back("module " + m.name + " in " + m.dir + " has local changes (" +
                              joinList(changed, ", ") + ")");
      if (m.fresh) {
        std::string err;
        if (!git::checkout(m.dir, m.commit, true, err)) r_.errors.push_back("module " + m.name + ": " + err);
        log("Installed " + label + " from " + m.url);
      } else {
        log("Module " + label + " is already installed in " + m.dir);
      }
      continue;
    }
    if (!changed.empty()) {
      r_.errors.push_back("module " + m.name + " in " + m.dir + " has local changes (" +
                          joinList(changed, ", ") +
                          "); commit, stash or discard them before it can move to " + m.meta.versionText);
      continue;
    }
    std::string err;
    if (!git::checkout(m.dir, m.commit, m.fresh, err)) {
      r_.errors.push_back("module " + m.name + ": " + err);
      continue;
    }
    if (!m.fresh) ++r_.changed;
    log((m.fresh ? "Installed " : "Moved ") + label + (m.fresh ? " from " + m.url : " in " + m.dir));
  }
}

} // namespace

InstallReport installProject(const ProjectConfig& project, const InstallOptions& opts) {
  git::init();
  InstallReport r;
  if (!project.errors.empty()) {
    r.errors = project.errors;
    return r;
  }
  Installer(project, opts, r).run();
  r.ok = r.errors.empty();
  return r;
}

} // namespace inm::projectmgr

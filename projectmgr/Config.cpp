// Reading project.yml / module.yml for the installer and editing a project's `requires:` block in place (see
// projectmgr/Config.h). The keys and their meaning are Inmanta's: `repo` may be one string or a list whose
// entries are strings or {type, url} maps; `requires` a list of "name op version[, op version]" strings (the
// old mapping form of module.yml, {name: "name op version"}, is accepted too).
#include "projectmgr/Config.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace inm::projectmgr {

std::string joinPath(const std::string& a, const std::string& b) {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  return std::string(p.str());
}

static std::string absoluteIn(const std::string& p, const std::string& base) {
  llvm::SmallString<256> out;
  if (llvm::sys::path::is_absolute(p)) {
    out = p;
  } else {
    out = base;
    llvm::sys::path::append(out, p);
  }
  llvm::sys::fs::make_absolute(out);
  llvm::sys::path::remove_dots(out, true);
  return std::string(out.str());
}

bool readWholeFile(const std::string& path, std::string& out) {
  // Only regular files of a sane size: a FIFO or a device (main.cf -> /dev/zero) would block or never end
  // here, before the compiler's own source checks name the problem (support/SourceManager.cpp).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (int64_t(64) << 20))
    return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool writeWholeFile(const std::string& path, const std::string& text, std::string& error) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      error = "cannot write " + tmp;
      return false;
    }
    out << text;
    if (!out.good()) {
      error = "cannot write " + tmp;
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    return false;
  }
  return true;
}

std::string RepoEntry::urlFor(const std::string& module) const {
  if (auto pos = url.find("{}"); pos != std::string::npos) {
    std::string out = url;
    while ((pos = out.find("{}")) != std::string::npos) out.replace(pos, 2, module);
    return out;
  }
  if (!url.empty() && url.back() != '/' && url.back() != ':') return url + "/" + module;
  return url + module;
}

const char* installModeName(InstallMode m) {
  return m == InstallMode::Release ? "release" : m == InstallMode::Prerelease ? "prerelease" : "master";
}

/// The last value of `key` (repeated keys: the last one wins, as the reference's loader does).
static YAML::Node lastValue(const YAML::Node& map, const char* key) {
  YAML::Node found(YAML::NodeType::Undefined);
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) found.reset(kv.second);
  return found;
}

static void readRequires(const YAML::Node& n, const std::string& where, std::vector<Requirement>& out,
                         std::vector<std::string>& errors) {
  auto add = [&](const std::string& text) {
    std::string err;
    if (auto r = parseRequirement(text, err))
      out.push_back(*r);
    else
      errors.push_back(where + ": requires: " + err);
  };
  if (!n || n.IsNull()) return;
  if (n.IsSequence()) {
    for (const YAML::Node& e : n) {
      if (e.IsScalar())
        add(e.Scalar());
      else
        errors.push_back(where + ": requires: entries must be strings such as 'name>=1.0'");
    }
  } else if (n.IsMap()) {
    for (const auto& kv : n)
      if (kv.second.IsScalar()) add(kv.second.Scalar());
  } else if (n.IsScalar()) {
    add(n.Scalar());
  } else {
    errors.push_back(where + ": requires: must be a list of strings");
  }
}

ProjectConfig readProjectConfig(const std::string& projectDir) {
  ProjectConfig c;
  c.dir = absoluteIn(projectDir, ".");
  c.file = joinPath(c.dir, "project.yml");
  std::string text;
  if (!readWholeFile(c.file, text)) {
    c.errors.push_back(c.file + ": cannot read the file (is this a project folder?)");
    return c;
  }
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsMap()) {
      if (YAML::Node n = lastValue(root, "name"); n && n.IsScalar()) c.name = n.Scalar();
      if (YAML::Node n = lastValue(root, "modulepath")) {
        if (n.IsScalar())
          c.modulePath.push_back(absoluteIn(n.Scalar(), c.dir));
        else if (n.IsSequence())
          for (const YAML::Node& e : n)
            if (e.IsScalar()) c.modulePath.push_back(absoluteIn(e.Scalar(), c.dir));
      }
      if (YAML::Node n = lastValue(root, "downloadpath"); n && n.IsScalar())
        c.downloadPath = absoluteIn(n.Scalar(), c.dir);
      if (YAML::Node n = lastValue(root, "repo")) {
        auto addRepo = [&](const YAML::Node& e) {
          RepoEntry r;
          if (e.IsScalar()) {
            r.url = e.Scalar();
          } else if (e.IsMap()) {
            if (YAML::Node u = lastValue(e, "url"); u && u.IsScalar()) r.url = u.Scalar();
            if (YAML::Node t = lastValue(e, "type"); t && t.IsScalar()) r.type = t.Scalar();
            if (r.type != "git" && r.type != "package")
              c.errors.push_back(c.file + ": repo: type '" + r.type + "' is not one of git, package");
          }
          if (r.url.empty())
            c.errors.push_back(c.file + ": repo: each entry needs a url");
          else
            c.repos.push_back(r);
        };
        if (n.IsSequence())
          for (const YAML::Node& e : n) addRepo(e);
        else if (!n.IsNull())
          addRepo(n);
      }
      readRequires(lastValue(root, "requires"), c.file, c.requirements, c.errors);
      if (YAML::Node n = lastValue(root, "install_mode"); n && n.IsScalar()) {
        std::string m = n.Scalar();
        if (m == "release")
          c.installMode = InstallMode::Release;
        else if (m == "prerelease")
          c.installMode = InstallMode::Prerelease;
        else if (m == "master")
          c.installMode = InstallMode::Master;
        else
          c.errors.push_back(c.file + ": install_mode: '" + m +
                             "' is not one of release, prerelease, master");
      }
      if (YAML::Node n = lastValue(root, "builtin_std"); n && n.IsScalar())
        c.builtinStd = n.Scalar() == "true" || n.Scalar() == "True";
      if (YAML::Node n = lastValue(root, "freeze_recursive"); n && n.IsScalar())
        c.freezeRecursive = n.Scalar() == "true" || n.Scalar() == "True" || n.Scalar() == "yes";
      if (YAML::Node n = lastValue(root, "freeze_operator"); n && n.IsScalar()) {
        c.freezeOperator = n.Scalar();
        if (c.freezeOperator != "==" && c.freezeOperator != "~=" && c.freezeOperator != ">=")
          c.errors.push_back(c.file + ": freeze_operator: '" + c.freezeOperator +
                             "' is not one of ==, ~=, >=");
      }
    } else if (!root.IsNull()) {
      c.errors.push_back(c.file + ": the top level must be a mapping");
    }
  } catch (const YAML::Exception& e) {
    c.errors.push_back(c.file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (c.downloadPath.empty())
    c.downloadPath = c.modulePath.empty() ? joinPath(c.dir, "libs") : c.modulePath.front();
  if (c.modulePath.empty()) c.modulePath.push_back(c.downloadPath);
  return c;
}

ModuleConfig parseModuleConfig(const std::string& text, const std::string& where) {
  ModuleConfig m;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      m.errors.push_back(where + ": the top level must be a mapping");
      return m;
    }
    if (YAML::Node n = lastValue(root, "name"); n && n.IsScalar()) m.name = n.Scalar();
    if (YAML::Node n = lastValue(root, "version"); n && n.IsScalar()) {
      m.versionText = n.Scalar();
      m.version = parseVersion(m.versionText);
      if (!m.version)
        m.errors.push_back(where + ": version '" + m.versionText + "' is not a PEP 440 version");
    } else {
      m.errors.push_back(where + ": no version");
    }
    if (YAML::Node n = lastValue(root, "compiler_version"); n && n.IsScalar()) m.compilerVersion = n.Scalar();
    readRequires(lastValue(root, "requires"), where, m.requirements, m.errors);
  } catch (const YAML::Exception& e) {
    m.errors.push_back(where + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return m;
}

ModuleConfig readModuleConfig(const std::string& moduleDir) {
  std::string path = joinPath(moduleDir, "module.yml");
  std::string text;
  if (!readWholeFile(path, text)) {
    ModuleConfig m;
    m.errors.push_back(path + ": cannot read the file");
    m.dir = moduleDir;
    return m;
  }
  ModuleConfig m = parseModuleConfig(text, path);
  m.dir = moduleDir;
  return m;
}

std::string replaceRequiresBlock(const std::string& text, const std::vector<std::string>& entries) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  std::string block = "requires:\n";
  if (entries.empty()) block = "requires: []\n";
  for (const std::string& e : entries) block += "  - " + e + "\n";
  std::string out;
  bool replaced = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (!replaced && l.rfind("requires:", 0) == 0) {
      // The block: following lines that are indented, list items at column 0, blank or comment lines
      // followed by more of the block.
      size_t j = i + 1;
      size_t end = j;
      for (; j < lines.size(); ++j) {
        const std::string& n = lines[j];
        bool blank = n.find_first_not_of(" \t") == std::string::npos;
        bool comment = !blank && n[n.find_first_not_of(" \t")] == '#';
        if (blank || comment) continue;
        if (n[0] == ' ' || n[0] == '\t' || n.rfind("- ", 0) == 0 || n == "-")
          end = j + 1;
        else
          break;
      }
      out += block;
      i = end - 1;
      replaced = true;
      continue;
    }
    out += l + "\n";
  }
  if (!replaced) {
    if (!out.empty() && out.back() != '\n') out += "\n";
    out += block;
  }
  return out;
}

std::vector<std::string> importedModules(const std::string& cfText) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  std::istringstream in(cfText);
  std::string l;
  while (std::getline(in, l)) {
    size_t i = l.find_first_not_of(" \t");
    if (i == std::string::npos || l.compare(i, 6, "import") != 0) continue;
    i += 6;
    if (i >= l.size() || (l[i] != ' ' && l[i] != '\t')) continue;
    i = l.find_first_not_of(" \t", i);
    if (i == std::string::npos) continue;
    size_t j = i;
    while (j < l.size() && (std::isalnum(static_cast<unsigned char>(l[j])) || l[j] == '_')) ++j;
    std::string name = l.substr(i, j - i);
    if (!name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) && seen.insert(name).second)
      out.push_back(name);
  }
  return out;
}

} // namespace inm::projectmgr

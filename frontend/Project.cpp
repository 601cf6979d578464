// The project and module loader (frontend stage, before ir::lower): reads project.yml (yaml-cpp), parses
// main.cf as namespace `__config__`, then follows `import` declarations transitively through the module
// path, loading every prefix of an imported namespace (`a::b::c` loads `a`, `a::b`, `a::b::c`) and our own
// std module (always the shipped one, never a project copy) unless autostd is off. Module problems are
// reported like the reference: a ModuleLoading error at the import statement whose cause says why.
// Invariant: each namespace (hence each file) is parsed at most once, main.cf is files[0], and a module
// that failed to load is reported once, however many files import it.
// Leniency: when project.yml is missing but an explicit entry file (-f) exists, the file is compiled with
// an empty module path (single-file goldens need no project); without -f a missing project.yml is an error.
#include "frontend/Project.h"

#include "frontend/Frontend.h"
#include "support/Limits.h"
#include "support/Suggest.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <yaml-cpp/yaml.h>

#include <deque>
#include <set>
#include <string>
#include <unordered_map>

namespace inm::frontend {

namespace {

bool isDir(const std::string& p) { return llvm::sys::fs::is_directory(p); }
/// Exists and is not a directory: a FIFO or a device named like a source file is loaded, so that
/// SourceManager::loadFile refuses it with its reason instead of the import reporting a missing module.
bool isFileLike(const std::string& p) { return llvm::sys::fs::exists(p) && !isDir(p); }
/// The reason part of a loadFile error ("cannot read PATH: REASON").
std::string unreadableReason(llvm::Error e, const std::string& path) {
  std::string m = llvm::toString(std::move(e));
  std::string prefix = "cannot read " + path + ": ";
  return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
}
bool isFile(const std::string& p) { return llvm::sys::fs::is_regular_file(p); }

std::string joinPath(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  return std::string(p.str());
}

/// Absolute, dot-free form of `p` (relative paths are taken against `base`).
std::string absolutePath(llvm::StringRef p, llvm::StringRef base) {
  llvm::SmallString<256> out;
  if (llvm::sys::path::is_absolute(p)) {
    out = p;
  } else {
    out = base;
    llvm::sys::path::append(out, p);
  }
  llvm::sys::fs::make_absolute(out);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  return std::string(out.str());
}

/// Splits "a::b::c" into its parts.
std::vector<std::string> splitNs(llvm::StringRef ns) {
  llvm::SmallVector<llvm::StringRef, 4> pieces;
  ns.split(pieces, "::");
  return std::vector<std::string>(pieces.begin(), pieces.end());
}

/// Where an import came from, for "reported in import x (file:line)".
struct ImportSite {
  std::string text;  // "import a::b"
  SourceRange range; // the import statement
};

/// A module found on the module path (or our std).
struct ModuleInfo {
  bool ok = false;
  std::string dir;
};

class Loader {
 public:
  Loader(const LoadOptions& opts, SourceManager& sm, StringTable& strings, DiagnosticEngine& diags,
         Project& p)
      : opts_(opts), sm_(sm), strings_(strings), diags_(diags), project_(p) {}

  void run();

 private:
  bool readProjectYml(const std::string& path);
  void loadNamespace(const std::string& ns, const ImportSite& site);
  /// Loads namespace `ns` = the first `count` of `parts`; false when nothing below it can exist.
  bool loadOne(const std::string& ns, const std::vector<std::string>& parts, size_t count,
               const ImportSite& site);
  const ModuleInfo& findModule(const std::string& name, const ImportSite& site);
  void parseInto(const std::string& path, const std::string& ns, const std::string& module,
                 const std::string& moduleDir);
  void queueImports(const Ast& ast);
  void reportLoading(const std::string& what, const ImportSite& site, Diagnostic cause);
  /// The module on the module path whose name is nearest to `name` (a "did you mean" note), or "".
  std::string nearModule(const std::string& name) const;
  SourceRange wholeFile(FileId f) const;

  const LoadOptions& opts_;
  SourceManager& sm_;
  StringTable& strings_;
  DiagnosticEngine& diags_;
  Project& project_;
  std::string stdDir_;
  std::set<std::string> loadedNs_; // namespaces parsed (or failed) already
  std::set<std::string> deadNs_;   // namespaces with nothing below them (see loadNamespace)
  std::unordered_map<std::string, ModuleInfo> modules_; // top-level module name -> location
  std::deque<std::pair<std::string, ImportSite>> queue_;
};

SourceRange Loader::wholeFile(FileId f) const { return SourceRange{f, 1, 1, 1, 1}; }

void Loader::reportLoading(const std::string& what, const ImportSite& site, Diagnostic cause) {
  Diagnostic d = makeDiag(DiagKind::ModuleLoading, site.range, what);
  if (site.range.valid()) d.reportedIn = site.text; // the implicit std import has no statement
  d.causedBy(std::move(cause));
  diags_.report(std::move(d));
}

/// Checks metadata text before yaml-cpp sees it (yaml-cpp recurses along the nesting and has no limits):
/// size, NUL bytes, UTF-8 and nesting (indentation levels, `- ` sequence markers and flow brackets) within
/// the limits of support/Limits.h. Returns "" or the error, with its 0-based line and column.
static std::string precheckYaml(llvm::StringRef text, int& line, int& col) {
  line = -1;
  col = 0;
  if (text.size() > limits().maxMetadataBytes)
    return fmt::format("the file has {} bytes, more than the limit of {} (--max-metadata-bytes)", text.size(),
                       limits().maxMetadataBytes);
  std::vector<size_t> indents;
  size_t flow = 0;
  int ln = 0;
  size_t lineStart = 0;
  for (size_t i = 0; i <= text.size();) {
    size_t end = text.find('\n', i);
    if (end == llvm::StringRef::npos) end = text.size();
    llvm::StringRef l = text.slice(i, end);
    lineStart = i;
    if (size_t nul = l.find('\0'); nul != llvm::StringRef::npos) {
      line = ln;
      col = int(nul);
      return "a NUL byte is not allowed in YAML";
    }
    for (size_t k = 0; k < l.size(); ++k) {
      unsigned char c = static_cast<unsigned char>(l[k]);
      if (c >= 0x80) continue; // UTF-8 is checked as a whole below
      if (c < 0x20 && c != '\t' && c != '\r') {
        line = ln;
        col = int(k);
        return fmt::format("control character 0x{:02x} is not allowed in YAML", c);
      }
    }
    llvm::StringRef body = l.ltrim(' ');
    if (!body.empty() && !body.startswith("#")) {
      size_t indent = l.size() - body.size();
      while (!indents.empty() && indents.back() >= indent) indents.pop_back();
      indents.push_back(indent);
      size_t dashes = 0;
      while (body.startswith("- ") || body == "-") {
        ++dashes;
        body = body.drop_front(std::min<size_t>(2, body.size())).ltrim(' ');
      }
      char quote = 0;
      for (char c : body) {
        if (quote) {
          if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"')
          quote = c;
        else if (c == '#')
          break;
        else if (c == '[' || c == '{')
          ++flow;
        else if ((c == ']' || c == '}') && flow)
          --flow;
        if (indents.size() + dashes + flow > limits().maxNesting) {
          line = ln;
          col = int(indent);
          return fmt::format("nested too deep: more than {} levels (--max-nesting)", limits().maxNesting);
        }
      }
      if (indents.size() + dashes + flow > limits().maxNesting) {
        line = ln;
        col = int(indent);
        return fmt::format("nested too deep: more than {} levels (--max-nesting)", limits().maxNesting);
      }
    }
    (void)lineStart;
    ++ln;
    i = end + 1;
  }
  // UTF-8 (YAML 1.2 streams here are UTF-8).
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80                 ? 1
                 : c >= 0xC2 && c <= 0xDF ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    bool ok = len && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!ok) {
      line = int(text.take_front(i).count('\n'));
      size_t ls = text.rfind('\n', i);
      col = int(ls == llvm::StringRef::npos ? i : i - ls - 1);
      return fmt::format("invalid UTF-8 byte 0x{:02x}", c);
    }
    i += len;
  }
  return "";
}

/// The value of `key` in mapping `map`, the LAST one when the key is repeated (as the reference's YAML loader
/// does; yaml-cpp's operator[] would return the first).
static YAML::Node lastValue(const YAML::Node& map, const char* key) {
  YAML::Node found(YAML::NodeType::Undefined); // `if (node)` is false until a key matches
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) found.reset(kv.second);
  return found;
}

bool Loader::readProjectYml(const std::string& path) {
  auto file = sm_.loadFile(path);
  if (!file) {
    diags_.error(DiagKind::ProjectFileUnreadable, SourceRange{}, path,
                 unreadableReason(file.takeError(), path));
    return false;
  }
  auto invalid = [&](const std::string& msg, int line, int col) {
    SourceRange r = wholeFile(*file);
    if (line >= 0)
      r = SourceRange{*file, uint32_t(line + 1), uint32_t(col + 1), uint32_t(line + 1), uint32_t(col + 2)};
    diags_.error(DiagKind::ProjectMetadataInvalid, r, path, msg);
  };
  {
    int line = -1, col = 0;
    std::string err = precheckYaml(sm_.text(*file), line, col);
    if (!err.empty()) {
      invalid(err, line, col);
      return false;
    }
  }
  try {
    YAML::Node root = YAML::Load(sm_.text(*file).str());
    if (root.IsNull()) return true; // an empty project.yml: all defaults
    if (!root.IsMap()) {
      invalid("the top level must be a mapping", root.Mark().line, root.Mark().column);
      return false;
    }
    bool ok = true;
    if (YAML::Node n = lastValue(root, "name")) {
      if (n.IsScalar())
        project_.name = n.as<std::string>();
      else {
        invalid("'name' must be a string", n.Mark().line, n.Mark().column);
        ok = false;
      }
    }
    if (YAML::Node n = lastValue(root, "modulepath")) {
      auto add = [&](const YAML::Node& e) {
        if (!e.IsScalar()) {
          invalid("'modulepath' entries must be strings", e.Mark().line, e.Mark().column);
          ok = false;
          return;
        }
        project_.modulePath.push_back(absolutePath(e.as<std::string>(), project_.dir));
      };
      if (n.IsSequence()) {
        for (const YAML::Node& e : n) add(e);
      } else if (n.IsScalar()) {
        add(n);
      } else if (!n.IsNull()) {
        invalid("'modulepath' must be a string or a list of strings", n.Mark().line, n.Mark().column);
        ok = false;
      }
    }
    if (YAML::Node n = lastValue(root, "builtin_std")) {
      std::string v = n.IsScalar() ? llvm::StringRef(n.as<std::string>()).lower() : std::string();
      if (v == "true" || v == "false") {
        project_.builtinStdOption = v == "true";
      } else {
        invalid("'builtin_std' must be true or false", n.Mark().line, n.Mark().column);
        ok = false;
      }
    }
    if (YAML::Node n = lastValue(root, "relation_precedence_policy")) {
      if (n.IsSequence()) {
        for (const YAML::Node& e : n) {
          if (e.IsScalar())
            project_.relationPrecedencePolicy.push_back(e.as<std::string>());
          else {
            invalid("'relation_precedence_policy' entries must be strings", e.Mark().line, e.Mark().column);
            ok = false;
          }
        }
      } else if (!n.IsNull()) {
        invalid("'relation_precedence_policy' must be a list of strings", n.Mark().line, n.Mark().column);
        ok = false;
      }
    }
    return ok;
  } catch (const YAML::Exception& e) {
    invalid(e.msg, e.mark.is_null() ? -1 : e.mark.line, e.mark.is_null() ? 0 : e.mark.column);
    return false;
  }
}

std::string Loader::nearModule(const std::string& name) const {
  Suggester near(name);
  near.add("std");
  for (const std::string& dir : project_.modulePath) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (isFile(joinPath(it->path(), "module.yml"))) near.add(llvm::sys::path::filename(it->path()));
  }
  return near.best();
}

const ModuleInfo& Loader::findModule(const std::string& name, const ImportSite& site) {
  auto it = modules_.find(name);
  if (it != modules_.end()) return it->second;
  ModuleInfo& info = modules_[name];
  if (name == "std") {
    // The project's own std (a std/ module on its module path, e.g. installed from git because a module pins
    // std<5, or put there by hand) is loaded like any other module, model and Python; our built-in std only
    // answers when there is none or when the user asks for it (project.yml `builtin_std`, --builtin-std).
    const bool forced = opts_.builtinStd || project_.builtinStdOption;
    for (const std::string& dir : project_.modulePath) {
      std::string own = joinPath(dir, "std");
      if (!isDir(own) || !(isFile(joinPath(own, "module.yml")) || isDir(joinPath(own, "model")))) continue;
      if (forced) {
        project_.builtinStdBy = opts_.builtinStd ? "--builtin-std" : "builtin_std in project.yml";
        break;
      }
      // A std without model/_init.cf is reported when its namespace is loaded (InvalidModule), never passed
      // over for the built-in one.
      info.ok = true;
      info.dir = own;
      project_.stdDir = own;
      project_.ownStd = true;
      return info;
    }
    if (stdDir_.empty() || !isFile(joinPath(stdDir_, "model/_init.cf"))) {
      reportLoading(name, site, makeDiag(DiagKind::StdModuleMissing, SourceRange{}, stdDir_));
      return info;
    }
    info.ok = true;
    info.dir = stdDir_;
    project_.stdDir = stdDir_;
    return info;
  }
  std::string found;
  for (const std::string& dir : project_.modulePath) {
    std::string cand = joinPath(dir, name);
    if (isDir(cand)) {
      found = cand;
      break;
    }
  }
  if (found.empty()) {
    Diagnostic cause = makeDiag(DiagKind::ModuleNotFound, SourceRange{}, name);
    addDidYouMean(cause, nearModule(name));
    cause.note(makeDiag(DiagKind::ModuleNotFoundHowToInstall, SourceRange{}, name));
    reportLoading(name, site, std::move(cause));
    return info;
  }
  std::string yml = joinPath(found, "module.yml");
  if (!isFile(yml)) {
    reportLoading(name, site, makeDiag(DiagKind::MetadataMissing, SourceRange{}, yml));
    return info;
  }
  try {
    std::string text;
    {
      auto buf = llvm::MemoryBuffer::getFile(yml, /*IsText=*/false, /*RequiresNullTerminator=*/false);
      if (!buf)
        throw YAML::Exception(YAML::Mark::null_mark(), "cannot read the file: " + buf.getError().message());
      text = (*buf)->getBuffer().str();
    }
    int line = -1, col = 0;
    if (std::string err = precheckYaml(text, line, col); !err.empty()) {
      YAML::Mark m;
      m.line = line;
      m.column = col;
      throw YAML::Exception(line >= 0 ? m : YAML::Mark::null_mark(), err);
    }
    YAML::Node meta = YAML::Load(text);
    if (!meta.IsNull() && !meta.IsMap()) {
      reportLoading(name, site, makeDiag(DiagKind::MetadataNotMapping, SourceRange{}, yml));
      return info;
    }
    // name and version are read for validation only: the directory name is what imports match.
    if (meta.IsMap()) {
      if (YAML::Node n = lastValue(meta, "name"); n && !n.IsScalar())
        throw YAML::Exception(n.Mark(), "'name' must be a string");
      if (YAML::Node v = lastValue(meta, "version"); v && !v.IsScalar())
        throw YAML::Exception(v.Mark(), "'version' must be a string");
    }
  } catch (const YAML::Exception& e) {
    reportLoading(name, site, makeDiag(DiagKind::InvalidMetadata, SourceRange{}, yml, e.msg));
    return info;
  }
  info.ok = true;
  info.dir = found;
  return info;
}

void Loader::parseInto(const std::string& path, const std::string& ns, const std::string& module,
                       const std::string& moduleDir) {
  auto file = sm_.loadFile(path);
  if (!file) {
    diags_.error(DiagKind::ModuleFileUnreadable, SourceRange{}, path,
                 unreadableReason(file.takeError(), path));
    return;
  }
  project_.files.push_back(
      SourceFile{ns, module, moduleDir, parseFile(*file, sm_, strings_, diags_, opts_.parse)});
  queueImports(project_.files.back().ast);
}

void Loader::queueImports(const Ast& ast) {
  for (DeclId id : ast.topDecls) {
    const Decl& d = ast.decls[id];
    if (d.kind != DeclKind::Import || !d.name.valid()) continue;
    std::string path = strings_.str(d.name).str();
    // The parser already reported hyphenated paths (and normally drops such decls).
    if (path.empty() || llvm::StringRef(path).contains('-')) continue;
    queue_.push_back({path, ImportSite{"import " + path, d.range}});
  }
}

void Loader::loadNamespace(const std::string& ns, const ImportSite& site) {
  if (loadedNs_.count(ns)) return;
  std::vector<std::string> parts = splitNs(ns);
  // Every prefix first, in order (`a::b::c` needs `a` and `a::b`), each once. Iterative, and it stops at a
  // prefix that cannot have anything below it (no module, or neither a file nor a folder for it): an import
  // path of 20,000 names used to load its prefixes recursively (cubic) and report every one of them.
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix += (i ? "::" : "") + parts[i];
    if (deadNs_.count(prefix)) return;
    if (loadedNs_.count(prefix)) continue;
    loadedNs_.insert(prefix);
    if (!loadOne(prefix, parts, i + 1, site)) {
      deadNs_.insert(prefix);
      return;
    }
  }
}

bool Loader::loadOne(const std::string& ns, const std::vector<std::string>& parts, size_t count,
                     const ImportSite& site) {
  const ModuleInfo& mod = findModule(parts[0], site);
  if (!mod.ok) return false;
  std::string modelDir = joinPath(mod.dir, "model");
  std::string path;
  bool folder = false;
  if (count == 1) {
    path = joinPath(modelDir, "_init.cf");
    folder = true;
    if (!isFileLike(path)) path.clear();
  } else {
    std::string rel = parts[1];
    for (size_t i = 2; i < count; ++i) rel = joinPath(rel, parts[i]);
    std::string asDir = joinPath(modelDir, rel);
    if (isDir(asDir)) {
      path = joinPath(asDir, "_init.cf"); // a directory wins over a same-named .cf
      folder = true;
    } else {
      path = joinPath(modelDir, rel + ".cf");
    }
    if (!isFileLike(path)) path.clear();
  }
  if (path.empty()) {
    reportLoading(ns, site, makeDiag(DiagKind::InvalidModule, SourceRange{}, ns));
    return folder; // a folder without _init.cf may still hold the namespaces below
  }
  parseInto(path, ns, parts[0], mod.dir);
  return true;
}

void Loader::run() {
  llvm::SmallString<256> cwd;
  llvm::sys::fs::current_path(cwd);
  project_.dir = absolutePath(opts_.projectDir, cwd);
  stdDir_ = opts_.stdDir.empty() ? defaultStdDir() : absolutePath(opts_.stdDir, cwd);

  const bool explicitMain = opts_.mainFile != "main.cf";
  std::string mainPath =
      absolutePath(opts_.mainFile, explicitMain ? cwd.str() : llvm::StringRef(project_.dir));
  std::string yml = joinPath(project_.dir, "project.yml");
  if (!isDir(project_.dir)) {
    diags_.error(DiagKind::ProjectNotADirectory, SourceRange{}, project_.dir);
    return;
  }
  if (isFile(yml)) {
    if (!readProjectYml(yml)) return;
  } else if (!(explicitMain && isFileLike(mainPath))) {
    diags_.error(DiagKind::ProjectNotFound, SourceRange{}, project_.dir);
    return;
  }

  // Locations name the main file as the reference does: the project directory as given joined with the
  // file (`./main.cf` when compiling in the project, Project.get() finding "." there); module files stay
  // absolute (the module path is made absolute). An explicit -f is taken from the cwd, so shown from it.
  llvm::StringRef given = opts_.mainFile;
  std::string display =
      llvm::sys::path::is_absolute(given) ? given.str()
      : explicitMain ? (given.startswith("./") || given.startswith("../") ? given.str() : "./" + given.str())
      : opts_.projectDir == "." ? "./" + given.str()
                                : joinPath(opts_.projectDir, given);
  auto mainFile = sm_.loadFile(mainPath, display);
  if (!mainFile) {
    diags_.error(DiagKind::ProjectFileUnreadable, SourceRange{}, mainPath,
                 unreadableReason(mainFile.takeError(), mainPath));
    return;
  }
  loadedNs_.insert("__config__");
  project_.files.push_back(SourceFile{"__config__", "__config__", project_.dir,
                                      parseFile(*mainFile, sm_, strings_, diags_, opts_.parse)});
  queueImports(project_.files.front().ast);
  if (opts_.autostd) queue_.push_front({"std", ImportSite{"import std", SourceRange{}}});

  while (!queue_.empty()) {
    auto [ns, site] = std::move(queue_.front());
    queue_.pop_front();
    loadNamespace(ns, site);
  }
}

} // namespace

std::string defaultStdDir() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("inmanta", &anchor);
  if (!exe.empty()) {
    llvm::SmallString<256> p(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(p, "..", "share", "inmanta", "modules");
    llvm::sys::path::append(p, "std");
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
    if (isFile(joinPath(p, "model/_init.cf"))) return std::string(p.str());
  }
#ifdef INM_SOURCE_STD_DIR
  if (isDir(INM_SOURCE_STD_DIR)) return INM_SOURCE_STD_DIR;
#endif
  return "";
}

Project loadProject(const LoadOptions& opts, SourceManager& sm, StringTable& strings,
                    DiagnosticEngine& diags) {
  Project p;
  Loader(opts, sm, strings, diags, p).run();
  return p;
}

} // namespace inm::frontend

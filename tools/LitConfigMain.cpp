// `inmanta lit-config`: what a module or project repository needs to write lit + FileCheck tests of its own
// models (`# RUN: %inmanta compile ... | FileCheck %s`). It prints (or writes with -o) a lit configuration
// whose substitutions point at this binary and at the tools found relative to it: %inmanta, FileCheck and
// `not` (next to the binary, then Debian's llvm-14, then PATH), %std (the std module this binary loads),
// %root (the repository: the nearest folder above the tests holding module.yml or project.yml) and %project
// DIR FILE, a scaffold that makes DIR a throwaway project whose main.cf is FILE (usually %s, the test itself)
// and whose module path holds the repository's module. `--scaffold DIR FILE [--module NAME=PATH]...` is that
// scaffold;
// `--lit` prints the command that runs lit. Invariant: the printed config depends only on where this binary
// and its tools are installed, never on the current directory; the repository is found when lit loads it.
#include "Verbs.h"
#include "frontend/Project.h"
#include "support/PyRepr.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace inm::tools {

namespace {

std::string thisBinary() {
  static int anchor;
  return llvm::sys::fs::getMainExecutable("inmanta", &anchor);
}

/// A tool of llvm-14 (FileCheck, not): next to this binary, then Debian's llvm-14 folder, then PATH.
std::string findTool(llvm::StringRef name) {
  std::string exe = thisBinary();
  std::vector<std::string> dirs;
  if (!exe.empty()) dirs.push_back(llvm::sys::path::parent_path(exe).str());
  dirs.push_back("/usr/lib/llvm-14/bin");
  for (const std::string& d : dirs) {
    llvm::SmallString<256> p(d);
    llvm::sys::path::append(p, name);
    if (llvm::sys::fs::can_execute(p)) return std::string(p.str());
  }
  for (llvm::StringRef candidate : {name.str(), (name + "-14").str()})
    if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(candidate)) return *p;
  return "";
}

/// lit itself: Debian's llvm-14 copy, else a `lit` on PATH (pip install lit).
std::string litCommand() {
  const char* debian = "/usr/lib/llvm-14/build/utils/lit/lit.py";
  if (llvm::sys::fs::exists(debian)) return std::string("python3 ") + debian;
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("lit")) return *p;
  return "";
}

// The config lit loads. `@NAME@` placeholders are replaced by Python string literals. The repository root and
// its module name are found when lit loads the file (from __file__), so one printed config serves any
// checkout.
constexpr const char* kConfig =
    R"PY(# lit configuration for model tests, written by `inmanta lit-config` (docs/testing.md, "For users").
# Substitutions: %inmanta, FileCheck, not, %std, %root, %project DIR FILE (a throwaway project: main.cf = FILE,
# module path = this repository's module). Tests are the *.cf files below this folder, except under Inputs/.
import os
import re

import lit.formats

inmanta = @INMANTA@
filecheck = @FILECHECK@
not_tool = @NOT@
std_dir = @STD@

config.name = "inmanta-model-tests"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cf"]
config.excludes = ["Inputs", "Output", "libs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
if lit_config.params.get("exec_root"):
    config.test_exec_root = os.path.abspath(lit_config.params["exec_root"])


def _repository_root(start):
    d = start
    while True:
        if os.path.isfile(os.path.join(d, "module.yml")) or os.path.isfile(os.path.join(d, "project.yml")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return start
        d = parent


root = _repository_root(config.test_source_root)
modules = []
module_yml = os.path.join(root, "module.yml")
if os.path.isfile(module_yml):
    with open(module_yml) as f:
        m = re.search(r"^name:\s*['\"]?([A-Za-z0-9_]+)", f.read(), re.M)
    if m:
        modules.append("--module %s=%s" % (m.group(1), root))
if not filecheck:
    lit_config.fatal("FileCheck not found (Debian: apt-get install llvm-14-tools)")

config.substitutions.append(("%inmanta", inmanta))
config.substitutions.append(("%std", std_dir))
config.substitutions.append(("%root", root))
config.substitutions.append(("%project", "%s lit-config %s --scaffold" % (inmanta, " ".join(modules))))
config.substitutions.append(("%FileCheck", filecheck))
config.substitutions.append((r"\bFileCheck\b", filecheck))
if not_tool:
    config.substitutions.append((r"(^|\|\s*|&&\s*|;\s*)not\b", r"\1" + not_tool))

config.environment["LC_ALL"] = "C.UTF-8"
for var in ("PATH", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
)PY";

std::string renderConfig() {
  auto lit = [](const std::string& s) { return pyStrRepr(s); };
  std::string out = kConfig;
  auto put = [&](llvm::StringRef key, const std::string& value) {
    for (size_t at = out.find(key.str()); at != std::string::npos;
         at = out.find(key.str(), at + value.size()))
      out.replace(at, key.size(), value);
  };
  put("@INMANTA@", lit(thisBinary()));
  put("@FILECHECK@", lit(findTool("FileCheck")));
  put("@NOT@", lit(findTool("not")));
  put("@STD@", lit(frontend::defaultStdDir()));
  return out;
}

int fail(const std::string& msg) {
  llvm::errs() << "inmanta lit-config: error: " << msg << "\n";
  return 1;
}

/// `--scaffold DIR FILE`: DIR becomes a fresh project (project.yml, main.cf = FILE, libs/NAME -> PATH).
int scaffold(const std::string& dir, const std::string& mainFile,
             const std::vector<std::pair<std::string, std::string>>& modules) {
  if (llvm::sys::fs::exists(dir)) {
    if (std::error_code ec = llvm::sys::fs::remove_directories(dir))
      return fail("cannot remove " + dir + ": " + ec.message());
  }
  llvm::SmallString<256> libs(dir);
  llvm::sys::path::append(libs, "libs");
  if (std::error_code ec = llvm::sys::fs::create_directories(libs))
    return fail("cannot create " + std::string(libs.str()) + ": " + ec.message());
  for (const auto& [name, path] : modules) {
    llvm::SmallString<256> target(path);
    llvm::sys::fs::make_absolute(target);
    llvm::SmallString<256> link(libs);
    llvm::sys::path::append(link, name);
    if (std::error_code ec = llvm::sys::fs::create_link(target, link))
      return fail("cannot link " + std::string(link.str()) + " to " + std::string(target.str()) + ": " +
                  ec.message());
  }
  llvm::SmallString<256> yml(dir);
  llvm::sys::path::append(yml, "project.yml");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(yml, ec);
    if (ec) return fail("cannot write " + std::string(yml.str()) + ": " + ec.message());
    os << "name: lit_test\nmodulepath: libs\ndownloadpath: libs\n";
  }
  llvm::SmallString<256> main(dir);
  llvm::sys::path::append(main, "main.cf");
  if (std::error_code ec = llvm::sys::fs::copy_file(mainFile, main))
    return fail("cannot copy " + mainFile + " to " + std::string(main.str()) + ": " + ec.message());
  return 0;
}

void help(llvm::raw_ostream& os) {
  os << "usage: inmanta lit-config [-o FILE]          print (or write) a lit config for model tests\n"
        "       inmanta lit-config --lit              print the command that runs lit\n"
        "       inmanta lit-config [--module NAME=PATH]... --scaffold DIR FILE\n"
        "                                             make DIR a project with main.cf = FILE (%project)\n"
        "See docs/testing.md, \"For users\".\n";
}

} // namespace

int litConfigMain(const std::vector<std::string>& args, int /*verbose*/) {
  std::string outFile;
  std::vector<std::pair<std::string, std::string>> modules;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      help(llvm::outs());
      return 0;
    }
    if (a == "--lit") {
      std::string lit = litCommand();
      if (lit.empty())
        return fail("lit not found (Debian: apt-get install llvm-14-tools; or pip install lit)");
      llvm::outs() << lit << "\n";
      return 0;
    }
    if (a == "-o" && i + 1 < args.size()) {
      outFile = args[++i];
      continue;
    }
    if (a == "--module" && i + 1 < args.size()) {
      std::string spec = args[++i];
      size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
        return fail("--module takes NAME=PATH, got '" + spec + "'");
      modules.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
      continue;
    }
    if (a == "--scaffold") {
      if (i + 2 >= args.size()) return fail("--scaffold takes DIR FILE");
      if (i + 3 != args.size()) return fail("--scaffold DIR FILE must come last");
      return scaffold(args[i + 1], args[i + 2], modules);
    }
    help(llvm::errs());
    return fail("unknown argument '" + a + "'");
  }
  std::string config = renderConfig();
  if (outFile.empty()) {
    llvm::outs() << config;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(outFile, ec);
  if (ec) return fail("cannot write " + outFile + ": " + ec.message());
  os << config;
  return 0;
}

} // namespace inm::tools

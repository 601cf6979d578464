// Lit tests of users' own models (modeltest/, include/modeltest/LitConfig.h): the lit configuration that
// `inmanta lit-config` prints, the command that runs lit, and the throwaway project a test compiles in.
// Invariant: the printed config depends only on where this binary and its tools are installed, never on the
// current directory; the repository is found when lit loads it.
#include "modeltest/LitConfig.h"

#include "frontend/Project.h"
#include "support/PyRepr.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

namespace inm::modeltest {

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

/// An error whose text is `msg` (printed by the verb after its `error: ` prefix).
llvm::Error fail(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

/// lit itself: Debian's llvm-14 copy, else a `lit` on PATH (pip install lit).
std::string litCommand() {
  const char* debian = "/usr/lib/llvm-14/build/utils/lit/lit.py";
  if (llvm::sys::fs::exists(debian)) return std::string("python3 ") + debian;
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("lit")) return *p;
  return "";
}

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

/// `--scaffold DIR FILE`: DIR becomes a fresh project (project.yml, main.cf = FILE, libs/NAME -> PATH).
llvm::Error scaffoldProject(const std::string& dir, const std::string& mainFile,
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
  return llvm::Error::success();
}

} // namespace inm::modeltest

# lit configuration for the golden suites under test/lang (one small .cf per behaviour, RUN + CHECK lines).
# Substitutions: %inmanta -> <build>/bin/inmanta, FileCheck and `not` from llvm-14, %std -> modules/std.
# The build directory is `--param inmanta_build=DIR` (default <repo>/build). Directories named Inputs/ hold
# projects used by tests (RUN: cd %S/Inputs/<proj> && ...) and are never tests themselves; test/projects
# and test/unit are excluded too.
import os

import lit.formats

config.name = "inmanta"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cf"]
config.excludes = ["Inputs", "projects", "unit", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

repo = os.path.dirname(config.test_source_root)
build = lit_config.params.get("inmanta_build", os.path.join(repo, "build"))
build = os.path.abspath(build)
config.test_exec_root = os.path.join(build, "test-lit")

inmanta = os.path.join(build, "bin", "inmanta")
if not os.path.exists(inmanta):
    lit_config.warning("no inmanta binary at %s (pass --param inmanta_build=DIR)" % inmanta)

llvm_bin = "/usr/lib/llvm-14/bin"
config.substitutions.append(("%inmanta", inmanta))
config.substitutions.append(("%std", os.path.join(repo, "modules", "std")))
config.substitutions.append(("%repo", repo))
# The shared kit beside the checkout (conformance cases, bench generator): tests that read it say
# `REQUIRES: shared-kit` and are reported UNSUPPORTED in a checkout without it (e.g. a `mktemp -d` clone).
if os.path.isfile(os.path.join(repo, "..", "shared", "bench", "genmodel.py")) and os.path.isdir(
        os.path.join(repo, "..", "shared", "conformance")):
    config.available_features.add("shared-kit")
# A sanitizer build (ASan+UBSan, INM_SANITIZE=ON): feature `asan`; each compiler process starts about ten
# times slower there, so the parser differential tests (parser/Inputs/fastdiff.py) check a sample of files.
cache = os.path.join(build, "CMakeCache.txt")
if os.path.isfile(cache) and "INM_SANITIZE:BOOL=ON" in open(cache, encoding="utf-8", errors="replace").read():
    config.available_features.add("asan")
    config.environment["INM_FASTDIFF_SAMPLE"] = "8"
# Whole-word replacements so that e.g. `FileCheck` inside a path is left alone.
config.substitutions.append((r"\bFileCheck\b", os.path.join(llvm_bin, "FileCheck")))
config.substitutions.append((r"(^|\|\s*|&&\s*|;\s*)not\b", r"\1" + os.path.join(llvm_bin, "not")))

# Deterministic output: no colours, C locale, and keep PATH/HOME so tools work.
config.environment["LC_ALL"] = "C.UTF-8"
for var in ("PATH", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

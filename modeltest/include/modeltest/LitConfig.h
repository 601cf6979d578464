// Lit + FileCheck tests of users' own models (docs/testing.md "For users"), the library behind
// `inmanta lit-config` (tools/LitConfigMain.cpp): the lit configuration whose substitutions point at this
// binary and the tools found relative to it, the command that runs lit, and the scaffold project a test
// compiles in. Depends on frontend/ (the std module's folder) and support/ only. Invariant: the rendered
// config depends only on where the binary and its tools are installed.
#pragma once

#include <llvm/Support/Error.h>

#include <string>
#include <utility>
#include <vector>

namespace inm::modeltest {

/// The lit configuration (Python) with %inmanta, FileCheck, `not`, %std, %root and %project DIR FILE.
std::string renderConfig();
/// lit itself: Debian's llvm-14 copy, else a `lit` on PATH; "" when there is none.
std::string litCommand();
/// `--scaffold DIR FILE`: DIR becomes a fresh project (project.yml, main.cf = FILE, libs/NAME -> PATH for
/// each of `modules`); an error naming the file that could not be removed, created, linked, written or
/// copied.
llvm::Error scaffoldProject(const std::string& dir, const std::string& mainFile,
                            const std::vector<std::pair<std::string, std::string>>& modules);

} // namespace inm::modeltest

// `inmanta lit-config`: what a module or project repository needs to write lit + FileCheck tests of its own
// models (`# RUN: %inmanta compile ... | FileCheck %s`), the verb's entry. It prints (or writes with -o) the
// lit configuration of modeltest/ (modeltest::renderConfig: %inmanta, FileCheck, `not`, %std, %root and
// %project DIR FILE); `--scaffold DIR FILE [--module NAME=PATH]...` makes DIR that throwaway project;
// `--lit` prints the command that runs lit. Invariant: every failure is one `inmanta lit-config: error: …`
// line and exit 1.
#include "Verbs.h"
#include "modeltest/LitConfig.h"

#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace inm::tools {

namespace {

int fail(const std::string& msg) {
  llvm::errs() << "inmanta lit-config: error: " << msg << "\n";
  return 1;
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
      std::string lit = modeltest::litCommand();
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
      if (llvm::Error e = modeltest::scaffoldProject(args[i + 1], args[i + 2], modules))
        return fail(llvm::toString(std::move(e)));
      return 0;
    }
    help(llvm::errs());
    return fail("unknown argument '" + a + "'");
  }
  std::string config = modeltest::renderConfig();
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

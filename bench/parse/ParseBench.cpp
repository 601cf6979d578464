// inmanta-parse-bench: times frontend::parseFile on the given .cf files (the parser's throughput benchmark,
// see bench/parse/run.sh) and can dump their ASTs or diagnostics (`--dump`, `--diags`) without the rest of
// the compiler. Output: one line `parsed N files, B bytes in T s: X MB/s` (plus the dumps if asked).
// Invariant: links only inm_frontend and inm_support; parses each file exactly once per repetition.
#include "frontend/Frontend.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  bool dump = false, showDiags = false;
  int reps = 1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dump"))
      dump = true;
    else if (!std::strcmp(argv[i], "--diags"))
      showDiags = true;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else
      paths.push_back(argv[i]);
  }
  if (paths.empty()) {
    llvm::errs() << "usage: inmanta-parse-bench [--dump] [--diags] [--reps N] file.cf...\n";
    return 2;
  }
  inm::SourceManager sm;
  inm::StringTable strings;
  inm::DiagnosticEngine diags(sm);
  std::vector<inm::FileId> files;
  size_t bytes = 0;
  for (const std::string& p : paths) {
    auto f = sm.loadFile(p);
    if (!f) {
      llvm::errs() << "error: " << llvm::toString(f.takeError()) << "\n";
      return 2;
    }
    files.push_back(*f);
    bytes += sm.text(*f).size();
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    for (inm::FileId f : files) {
      inm::frontend::Ast ast = inm::frontend::parseFile(f, sm, strings, diags);
      if (dump && r == 0) inm::frontend::dumpAst(ast, strings, sm, llvm::outs());
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (showDiags) diags.render(llvm::errs(), inm::DiagFormat::Text);
  double mb = double(bytes) * reps / 1e6;
  llvm::errs() << "parsed " << files.size() * size_t(reps) << " files, " << bytes * size_t(reps)
               << " bytes in " << llvm::format("%.3f", secs) << " s: " << llvm::format("%.2f", mb / secs)
               << " MB/s, " << diags.errorCount() << " errors\n";
  return diags.hasErrors() ? 1 : 0;
}

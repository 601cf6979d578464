// The end of a compile/export run: diagnostics, the compile data file, timing helpers and the exit without
// teardown (see Report.h).
#include "Report.h"

#include <llvm/Support/raw_ostream.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <unistd.h>

namespace inm::driver {

long rssMiB() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

std::string secondsSince(std::chrono::steady_clock::time_point t0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return buf;
}

namespace {

/// Writes the errors as {"errors": [diagnostic JSON…]} for --export-compile-data (the server's compile
/// report).
void writeCompileData(const DiagnosticEngine& diags, const CompileOptions& opts) {
  if (!opts.compileData) return;
  std::string path = opts.compileDataFile.empty() ? "compile_data.json" : opts.compileDataFile;
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec) {
    llvm::errs() << "error: cannot write the compile data to " << path << ": " << ec.message() << "\n";
    return;
  }
  out << "{\"errors\": [";
  bool first = true;
  for (const Diagnostic& d : diags.all()) {
    if (d.severity != Severity::Error) continue;
    out << (first ? "" : ", ") << diags.toJson(d);
    first = false;
  }
  out << "]}\n";
}

} // namespace

int finish(const DiagnosticEngine& diags, const CompileOptions& opts, const char* banner) {
  writeCompileData(diags, opts);
  diags.render(llvm::errs(), opts.json ? DiagFormat::Json : DiagFormat::Text);
  if (!diags.hasErrors()) return 0;
  if (!opts.json) {
    llvm::errs() << "= " << banner << " =\n";
    for (const Diagnostic& d : diags.all())
      if (d.severity == Severity::Error) {
        llvm::errs() << "Error: " << diags.referenceTrace(d);
        break;
      }
  }
  llvm::errs().flush();
  return 1;
}

void exitNow(int rc) {
  llvm::outs().flush();
  std::fflush(stdout);
  if (llvm::outs().has_error() || std::ferror(stdout)) {
    std::error_code ec =
        llvm::outs().has_error() ? llvm::outs().error() : std::error_code(errno, std::generic_category());
    llvm::errs() << "inmanta: error: cannot write to standard output: " << ec.message() << "\n";
    llvm::outs().clear_error();
    rc = 1;
  }
  llvm::errs().flush();
  std::fflush(nullptr);
  if (llvm::errs().has_error() || std::ferror(stderr)) {
    llvm::errs().clear_error();
    rc = 1;
  }
  _exit(rc);
}

} // namespace inm::driver

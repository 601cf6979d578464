// The compiler pipeline of `inmanta compile` / `inmanta export` (see driver/Compile.h): the module
// requirement check, loadProject, the Python plugins, lower and the passes, the evaluation, and the export to
// an artifact file or a server; the malloc tuning of each phase and the per-phase statistics (PhaseStats.h).
// Invariant: the first stage that reports an error ends the run through finish() and exitNow().
#include "passes/Pipeline.h"

#include "ArtifactFile.h"
#include "ExportPush.h"
#include "PhaseStats.h"
#include "Report.h"
#include "driver/Compile.h"
#include "exporter/Exporter.h"
#include "frontend/Frontend.h"
#include "frontend/Project.h"
#include "ir/Lower.h"
#include "projectmgr/Install.h"
#include "pybridge/PyBridge.h"
#include "runtime/Model.h"
#include "support/Limits.h"

#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <malloc.h>
#include <memory>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

namespace inm::driver {

namespace {

/// Out of memory (the heap limit of Limits::maxMemoryMiB, or the machine's): one clear line and exit 1
/// instead of an abort with a core dump. Only async-signal-safe calls: the heap is exhausted.
[[noreturn]] void outOfMemory() {
  static const char msg[] = "inmanta: error: out of memory (the limit is --max-memory-mib / "
                            "INM_MAX_MEMORY_MIB, see docs/limits.md)\n";
  ssize_t n = write(2, msg, sizeof msg - 1);
  (void)n;
  _exit(1);
}

/// True if `path` is one of the files the compile read (main.cf, a module's .cf): `-j main.cf` must never
/// replace the model it compiles.
bool isSourceFile(const SourceManager& sm, const std::string& path) {
  if (llvm::sys::path::extension(path) == ".cf") return true;
  for (uint32_t i = 0; i < sm.fileCount(); ++i) {
    bool same = false;
    if (!llvm::sys::fs::equivalent(sm.path(FileId{i}), path, same) && same) return true;
  }
  return false;
}

int runPipeline(const CompileOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  // One malloc arena for the whole process: the exporter's helper threads then allocate from the memory the
  // evaluator freed instead of faulting in fresh pages of their own arena (100k bench project: +20 MiB peak).
  mallopt(M_ARENA_MAX, 1);
  // A fixed mmap threshold during the evaluation (glibc's initial value, without its growth after each freed
  // mapping): the evaluator's large tables (chunks of 256 KiB to 1.3 MiB) stay mappings of their own,
  // returned to the system when freed at its end, instead of heap holes that the export's allocations do not
  // reuse (100k bench project: peak -9 MiB, CPU unchanged). The export sets its own threshold below.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  SourceManager sm;
  StringTable strings;
  DiagnosticEngine diags(sm);
  if (opts.warningsOff) diags.setWarningsEnabled(false);
  const bool isExport = opts.command == "export";
  const char* banner = isExport ? "EXPORT FAILURE" : "COMPILATION FAILURE";
  PhaseStats phases(opts.evalStats);
  auto phaseEnd = [&phases](llvm::StringRef name) { phases.end(name); };

  if (opts.dumpAst) {
    auto file = sm.loadFile(opts.mainFile);
    if (!file) {
      llvm::errs() << "error: " << llvm::toString(file.takeError()) << "\n";
      return 1;
    }
    frontend::Ast ast = frontend::parseFile(*file, sm, strings, diags, opts.parse);
    if (!diags.hasErrors()) frontend::dumpAst(ast, strings, sm, llvm::outs(), opts.dump);
    return finish(diags, opts, banner);
  }

  // Installed modules against the constraints of project.yml and module.yml files (docs/modules.md): a
  // mismatch stops the compile with the command that fixes it, before the loader picks up a wrong version.
  if (llvm::sys::fs::is_regular_file(opts.projectDir + "/project.yml")) {
    projectmgr::ProjectConfig pc = projectmgr::readProjectConfig(opts.projectDir);
    pc.builtinStd = pc.builtinStd || opts.builtinStd;
    if (pc.errors.empty()) {
      for (const std::string& problem :
           projectmgr::inspectProject(pc, frontend::defaultStdDir(), false).problems)
        diags.error(DiagKind::ModuleRequirementUnmet, SourceRange{}, problem);
      if (diags.hasErrors()) exitNow(finish(diags, opts, banner));
    }
  }

  frontend::LoadOptions lo;
  lo.projectDir = opts.projectDir;
  lo.mainFile = opts.mainFile;
  lo.parse = opts.parse;
  lo.builtinStd = opts.builtinStd;
  frontend::Project project = frontend::loadProject(lo, sm, strings, diags);
  phases.end("parse");
  if (opts.verbose >= 3) llvm::errs() << "Parsing took " << secondsSince(t0) << " seconds\n";
  if (opts.verbose >= 4) llvm::errs() << "  resident after parsing: " << rssMiB() << " MiB\n";
  if (diags.hasErrors() || opts.syntaxOnly) exitNow(finish(diags, opts, banner));

  // Python plugin packages of the modules (none: no interpreter is started).
  pybridge::PythonSetup python;
  std::vector<pybridge::PythonModule> pyModules = pybridge::findPythonModules(project);
  if (!pyModules.empty()) {
    auto tp = std::chrono::steady_clock::now();
    pybridge::loadPython(project, pyModules, sm, diags, python);
    if (opts.verbose >= 3) llvm::errs() << "Loading Python plugins took " << secondsSince(tp) << " seconds\n";
    if (diags.hasErrors()) exitNow(finish(diags, opts, banner));
  }

  // Push mode with Python plugins: the server is reachable from plugins (Context.get_client()) during the
  // compile.
  std::unique_ptr<PushSession> session;
  if (python.active && isExport && opts.exportFile.empty()) session = openPluginServer(opts, project.dir);

  auto t1 = std::chrono::steady_clock::now();
  ir::Program program = ir::lower(project, strings, diags, python.pluginSpecs, !python.ownStd);
  phases.end("lower");
  if (!diags.hasErrors()) passes::run(program, diags);
  phases.end("passes");
  if (diags.hasErrors()) exitNow(finish(diags, opts, banner));
  if (opts.verbose >= 3) llvm::errs() << "Declarations took " << secondsSince(t1) << " seconds\n";
  if (opts.verbose >= 4) llvm::errs() << "  resident after declarations: " << rssMiB() << " MiB\n";
  if (opts.dumpIr) {
    ir::dumpIr(program, sm, llvm::outs());
    exitNow(finish(diags, opts, banner));
  }

  runtime::EvalOptions eo;
  eo.projectDir = project.dir;
  eo.skipTeardown = true;                             // the process ends through exitNow()
  runtime::StreamOutputSink stdoutSink(llvm::outs()); // std::print
  eo.output = &stdoutSink;
  eo.stats = opts.evalStats;
  if (python.active) eo.extraPlugins = &python.plugins;
  eo.nativeStdPlugins = !python.ownStd; // the project's own std brings its own (Python) plugins
  if (phases.on()) eo.phaseEnd = phaseEnd;
  runtime::Model model = runtime::evaluate(program, diags, eo);
  phases.end("eval release");
  llvm::outs().flush();
  if (opts.verbose >= 3) llvm::errs() << "Compilation took " << secondsSince(t1) << " seconds\n";
  if (opts.verbose >= 4) llvm::errs() << "  resident after evaluation: " << rssMiB() << " MiB\n";
  if (diags.hasErrors()) exitNow(finish(diags, opts, banner));
  if (opts.dumpModel) model.dump(llvm::outs(), sm);
  // The exporter's large arrays (100k resources: 5.6 MB) come from the heap memory the evaluator freed rather
  // than from fresh mappings: a page's first touch costs ~2 ms/MiB on this VM (100k: collect -15 ms of CPU).
  if (isExport) mallopt(M_MMAP_THRESHOLD, 32 << 20);

  if (isExport && opts.exportFile.empty())
    exitNow(pushExport(opts, project.dir, model, diags, t0, python, std::move(session)));
  if (isExport) {
    if (isSourceFile(sm, opts.exportFile)) {
      diags.error(DiagKind::ExportIntoSource, SourceRange{}, opts.exportFile);
      exitNow(finish(diags, opts, banner));
    }
    ArtifactFile file(opts.exportFile);
    if (std::string err = file.open(); !err.empty()) {
      diags.error(DiagKind::Export, SourceRange{}, err);
      exitNow(finish(diags, opts, banner));
    }
    exporter::ExportOptions xo;
    xo.projectDir = project.dir;
    if (python.active) {
      xo.registry = &python.resources;
      xo.code = python.code;
    }
    if (phases.on()) xo.phaseEnd = phaseEnd;
    xo.skipTeardown = true; // the process ends through exitNow()
    auto t2 = std::chrono::steady_clock::now();
    exporter::ExportSummary s = exporter::exportModel(model, diags, xo, file.stream());
    if (opts.verbose >= 3) {
      llvm::errs() << "Generating resources from the compiled model took " << secondsSince(t2)
                   << " seconds\n";
      llvm::errs() << "The entire export command took " << secondsSince(t0) << " seconds\n";
    }
    if (diags.hasErrors()) {
      file.discard(); // the existing artifact, if any, stays as it was
      exitNow(finish(diags, opts, banner));
    }
    if (std::string err = file.commit(); !err.empty()) {
      diags.error(DiagKind::Export, SourceRange{}, err);
      exitNow(finish(diags, opts, banner));
    }
    phases.end("export close");
    llvm::errs() << "exported " << s.resources << " resources (" << s.undefined << " undefined, " << s.files
                 << " files, " << s.agents << " agents) to " << opts.exportFile << " in " << secondsSince(t0)
                 << " s\n";
  }
  exitNow(finish(diags, opts, banner));
}

/// Applies the heap limit (RLIMIT_DATA; not under AddressSanitizer, whose shadow memory counts against it)
/// and the out-of-memory handlers, and makes a closed pipe an EPIPE write error instead of a silent SIGPIPE
/// death.
void installSafetyNets() {
  std::signal(SIGPIPE, SIG_IGN);
  std::set_new_handler(outOfMemory);
  llvm::install_bad_alloc_error_handler([](void*, const char*, bool) { outOfMemory(); });
  bool sanitized = false;
#if defined(__SANITIZE_ADDRESS__)
  sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  sanitized = true;
#endif
#endif
  uint64_t mib = limits().maxMemoryMiB;
  struct rlimit rl;
  if (!sanitized && mib && getrlimit(RLIMIT_DATA, &rl) == 0) {
    rlim_t want = rlim_t(mib) << 20;
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want) {
      if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > want) rl.rlim_cur = want;
      setrlimit(RLIMIT_DATA, &rl);
    }
  }
}

} // namespace

int runCompileCommand(const CompileOptions& opts) {
  installSafetyNets();
  return runPipeline(opts);
}

} // namespace inm::driver

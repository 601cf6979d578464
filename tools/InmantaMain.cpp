// The `inmanta` command line: `compile` and `export` run the pipeline
// (loadProject -> lower -> passes::run -> evaluate -> exportModel), stopping after the first stage that
// reports errors. Invoked as `inmanta-compile` / `inmanta-export` it behaves as `inmanta compile|export`.
// Output contract: std::print output on stdout; diagnostics on stderr in compiler style, followed by the
// reference-style summary (`= COMPILATION FAILURE =`, `Error: … caused by: …`); exit 0 on success, 1 on
// any model error, 2 on bad usage.
#include "ExportPush.h"
#include "PhaseStats.h"
#include "StartUp.h"
#include "Verbs.h"
#include "cli/CliHelp.h"
#include "exporter/Exporter.h"
#include "frontend/Frontend.h"
#include "frontend/Project.h"
#include "ir/Lower.h"
#include "passes/Pipeline.h"
#include "projectmgr/Install.h"
#include "pybridge/PyBridge.h"
#include "runtime/Model.h"
#include "support/Limits.h"
#include "support/Suggest.h"

#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <new>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace inm;

namespace {

constexpr const char* kVersion = "0.1.0";

struct Options {
  std::string command;
  std::string mainFile = "main.cf";
  std::string projectDir = ".";
  std::string exportFile;      // export -j FILE (--export-json FILE)
  bool compileData = false;    // --export-compile-data: write the diagnostics as JSON
  std::string compileDataFile; // --export-compile-data-file FILE (default compile_data.json)
  bool syntaxOnly = false;
  bool builtinStd = false; // --builtin-std (docs/modules.md "The std module")
  bool dumpAst = false;
  bool dumpIr = false;
  bool dumpModel = false;
  bool json = false;
  bool warningsOff = false;
  bool deploy = false;
  int verbose = 0;
  tools::PushFlags push; // export to a server (no -j)
  // Testing switches of the stages, read from the environment only here (docs/testing.md):
  frontend::ParseOptions parse; // INM_PARSER=antlr|fast-strict|fast-check
  frontend::DumpOptions dump;   // INM_DUMP_RANGES=1: --dump-ast appends every store, field and range
  bool evalStats = false;       // INM_EVAL_STATS=1: evaluation statistics on stderr
};

/// The stages' testing switches from the environment (compatibility: they were read inside the libraries).
std::string readEnvSwitches(Options& opts) {
  if (const char* v = std::getenv("INM_PARSER")) {
    std::optional<frontend::ParserMode> mode = frontend::parserModeFromName(v);
    if (!mode)
      return std::string("INM_PARSER: unknown parser '") + v + "' (antlr, fast-strict or fast-check)";
    opts.parse.mode = *mode;
  }
  if (const char* v = std::getenv("INM_DUMP_RANGES"); v && *v && *v != '0') opts.dump.ranges = true;
  if (const char* v = std::getenv("INM_EVAL_STATS"); v && *v) opts.evalStats = true;
  return "";
}

void printHelp(llvm::raw_ostream& os) {
  os << "usage: inmanta [-v|-vv|-vvv] <command> [options]\n\ncommands:\n";
  for (const tools::Verb* v = tools::kVerbs; v->name; ++v) {
    std::string name = v->name;
    os << "  " << name << std::string(name.size() < 19 ? 19 - name.size() : 1, ' ') << v->help << "\n";
  }
  os << "\nRun `inmanta <command> --help` for the options of a command (--list-verbs lists the commands).\n"
        "The compiler's own options (compile and export) are:\n";
  for (const tools::Verb* v = tools::kVerbs; v->name; ++v)
    if (llvm::StringRef(v->name) == "export") os << llvm::StringRef(v->usage).split("options:\n").second;
  os << "  --version, --help\n";
}

/// The usage of command `name` (`inmanta NAME --help`); false when it has none of its own.
bool printCommandHelp(llvm::raw_ostream& os, llvm::StringRef name) {
  for (const tools::Verb* v = tools::kVerbs; v->name; ++v)
    if (name == v->name && v->usage) {
      os << v->usage;
      return true;
    }
  return false;
}

/// "unknown command 'x'", with the nearest command when one is close.
std::string unknownCommand(const std::string& name) {
  Suggester near(name);
  for (const tools::Verb* v = tools::kVerbs; v->name; ++v) near.add(v->name);
  return "unknown command '" + name + "'" + didYouMeanSuffix(near.best());
}

int usage(const std::string& msg) {
  llvm::errs() << "inmanta: " << msg << "\n(run 'inmanta --help' for usage)\n";
  return 2;
}

/// Resident memory now, in MiB (for the -vvvv phase log).
long rssMiB() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

/// Seconds since t0 in fixed notation ("0.123456"): logs are parsed by tools expecting plain decimals.
std::string secondsSince(std::chrono::steady_clock::time_point t0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return buf;
}

/// Writes the errors as {"errors": [diagnostic JSON…]} for --export-compile-data (the server's compile
/// report).
void writeCompileData(const DiagnosticEngine& diags, const Options& opts) {
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

/// Prints the diagnostics and, on errors, the reference-style failure summary. Returns the exit code.
int finish(const DiagnosticEngine& diags, const Options& opts, const char* banner) {
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

/// Ends the process without running destructors: the compiler's stores hold millions of small objects whose
/// teardown costs a tenth of a second at 100k resources and achieves nothing. Everything written is flushed
/// first. A failed write to stdout (closed, a broken pipe, a full disk) turns the exit code into 1 with a
/// message on stderr; a failed write to stderr can only be signalled by the exit code.
[[noreturn]] void exitNow(int rc) {
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

/// A failed call to `server` as `kind`; a 401 answer gets a note on how to pass a token.
void reportCallFailure(DiagnosticEngine& diags, DiagKind kind, const std::string& server, llvm::Error err) {
  client::Failure f = client::takeFailure(std::move(err));
  Diagnostic& d = diags.error(kind, SourceRange{}, server, f.text);
  if (std::string hint = cli::tokenHint(f.status, "compiler_rest_transport"); !hint.empty())
    d.note(makeDiag(DiagKind::NoteText, SourceRange{}, hint));
}

/// `inmanta export` without -j: reserve a version, export into memory, push it (files, code, version,
/// release).
int pushExport(const Options& opts, const std::string& projectDir, const runtime::Model& model,
               DiagnosticEngine& diags, std::chrono::steady_clock::time_point t0,
               const pybridge::PythonSetup& python, std::unique_ptr<tools::PushSession> opened) {
  const char* banner = "EXPORT FAILURE";
  auto session = opened ? llvm::Expected<std::unique_ptr<tools::PushSession>>(std::move(opened))
                        : tools::openPushSession(opts.push, projectDir, kVersion);
  if (!session) {
    diags.error(DiagKind::Export, SourceRange{}, llvm::toString(session.takeError()));
    return finish(diags, opts, banner);
  }
  if (!*session) {
    diags.error(DiagKind::ExportNoServer, SourceRange{});
    return finish(diags, opts, banner);
  }
  client::Client& client = *(*session)->client;
  const std::string server = client.endpoint().address();
  auto t1 = std::chrono::steady_clock::now();
  int64_t version = 0;
  if (!opts.push.partial) {
    auto v = client::reserveVersion(client);
    if (!v) {
      reportCallFailure(diags, DiagKind::ExportReserveVersion, server, v.takeError());
      return finish(diags, opts, banner);
    }
    version = *v;
  }
  exporter::ExportOptions xo;
  xo.projectDir = projectDir;
  xo.version = version;
  xo.environment = client.endpoint().environment;
  if (python.active) {
    xo.registry = &python.resources;
    xo.code = python.code;
  }
  std::string artifact;
  llvm::raw_string_ostream out(artifact);
  exporter::ExportSummary s = exporter::exportModel(model, diags, xo, out);
  out.flush();
  if (diags.hasErrors()) return finish(diags, opts, banner);
  if (opts.verbose >= 3)
    llvm::errs() << "Generating resources from the compiled model took " << secondsSince(t1) << " seconds\n";
  auto t2 = std::chrono::steady_clock::now();
  auto pushed = client::pushArtifact(client, artifact, version, (*session)->options,
                                     opts.verbose >= 2 ? &llvm::errs() : nullptr);
  if (!pushed) {
    reportCallFailure(diags, DiagKind::ExportPushFailed, server, pushed.takeError());
    return finish(diags, opts, banner);
  }
  if (opts.verbose >= 3) {
    llvm::errs() << "Pushing the version took " << secondsSince(t2) << " seconds\n";
    llvm::errs() << "From the end of compilation to the server's last answer took " << secondsSince(t1)
                 << " seconds\n";
    llvm::errs() << "The entire export command took " << secondsSince(t0) << " seconds\n";
  }
  if (!pushed->deltaFallback.empty()) llvm::errs() << "inmanta export: " << pushed->deltaFallback << "\n";
  if (pushed->delta)
    llvm::errs() << "pushed version " << pushed->version << " as a delta against version "
                 << pushed->deltaBase << " (" << pushed->changed << " new or changed, " << pushed->removed
                 << " removed)\n";
  llvm::outs() << "Committed resources with version " << pushed->version << "\n";
  if (opts.push.release && pushed->releasedByServer)
    llvm::outs() << "Version " << pushed->version << " was already released by the server (auto_deploy)\n";
  else if (opts.push.release)
    llvm::outs() << "Released version " << pushed->version << "\n";
  llvm::errs() << "exported " << s.resources << " resources (" << s.undefined << " undefined, " << s.files
               << " files, " << s.agents << " agents) to " << server << " in " << secondsSince(t0) << " s\n";
  return finish(diags, opts, banner);
}

/// Out of memory (the heap limit of Limits::maxMemoryMiB, or the machine's): one clear line and exit 1
/// instead of an abort with a core dump. Only async-signal-safe calls: the heap is exhausted.
[[noreturn]] void outOfMemory() {
  static const char msg[] = "inmanta: error: out of memory (the limit is --max-memory-mib / "
                            "INM_MAX_MEMORY_MIB, see docs/limits.md)\n";
  ssize_t n = write(2, msg, sizeof msg - 1);
  (void)n;
  _exit(1);
}

/// Writes the artifact atomically: into a temporary file in the target's folder, renamed over the target only
/// when everything was written. A failed export leaves an existing file as it was. A target that exists and
/// is not a regular file (a device such as /dev/full or /dev/stdout, a pipe) is written directly.
class ArtifactFile {
 public:
  explicit ArtifactFile(std::string target) : target_(std::move(target)) {}
  /// Opens the stream; an error text on failure.
  std::string open() {
    namespace fs = llvm::sys::fs;
    fs::file_status st;
    bool exists = !fs::status(target_, st);
    if (exists && st.type() == fs::file_type::directory_file) return target_ + " is a directory";
    direct_ = exists && st.type() != fs::file_type::regular_file;
    std::error_code ec;
    if (direct_) {
      out_ = std::make_unique<llvm::raw_fd_ostream>(target_, ec);
      return ec ? "cannot write " + target_ + ": " + ec.message() : "";
    }
    llvm::SmallString<256> model(llvm::sys::path::parent_path(target_));
    llvm::sys::path::append(model, "." + llvm::sys::path::filename(target_).str() + ".tmp-%%%%%%");
    int fd = -1;
    llvm::SmallString<256> tmp;
    if ((ec = fs::createUniqueFile(model, fd, tmp, fs::OF_None, 0644)))
      return "cannot write " + target_ + ": creating a temporary file in its folder: " + ec.message();
    tmp_ = std::string(tmp.str());
    out_ = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
    return "";
  }
  llvm::raw_fd_ostream& stream() { return *out_; }
  /// Flushes, closes and renames; an error text on failure (the temporary file is then removed).
  std::string commit() {
    out_->close();
    if (out_->has_error()) {
      std::string msg = "cannot write " + target_ + ": " + out_->error().message();
      out_->clear_error();
      discard();
      return msg;
    }
    if (direct_) return "";
    if (exchangeWithTarget()) return "";
    if (std::error_code ec = llvm::sys::fs::rename(tmp_, target_)) {
      discard();
      return "cannot write " + target_ + ": " + ec.message();
    }
    tmp_.clear();
    return "";
  }
  /// Replacing an existing file with rename() makes ext4 (auto_da_alloc) allocate and start writing back
  /// every block of the new file inside the rename: ~20 ms of waiting for a 38 MB artifact. Swapping the two
  /// names atomically (RENAME_EXCHANGE) and removing the old file under the temporary name leaves the same
  /// result without that flush. False when the swap is not possible (no target yet, a file system without
  /// it): the caller then renames.
  bool exchangeWithTarget() {
    if (renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) return false;
    ::unlink(tmp_.c_str()); // now the old artifact; a leftover would only be a hidden stale file
    tmp_.clear();
    return true;
  }
  /// Drops the temporary file (the target is untouched).
  void discard() {
    if (out_) {
      out_->close();
      out_->clear_error();
    }
    if (!tmp_.empty()) llvm::sys::fs::remove(tmp_);
    tmp_.clear();
  }

 private:
  std::string target_, tmp_;
  bool direct_ = false;
  std::unique_ptr<llvm::raw_fd_ostream> out_;
};

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

/// Opens the push session before the compile and hands its client to the Python bridge; nullptr (the export
/// reports why later) when no server is configured or the configuration is wrong.
std::unique_ptr<tools::PushSession> openPluginServer(const Options& opts, const std::string& projectDir) {
  auto session = tools::openPushSession(opts.push, projectDir, kVersion);
  if (!session) {
    llvm::consumeError(session.takeError());
    return nullptr;
  }
  if (!*session) return nullptr;
  client::Client* c = (*session)->client.get();
  pybridge::setServer(
      [c](const pybridge::ServerRequest& r) {
        client::Request req;
        req.method = r.method;
        req.path = r.path;
        req.query = r.query;
        req.body = r.body;
        std::string saved = c->endpoint().environment;
        if (!r.environment.empty()) c->endpoint().environment = r.environment;
        auto answer = c->send(req);
        c->endpoint().environment = saved;
        if (answer) return pybridge::ServerAnswer{answer->status, answer->body};
        client::Failure f = client::takeFailure(answer.takeError());
        if (f.status == 0) return pybridge::ServerAnswer{0, f.text};
        return pybridge::ServerAnswer{f.status, nlohmann::json{{"message", f.message}}.dump()};
      },
      c->endpoint().environment);
  return std::move(*session);
}

int runPipeline(const Options& opts) {
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
  tools::PhaseStats phases(opts.evalStats);
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
  std::unique_ptr<tools::PushSession> session;
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

} // namespace

/// Applies the heap limit (RLIMIT_DATA; not under AddressSanitizer, whose shadow memory counts against it)
/// and the out-of-memory handlers, and makes a closed pipe an EPIPE write error instead of a silent SIGPIPE
/// death.
static void installSafetyNets() {
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

static int driverMain(int argc, char** argv);

/// Every return from main goes through here: a failed write to stdout/stderr becomes exit 1 with a message
/// (stdout) instead of LLVM's "IO failure on output stream" abort when the streams are destroyed.
int main(int argc, char** argv) {
  int rc = driverMain(argc, argv);
  llvm::outs().flush();
  std::fflush(stdout);
  if (llvm::outs().has_error()) {
    llvm::errs() << "inmanta: error: cannot write to standard output: " << llvm::outs().error().message()
                 << "\n";
    llvm::outs().clear_error();
    rc = 1;
  }
  llvm::errs().flush();
  if (llvm::errs().has_error()) {
    llvm::errs().clear_error();
    rc = 1;
  }
  return rc;
}

static int driverMain(int argc, char** argv) {
  tools::prepareProcess(argc, argv); // huge pages, stack, tcmalloc: at most one exec (tools/StartUp.h)
  initStackGuard();
  auto env = [](const char* name) -> const char* { return std::getenv(name); };
  if (std::string err = applyLimitsFromEnv(env); !err.empty()) return usage(err);
  Options opts;
  if (std::string err = readEnvSwitches(opts); !err.empty()) return usage(err);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string prog = llvm::sys::path::filename(argv[0]).str();
  if (prog == "inmanta-compile") opts.command = "compile";
  if (prog == "inmanta-export") opts.command = "export";
  if (prog == "inmanta-cli") {
    if (!tools::kCliMain) return usage("inmanta-cli is not built yet");
    return tools::kCliMain(args);
  }
  // Orchestrator verbs: the first non-option argument names one. Global -v flags and the reference's global
  // `-c FILE` / `--config FILE` may precede it; the config flags are handed on to the verb in front of its
  // own.
  if (opts.command.empty()) {
    tools::VerbCall call = tools::findVerb(args);
    for (const tools::Verb* v = tools::kVerbs; v->name && !call.name.empty(); ++v) {
      if (call.name != v->name) continue;
      for (size_t i = call.index + 1; i < args.size(); ++i)
        if ((args[i] == "--help" || args[i] == "-h") && printCommandHelp(llvm::outs(), v->name)) return 0;
      if (!v->run) break; // compile, export: the compiler below
      std::vector<std::string> verbArgs = call.globalConfig;
      verbArgs.insert(verbArgs.end(), args.begin() + long(call.index) + 1, args.end());
      return v->run(verbArgs, opts.verbose + call.verbose);
    }
  }
  opts.verbose = 0;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= args.size()) return std::string();
      (void)flag;
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      if (!printCommandHelp(llvm::outs(), opts.command)) printHelp(llvm::outs());
      return 0;
    }
    if (a == "--list-verbs") {
      for (const tools::Verb* v = tools::kVerbs; v->name; ++v) llvm::outs() << v->name << "\n";
      return 0;
    }
    if (a == "--version") {
      llvm::outs() << "inmanta " << kVersion << "\n";
      return 0;
    }
    if (a == "-v" || a == "-vv" || a == "-vvv" || a == "-vvvv") {
      opts.verbose += int(a.size()) - 1;
      continue;
    }
    if (a == "--no-cache" || a == "-X" || a == "--experimental-data-trace") continue;
    // Plain switches.
    const std::pair<const char*, bool*> switches[] = {
        {"--syntax-only", &opts.syntaxOnly},     {"--builtin-std", &opts.builtinStd},
        {"--dump-ast", &opts.dumpAst},           {"--dump-ir", &opts.dumpIr},
        {"--dump-model", &opts.dumpModel},       {"--diagnostics-format=json", &opts.json},
        {"--warnings=ignore", &opts.warningsOff}};
    auto sw =
        std::find_if(std::begin(switches), std::end(switches), [&](const auto& e) { return a == e.first; });
    if (sw != std::end(switches)) {
      *sw->second = true;
      continue;
    }
    if (a == "--diagnostics-format=text") {
      opts.json = false;
      continue;
    }
    if (a.rfind("--warnings=", 0) == 0) continue;
    if (a == "-d") {
      opts.deploy = opts.push.release = true;
      continue;
    }
    // export push flags (and the value-taking flags of the reference that we accept and ignore)
    auto need = [&](std::string& into) -> bool {
      into = value(a.c_str());
      return !into.empty();
    };
    if (a == "-c" || a == "--config") {
      std::string f;
      if (!need(f)) return usage(a + " needs a file");
      opts.push.configFiles.push_back(f);
      continue;
    }
    if (a == "-e") {
      if (!need(opts.push.environment)) return usage("-e needs an environment id");
      continue;
    }
    if (a == "--server_address" || a == "--server-address") {
      if (!need(opts.push.serverAddress)) return usage(a + " needs a host");
      continue;
    }
    if (a == "--server_port" || a == "--server-port") {
      if (!need(opts.push.serverPort)) return usage(a + " needs a port");
      continue;
    }
    if (a == "--token") {
      if (!need(opts.push.token)) return usage("--token needs a token");
      continue;
    }
    if (a == "--ssl-ca-cert") {
      if (!need(opts.push.sslCaCert)) return usage("--ssl-ca-cert needs a file");
      continue;
    }
    if (a == "--ssl") {
      opts.push.ssl = 1;
      continue;
    }
    if (a == "--no-ssl") {
      opts.push.ssl = 0;
      continue;
    }
    if (a == "-m" || a == "--metadata") {
      if (!need(opts.push.metadata)) return usage(a + " needs JSON");
      continue;
    }
    if (a == "--partial") {
      opts.push.partial = true;
      continue;
    }
    if (a == "--delete-resource-set") {
      std::string set;
      if (!need(set)) return usage("--delete-resource-set needs a set name");
      opts.push.deleteResourceSets.push_back(set);
      continue;
    }
    if (a == "--export-plugin") {
      std::string ignored;
      if (!need(ignored)) return usage(a + " needs a value");
      llvm::errs() << "inmanta: note: ignoring option " << a << "\n";
      continue;
    }
    if (a == "-f") {
      opts.mainFile = value("-f");
      if (opts.mainFile.empty()) return usage("-f needs a file");
      continue;
    }
    if (a == "-j") {
      opts.exportFile = value("-j");
      if (opts.exportFile.empty()) return usage("-j needs a file");
      continue;
    }
    if (a == "--export-json") {
      opts.exportFile = value("");
      if (opts.exportFile.empty()) return usage("--export-json needs a file");
      continue;
    }
    if (a.rfind("--export-json=", 0) == 0) {
      opts.exportFile = a.substr(14);
      continue;
    }
    if (a == "--export-compile-data") {
      opts.compileData = true;
      continue;
    }
    if (a == "--export-compile-data-file") {
      opts.compileDataFile = value("");
      if (opts.compileDataFile.empty()) return usage("--export-compile-data-file needs a file");
      continue;
    }
    if (a == "--project") {
      opts.projectDir = value("--project");
      continue;
    }
    if (a.rfind("--max-", 0) == 0) {
      size_t eq = a.find('=');
      std::string name = a.substr(6, eq == std::string::npos ? std::string::npos : eq - 6);
      std::string v = eq == std::string::npos ? value(a.c_str()) : a.substr(eq + 1);
      if (std::string err = setLimit(name, v); !err.empty()) return usage(err);
      continue;
    }
    if (!a.empty() && a[0] != '-' && opts.command.empty()) {
      opts.command = a;
      continue;
    }
    if (!a.empty() && a[0] == '-' && opts.command.empty()) return usage("unknown option " + a);
    // Unknown options of the reference's compile/export are accepted and ignored, with a note.
    if (!a.empty() && a[0] == '-') {
      llvm::errs() << "inmanta: note: ignoring option " << a << "\n";
      continue;
    }
    return usage("unexpected argument " + a);
  }
  if (opts.command.empty()) {
    printHelp(llvm::errs());
    return 2;
  }
  if (opts.command != "compile" && opts.command != "export") return usage(unknownCommand(opts.command));
  // `compile --export-json F` (the CI form of inmanta-compile) compiles and writes the artifact like export
  // -j.
  if (opts.command == "compile" && !opts.exportFile.empty()) opts.command = "export";
  installSafetyNets();
  return runPipeline(opts);
}

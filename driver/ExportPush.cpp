// `inmanta export` push mode: flags and configuration into a session, the plugins' server connection, the
// push of the exported model (see ExportPush.h).
#include "ExportPush.h"

#include "Report.h"
#include "cli/CliHelp.h"
#include "client/DeltaState.h"
#include "config/Config.h"
#include "exporter/Exporter.h"
#include "pybridge/PyBridge.h"
#include "runtime/Model.h"

#include <llvm/Support/raw_ostream.h>

#include <cctype>
#include <cstdlib>
#include <unistd.h>

namespace inm::driver {

namespace {

llvm::Error fail(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

/// The reference's default metadata of a manual export.
nlohmann::json defaultMetadata() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const char* user = std::getenv("USER");
  return {{"message", std::string("Manual compile on ") + host + " by " + (user ? user : "unknown")},
          {"type", "manual"}};
}

/// A failed call to `server` as `kind`; a 401 answer gets a note on how to pass a token.
void reportCallFailure(DiagnosticEngine& diags, DiagKind kind, const std::string& server, llvm::Error err) {
  client::Failure f = client::takeFailure(std::move(err));
  Diagnostic& d = diags.error(kind, SourceRange{}, server, f.text);
  if (std::string hint = cli::tokenHint(f.status, "compiler_rest_transport"); !hint.empty())
    d.note(makeDiag(DiagKind::NoteText, SourceRange{}, hint));
}

} // namespace

llvm::Expected<std::unique_ptr<PushSession>>
openPushSession(const PushFlags& flags, const std::string& projectDir, const std::string& compilerVersion) {
  auto cfg = config::Config::load(flags.configFiles, projectDir);
  if (!cfg) return cfg.takeError();
  const char* section = "compiler_rest_transport";
  bool configured = !flags.environment.empty() || !flags.serverAddress.empty() ||
                    cfg->get("config", "environment").has_value() || cfg->get(section, "host").has_value();
  if (!configured) return nullptr;

  if (!flags.serverAddress.empty()) cfg->set(section, "host", flags.serverAddress);
  if (!flags.serverPort.empty()) cfg->set(section, "port", flags.serverPort);
  if (!flags.token.empty()) cfg->set(section, "token", flags.token);
  if (!flags.sslCaCert.empty()) cfg->set(section, "ssl_ca_cert_file", flags.sslCaCert);
  if (flags.ssl >= 0) cfg->set(section, "ssl", flags.ssl ? "true" : "false");
  if (!flags.environment.empty()) cfg->set("config", "environment", flags.environment);
  auto ep = client::endpointFromConfig(*cfg, section);
  if (!ep) return ep.takeError();
  if (ep->environment.empty())
    return fail("no environment to export to: pass -e ENV or set [config] environment in .inmanta");

  auto session = std::make_unique<PushSession>();
  session->client = std::make_unique<client::Client>(*ep);
  client::PushOptions& o = session->options;
  o.partial = flags.partial;
  o.release = flags.release;
  o.removedResourceSets = flags.deleteResourceSets;
  if (const char* env = std::getenv("INMANTA_REMOVED_RESOURCE_SET_ID"))
    if (*env) o.removedResourceSets.push_back(env);
  if (!o.removedResourceSets.empty() && !o.partial)
    return fail("--delete-resource-set is only allowed together with --partial");
  o.compilerVersion = compilerVersion;
  // Delta versions (docs/server.md): on unless INMANTA_EXPORT_DELTA=0.
  const char* delta = std::getenv("INMANTA_EXPORT_DELTA");
  if (!delta || std::string(delta) != "0") {
    std::string env = ep->environment;
    for (char& c : env) c = char(std::tolower(static_cast<unsigned char>(c)));
    o.deltaStatePath = client::deltaStatePath(projectDir, env);
  }
  if (flags.metadata.empty()) {
    o.exportMetadata = defaultMetadata();
  } else {
    o.exportMetadata = nlohmann::json::parse(flags.metadata, nullptr, false);
    if (o.exportMetadata.is_discarded() || !o.exportMetadata.is_object())
      return fail("--metadata must be a JSON object, got: " + flags.metadata);
  }
  if (!o.exportMetadata.contains("inmanta:compile:state"))
    o.exportMetadata["inmanta:compile:state"] = "success";
  return session;
}

std::unique_ptr<PushSession> openPluginServer(const CompileOptions& opts, const std::string& projectDir) {
  auto session = openPushSession(opts.push, projectDir, kCompilerVersion);
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

int pushExport(const CompileOptions& opts, const std::string& projectDir, const runtime::Model& model,
               DiagnosticEngine& diags, std::chrono::steady_clock::time_point t0,
               const pybridge::PythonSetup& python, std::unique_ptr<PushSession> opened) {
  const char* banner = "EXPORT FAILURE";
  auto session = opened ? llvm::Expected<std::unique_ptr<PushSession>>(std::move(opened))
                        : openPushSession(opts.push, projectDir, kCompilerVersion);
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

} // namespace inm::driver

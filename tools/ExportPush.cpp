// Flag and configuration handling of `inmanta export` push mode (see ExportPush.h).
#include "ExportPush.h"

#include "client/DeltaState.h"
#include "config/Config.h"

#include <cctype>
#include <cstdlib>
#include <unistd.h>

namespace inm::tools {

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

} // namespace inm::tools

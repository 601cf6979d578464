// The configuration side of the server host (orchestrator/server/ServerOptions.h): compile service options,
// the console directory, database advice. Invariant: no I/O but reading the configuration, the file system
// layout and stderr for fail().
#include "ServerOptions.h"

#include "server/ServerHost.h"
#include "service/Log.h"

#include <llvm/Support/raw_ostream.h>

#include <filesystem>

namespace inm::server {

using service::logLine;

std::string selfExecutable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("inmanta") : p.string();
}

int fail(const std::string& msg) {
  llvm::errs() << "inmanta server: " << msg << "\n";
  return 1;
}

/// The default console directory: <binary dir>/../share/inmanta/console, else <source tree>/console/dist.
std::string defaultConsoleDir() {
  std::filesystem::path exe = selfExecutable();
  std::error_code ec;
  auto installed = exe.parent_path().parent_path() / "share" / "inmanta" / "console";
  if (std::filesystem::is_directory(installed, ec)) return installed.string();
  auto source = std::filesystem::path(INM_SOURCE_DIR) / "console" / "dist";
  if (std::filesystem::is_directory(source, ec)) return source.string();
  return "";
}

/// The compile service's options from the configuration (docs/autonomous.md, "Configuration").
llvm::Error compileOptions(const config::Config& cfg, const store::DbSettings& db,
                           const api::HttpOptions& http, compile::CompileServiceOptions& co) {
  co.dbConnection = db.connectionString(); // the store's own quoting, timeout and application name
  co.dbConnections = 2;
  co.stateDir = cfg.getString("config", "state-dir", "/var/lib/inmanta");
  std::string bind =
      http.bindAddress == "0.0.0.0" || http.bindAddress == "::" ? "localhost" : http.bindAddress;
  co.serverAddress = cfg.getString("server", "server-address", bind);
  co.serverPort = http.port;
  llvm::Expected<int64_t> timeout = cfg.getInt("server", "compile-timeout", 600);
  if (!timeout) return timeout.takeError();
  if (*timeout < 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "[server] compile-timeout must be at least 1 second");
  co.compileTimeout = std::chrono::seconds(*timeout);
  co.git.username = cfg.getString("compiler", "git_username", "");
  co.git.password = cfg.getString("compiler", "git_token", "");
  co.git.sshKey = cfg.getString("compiler", "git_ssh_key", "");
  co.git.sshPublicKey = cfg.getString("compiler", "git_ssh_public_key", "");
  co.git.sshPassphrase = cfg.getString("compiler", "git_ssh_passphrase", "");
  if (!http.sslCertFile.empty()) {
    co.exportArgs.push_back("--ssl");
    std::string ca = cfg.getString("server", "ssl_ca_cert_file", "");
    if (!ca.empty()) co.exportArgs.insert(co.exportArgs.end(), {"--ssl-ca-cert", ca});
  } else {
    co.exportArgs.push_back("--no-ssl");
  }
  // A state dir that cannot be created is not fatal: compiles then fail with a report naming it.
  std::error_code ec;
  std::filesystem::create_directories(co.stateDir, ec);
  if (ec) logLine("warning", "state_dir_unavailable", {{"state_dir", co.stateDir}, {"error", ec.message()}});
  co.stateDir = std::filesystem::absolute(co.stateDir, ec).string();
  return llvm::Error::success();
}

/// A database error that waiting will not cure (PostgreSQL answered, and refused): the line saying what to
/// do, or "" for transient failures (refused connection, starting up, too many clients), which are retried.
std::string permanentDatabaseError(const std::string& msg, const store::DbSettings& db) {
  const std::string where = " on " + db.host + ":" + std::to_string(db.port);
  if (msg.find("database \"" + db.name + "\" does not exist") != std::string::npos)
    return "the database '" + db.name + "' does not exist" + where + ": create it (e.g. `createdb -h " +
           db.host + " -p " + std::to_string(db.port) + " -U " + db.username + " " + db.name +
           "`) or set [database] name (docs/server.md \"First start\")";
  if (msg.find("role \"" + db.username + "\" does not exist") != std::string::npos)
    return "the database user '" + db.username + "' does not exist" + where +
           ": create it or set [database] username";
  if (msg.find("password authentication failed") != std::string::npos ||
      msg.find("no password supplied") != std::string::npos)
    return "the database refused the credentials of user '" + db.username + "'" + where +
           ": check [database] username and password";
  if (msg.find("no pg_hba.conf entry") != std::string::npos)
    return "the database does not accept connections from this host for user '" + db.username + "'" + where +
           ": add a pg_hba.conf entry";
  return "";
}

} // namespace inm::server

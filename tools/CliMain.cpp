// `inmanta-cli` (also `inmanta cli …`), the program's entry: reads the global options (connection settings
// from [cmdline_rest_transport] and [config] environment, overridden by --host/--port/--token/--ssl/
// --ssl-ca-cert; --json; -c FILE), opens the client and hands the command words to the library
// (orchestrator/cli, cli::runCommand). Invariant: every failure prints one `Error: …` line (the server's
// message when it answered) on stderr and exits 1; bad usage exits 2.
#include "Verbs.h"
#include "cli/Cli.h"
#include "cli/CliHelp.h"
#include "client/Client.h"
#include "config/Config.h"

#include <llvm/Support/raw_ostream.h>

using namespace inm;
using namespace inm::cli;

namespace {

int run(const std::vector<std::string>& argv) {
  Args globals(argv);
  bool help = globals.flag({"--help", "-h"});
  if (globals.flag({"--list-verbs"})) {
    listCliCommands(llvm::outs());
    return 0;
  }
  std::vector<std::string> configFiles;
  while (auto c = globals.option({"-c", "--config"})) configFiles.push_back(*c);
  auto host = globals.option({"--host"});
  auto port = globals.option({"--port"});
  auto tokenFlag = globals.option({"--token"});
  auto ca = globals.option({"--ssl-ca-cert"});
  bool ssl = globals.flag({"--ssl"});
  bool noSsl = globals.flag({"--no-ssl"});
  Cli cli;
  cli.jsonOutput = globals.flag({"--json"});
  std::vector<std::string> words = globals.rest();
  if (argv.empty() || help) { // per-command help (tools/CliHelp.cpp), else the overview
    if (!help || !printCliHelp(llvm::outs(), words)) llvm::outs() << kCliHelp;
    return argv.empty() ? 2 : 0;
  }
  if (std::string misspelt = misspeltCliCommand(words); !misspelt.empty()) usageError(misspelt);
  if (words.empty() || words[0][0] == '-')
    usageError(words.empty() ? "missing command" : "unknown option " + words[0]);

  auto cfg = config::Config::load(configFiles, ".");
  if (!cfg) failure(llvm::toString(cfg.takeError()));
  cli.cfg = std::move(*cfg);
  const char* section = "cmdline_rest_transport";
  if (host) cli.cfg.set(section, "host", *host);
  if (port) cli.cfg.set(section, "port", *port);
  if (tokenFlag) cli.cfg.set(section, "token", *tokenFlag);
  if (ca) cli.cfg.set(section, "ssl_ca_cert_file", *ca);
  if (ssl || noSsl) cli.cfg.set(section, "ssl", ssl ? "true" : "false");
  auto ep = client::endpointFromConfig(cli.cfg, section);
  if (!ep) failure(llvm::toString(ep.takeError()));
  cli.client = std::make_unique<client::Client>(*ep);

  return runCommand(cli, words);
}

} // namespace

namespace inm::tools {
int cliMain(const std::vector<std::string>& args);
}

int inm::tools::cliMain(const std::vector<std::string>& args) {
  try {
    return run(args);
  } catch (const CliError& e) {
    llvm::errs() << (e.code == 2 ? "Usage error: " : "Error: ") << e.message << "\n";
    if (e.code == 2) llvm::errs() << "(run 'inmanta-cli --help' for usage)\n";
    return e.code;
  } catch (const nlohmann::json::exception& e) { // an answer without the shape a command reads
    llvm::errs() << "Error: the server's answer does not have the expected form (" << e.what() << ")\n";
    return 1;
  } catch (const std::exception& e) {
    llvm::errs() << "Error: " << e.what() << "\n";
    return 1;
  }
}

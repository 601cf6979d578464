// `inmanta deploy [--dry-run] [--project DIR]`: the embedded mode (docs/deploy.md). Wiring only: flags become
// embedded::DeployOptions and orchestrator/embedded runs PostgreSQL, the server, the export and the deploy;
// the dry run's report is `inmanta-cli dryrun request --wait` (tools/CliMain.cpp). Invariant: a usage error
// exits 2 before anything is started.
#include "Verbs.h"
#include "embedded/EmbeddedDeploy.h"

#include <filesystem>
#include <iostream>

namespace inm::tools {

int cliMain(const std::vector<std::string>& args); // tools/CliMain.cpp: the dry run's report

int deployMain(const std::vector<std::string>& args, int verbose) {
  (void)verbose;
  embedded::DeployOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--dry-run")
      o.dryRun = true;
    else if (args[i] == "--project" && i + 1 < args.size())
      o.projectDir = args[++i];
    else if (args[i] == "-h" || args[i] == "--help") {
      std::cout << "usage: inmanta deploy [--dry-run] [--project DIR]\n";
      return 0;
    } else {
      std::cerr << "inmanta deploy: unknown argument '" << args[i] << "'\n";
      return 2;
    }
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  o.executable = ec ? "inmanta" : self.string();
  o.dryRunReport = [](const std::vector<std::string>& cliArgs) { return cliMain(cliArgs); };
  return embedded::runDeploy(o);
}

} // namespace inm::tools

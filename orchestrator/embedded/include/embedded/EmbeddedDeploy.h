// The embedded mode (`inmanta deploy`, docs/deploy.md, README): in a project directory, a private PostgreSQL,
// `inmanta server` (which runs the scheduler and executors), one compile + export of the project, a full
// deploy with a live progress line and a final table, then everything it started is stopped. A library above
// the client (it composes processes, the HTTP client and the database), so tools/DeployMain.cpp only parses
// flags. Invariant: runDeploy stops every process it started, on success, failure, SIGINT and SIGTERM alike.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace inm::embedded {

/// What `inmanta deploy` was asked to do.
struct DeployOptions {
  std::string projectDir = "."; ///< the project (its main.cf); state goes under <project>/data/deploy
  bool dryRun = false;          ///< a dry run of the new version instead of a deploy; the version is deleted
  std::string executable;       ///< this binary (`server` and `export` verbs are run from it)
  /// Prints a dry run's report: called with `inmanta-cli` arguments (`… dryrun request -e ENV --wait V`),
  /// returns the exit code.
  std::function<int(const std::vector<std::string>& cliArgs)> dryRunReport;
};

/// Runs the embedded mode to the end. Returns the exit code: 0 when every resource deployed (or the dry run's
/// report's code), 1 when any resource did not or something failed (the reason is printed), 2 when the
/// directory is not a project.
int runDeploy(const DeployOptions& options);

} // namespace inm::embedded

// The "Installing modules" compile stage (see ModuleStage.h). The clones live in the cache; the checkout's
// downloadpath gets one symlink per managed module, re-created each run (a pull may have removed it).
// Modules committed in the project itself stay where they are and are only checked.
#include "ModuleStage.h"

#include "projectmgr/Install.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace inm::compile {

bool needsModuleInstall(const std::string& checkout) {
  if (!llvm::sys::fs::is_regular_file(checkout + "/project.yml")) return false;
  projectmgr::ProjectConfig p = projectmgr::readProjectConfig(checkout);
  return !p.repos.empty() || !p.requirements.empty() || !p.errors.empty();
}

StageResult installModules(const std::string& checkout, const std::string& cacheDir, bool update,
                           const GitCredentials& creds) {
  namespace pm = inm::projectmgr;
  StageResult r;
  r.command = update ? "inmanta project update" : "inmanta project install";
  pm::ProjectConfig p = pm::readProjectConfig(checkout);
  const std::string linkDir = p.downloadPath;
  p.downloadPath = cacheDir;
  p.modulePath.insert(p.modulePath.begin(), cacheDir);
  pm::InstallOptions o;
  o.update = update;
  o.auth = pm::loadGitAuth(checkout);
  if (!creds.sshKey.empty()) {
    o.auth.sshKey = creds.sshKey;
    o.auth.sshPublicKey = creds.sshPublicKey;
    o.auth.sshPassphrase = creds.sshPassphrase;
  }
  if (!creds.password.empty()) {
    o.auth.username = creds.username;
    o.auth.password = creds.password;
  }
  o.log = [&](const std::string& s) { r.out += s + "\n"; };
  (void)llvm::sys::fs::create_directories(cacheDir);
  pm::InstallReport rep = pm::installProject(p, o);
  for (const std::string& w : rep.warnings) r.err += "warning: " + w + "\n";
  for (const std::string& e : rep.errors) r.err += "error: " + e + "\n";
  if (!rep.ok) {
    r.returncode = 1;
    return r;
  }
  (void)llvm::sys::fs::create_directories(linkDir);
  for (const pm::ModuleState& m : rep.modules) {
    if (!m.managed) continue;
    std::string link = linkDir + "/" + m.name;
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(link, st, /*follow=*/false)) {
      if (st.type() != llvm::sys::fs::file_type::symlink_file) {
        r.err += "warning: " + link + " exists in the project and is used instead of the cached clone\n";
        continue;
      }
      (void)llvm::sys::fs::remove(link);
    }
    if (std::error_code ec = llvm::sys::fs::create_link(m.dir, link)) {
      r.returncode = 1;
      r.err += "error: linking " + link + " to " + m.dir + ": " + ec.message() + "\n";
    }
  }
  r.out += rep.changed ? "Installed " + std::to_string(rep.modules.size()) + " modules (" +
                             std::to_string(rep.changed) + " cloned or moved)\n"
                       : "All " + std::to_string(rep.modules.size()) + " modules are up to date (cache " +
                             cacheDir + ")\n";
  return r;
}

} // namespace inm::compile

// Loading module repository credentials (see projectmgr/GitAuth.h). The config files are INI files; only the
// `[module_auth]` section is read, with keys ssh_key, ssh_public_key, ssh_passphrase, ssh_agent,
// ssh_known_hosts, username,
// password (or token). Environment variables INMANTA_MODULE_AUTH_<KEY> override the files.
#include "projectmgr/GitAuth.h"

#include "projectmgr/Config.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace inm::projectmgr {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void setKey(GitAuth& a, const std::string& key, const std::string& value) {
  if (key == "ssh_key")
    a.sshKey = value;
  else if (key == "ssh_public_key")
    a.sshPublicKey = value;
  else if (key == "ssh_passphrase")
    a.sshPassphrase = value;
  else if (key == "ssh_agent")
    a.sshAgent = value == "true" || value == "1" || value == "yes";
  else if (key == "ssh_known_hosts")
    a.sshKnownHosts = value;
  else if (key == "username")
    a.username = value;
  else if (key == "password" || key == "token")
    a.password = value;
}

bool readSection(const std::string& path, GitAuth& a) {
  std::string text;
  if (!readWholeFile(path, text)) return false;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    auto eq = line.find('=');
    if (section != "module_auth" || eq == std::string::npos) continue;
    setKey(a, trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
  }
  return true;
}

} // namespace

GitAuth loadGitAuth(const std::string& projectDir, std::vector<std::string>* sources) {
  GitAuth a;
  std::vector<std::string> files = {"/etc/inmanta/inmanta.cfg"};
  if (const char* home = std::getenv("HOME")) files.push_back(joinPath(home, ".inmanta.cfg"));
  files.push_back(joinPath(projectDir, ".inmanta"));
  files.push_back(joinPath(projectDir, ".inmanta.cfg"));
  for (const std::string& f : files)
    if (readSection(f, a) && sources) sources->push_back(f);
  for (const char* key : {"ssh_key", "ssh_public_key", "ssh_passphrase", "ssh_agent", "ssh_known_hosts",
                          "username", "password", "token"}) {
    std::string env = "INMANTA_MODULE_AUTH_";
    for (const char* c = key; *c; ++c) env += char(std::toupper(static_cast<unsigned char>(*c)));
    if (const char* v = std::getenv(env.c_str())) setKey(a, key, v);
  }
  return a;
}

std::vector<std::string> knownHostsFiles(const GitAuth& auth) {
  if (!auth.sshKnownHosts.empty()) return {auth.sshKnownHosts};
  std::vector<std::string> files;
  if (const char* home = std::getenv("HOME")) files.push_back(joinPath(home, ".ssh/known_hosts"));
  files.push_back("/etc/ssh/ssh_known_hosts");
  return files;
}

} // namespace inm::projectmgr

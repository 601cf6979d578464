// known_hosts checks for ssh module repositories (see KnownHosts.h). Lines are `[marker] hosts keytype base64
// [comment]`; the host name looked up is `host` on port 22 and `[host]:port` otherwise, as OpenSSH writes it.
#include "projectmgr/KnownHosts.h"

#include "projectmgr/Config.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <sstream>

namespace inm::projectmgr {
namespace {

bool decodeBase64(const std::string& in, std::string& out) {
  if (in.empty() || in.size() % 4 != 0) return false;
  std::string buf(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(buf.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return false;
  size_t pad = in.size() - in.find_last_not_of('=') - 1;
  buf.resize(static_cast<size_t>(n) - pad);
  out = std::move(buf);
  return true;
}

bool glob(const char* p, const char* s) {
  for (; *p; ++p, ++s) {
    if (*p == '*') {
      for (const char* t = s;; ++t) {
        if (glob(p + 1, t)) return true;
        if (!*t) return false;
      }
    }
    if (!*s || (*p != '?' && *p != *s)) return false;
  }
  return !*s;
}

/// `|1|salt|hash`: HMAC-SHA1 of the name keyed with the salt.
bool hashedMatch(const std::string& field, const std::string& name) {
  size_t bar = field.find('|', 3);
  if (field.rfind("|1|", 0) != 0 || bar == std::string::npos) return false;
  std::string salt, want;
  if (!decodeBase64(field.substr(3, bar - 3), salt) || !decodeBase64(field.substr(bar + 1), want))
    return false;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha1(), salt.data(), static_cast<int>(salt.size()),
            reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &len))
    return false;
  return want.size() == len && want.compare(0, len, reinterpret_cast<const char*>(mac), len) == 0;
}

/// Does the hosts field (comma-separated patterns, or one hashed name) name `name`?
bool hostsMatch(const std::string& field, const std::string& name) {
  if (field.rfind("|1|", 0) == 0) return hashedMatch(field, name);
  bool hit = false;
  std::stringstream in(field);
  std::string pat;
  while (std::getline(in, pat, ',')) {
    if (pat.empty()) continue;
    if (pat[0] == '!') {
      if (glob(pat.c_str() + 1, name.c_str())) return false;
      continue;
    }
    hit = hit || glob(pat.c_str(), name.c_str());
  }
  return hit;
}

} // namespace

bool sshEndpoint(const std::string& url, std::string& host, int& port) {
  port = 22;
  std::string rest;
  if (url.rfind("ssh://", 0) == 0 || url.rfind("git+ssh://", 0) == 0) {
    rest = url.substr(url.find("://") + 3);
    rest = rest.substr(0, rest.find('/'));
    if (size_t at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
    if (!rest.empty() && rest[0] == '[') { // [v6]:port
      size_t close = rest.find(']');
      if (close == std::string::npos) return false;
      host = rest.substr(1, close - 1);
      if (close + 1 < rest.size() && rest[close + 1] == ':') port = std::atoi(rest.c_str() + close + 2);
      return !host.empty() && port > 0;
    }
    size_t colon = rest.find(':');
    host = rest.substr(0, colon);
    if (colon != std::string::npos) port = std::atoi(rest.c_str() + colon + 1);
    return !host.empty() && port > 0;
  }
  if (url.find("://") != std::string::npos) return false;
  size_t colon = url.find(':'), slash = url.find('/');
  if (colon == std::string::npos || (slash != std::string::npos && slash < colon)) return false;
  rest = url.substr(0, colon);
  if (size_t at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  host = rest;
  return !host.empty();
}

bool hostKeyKnown(const std::vector<std::string>& files, const std::string& host, int port,
                  const std::string& key, std::string& error) {
  const std::string name = port == 22 ? host : "[" + host + "]:" + std::to_string(port);
  std::vector<std::string> others;
  for (const std::string& file : files) {
    std::string text;
    if (!readWholeFile(file, text)) continue;
    std::istringstream in(text);
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
      std::istringstream words(line);
      std::string first, hosts, type, blob;
      words >> first;
      if (first.empty() || first[0] == '#') continue;
      std::string marker;
      if (first[0] == '@') {
        marker = first;
        words >> hosts;
      } else {
        hosts = first;
      }
      words >> type >> blob;
      if (marker == "@cert-authority" || !hostsMatch(hosts, name)) continue;
      std::string known;
      if (!decodeBase64(blob, known)) continue;
      const std::string where = file + ":" + std::to_string(no);
      if (marker == "@revoked") {
        if (known == key) {
          error = "the SSH host key of " + name + " is marked @revoked in " + where;
          return false;
        }
        continue;
      }
      if (known == key) return true;
      others.push_back(where + " (" + type + ")");
    }
  }
  std::string fix = "; check the server's key and add it, e.g. `ssh-keyscan " +
                    (port == 22 ? std::string() : "-p " + std::to_string(port) + " ") + host +
                    " >> ~/.ssh/known_hosts` (or name a file with ssh_known_hosts in [module_auth])";
  if (!others.empty()) {
    std::string list;
    for (const std::string& o : others) list += (list.empty() ? "" : ", ") + o;
    error = "the SSH host key of " + name + " does not match the key recorded in " + list +
            ": the server's key changed or someone is intercepting the connection; nothing was fetched";
    return false;
  }
  std::string list;
  for (const std::string& f : files) list += (list.empty() ? "" : ", ") + f;
  error = "the SSH host key of " + name + " is not known: no entry for it in " +
          (list.empty() ? "(none)" : list) + fix;
  return false;
}

} // namespace inm::projectmgr

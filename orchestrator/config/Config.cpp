// INI loading for the orchestrator (see include/config/Config.h for the search order and folding rules).
// The syntax is the subset of Python's configparser that Inmanta's files use: `[section]`, `key = value` or
// `key: value`, `#`/`;` comment lines, indented continuation lines appended with a newline.
#include "config/Config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace inm::config {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

llvm::Error makeError(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

std::string envName(const std::string& section, const std::string& option) {
  std::string n = "INMANTA_" + section + "_" + option;
  for (char& c : n) c = c == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

} // namespace

std::string Config::fold(const std::string& name) {
  std::string out = name;
  for (char& c : out) c = c == '-' ? '_' : char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

llvm::Error Config::mergeText(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::string line, section, lastKey;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.find('\0') != std::string::npos)
      return makeError(origin + ":" + std::to_string(lineNo) + ": NUL byte in configuration file");
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (!lastKey.empty() && (line[0] == ' ' || line[0] == '\t')) { // continuation of the previous value
      values_[section][lastKey] += "\n" + t;
      continue;
    }
    if (t.front() == '[') {
      if (t.back() != ']' || t.size() < 3)
        return makeError(origin + ":" + std::to_string(lineNo) + ": malformed section header '" + t + "'");
      section = fold(trim(t.substr(1, t.size() - 2)));
      values_[section];
      lastKey.clear();
      continue;
    }
    size_t sep = t.find_first_of("=:");
    if (sep == std::string::npos || sep == 0)
      return makeError(origin + ":" + std::to_string(lineNo) + ": expected 'key = value', got '" + t + "'");
    if (section.empty())
      return makeError(origin + ":" + std::to_string(lineNo) + ": option '" + trim(t.substr(0, sep)) +
                       "' before any [section]");
    lastKey = fold(trim(t.substr(0, sep)));
    values_[section][lastKey] = trim(t.substr(sep + 1));
  }
  return llvm::Error::success();
}

llvm::Expected<Config> Config::load(const std::vector<std::string>& extraFiles, const std::string& cwd) {
  namespace fs = std::filesystem;
  Config cfg;
  std::vector<std::pair<std::string, bool>> candidates; // path, must exist
  candidates.push_back({"/etc/inmanta/inmanta.cfg", false});
  std::error_code ec;
  if (fs::is_directory("/etc/inmanta/inmanta.d", ec)) {
    std::vector<std::string> dropIns;
    for (const auto& e : fs::directory_iterator("/etc/inmanta/inmanta.d", ec))
      if (e.path().extension() == ".cfg") dropIns.push_back(e.path().string());
    std::sort(dropIns.begin(), dropIns.end());
    for (auto& p : dropIns) candidates.push_back({p, false});
  }
  if (const char* home = std::getenv("HOME"))
    candidates.push_back({std::string(home) + "/.inmanta.cfg", false});
  candidates.push_back({cwd + "/.inmanta", false});
  candidates.push_back({cwd + "/.inmanta.cfg", false});
  for (const auto& f : extraFiles) candidates.push_back({f, true});

  for (const auto& [path, required] : candidates) {
    if (!fs::is_regular_file(path, ec)) {
      if (required) return makeError("configuration file '" + path + "' does not exist");
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError("cannot read configuration file '" + path + "'");
    std::stringstream buf;
    buf << in.rdbuf();
    if (auto err = cfg.mergeText(buf.str(), path)) return err;
    cfg.files_.push_back(path);
  }
  return cfg;
}

std::optional<std::string> Config::get(const std::string& section, const std::string& option) const {
  if (const char* env = std::getenv(envName(section, option).c_str())) return std::string(env);
  auto s = values_.find(fold(section));
  if (s == values_.end()) return std::nullopt;
  auto o = s->second.find(fold(option));
  if (o == s->second.end()) return std::nullopt;
  return o->second;
}

std::string Config::getString(const std::string& section, const std::string& option,
                              const std::string& fallback) const {
  auto v = get(section, option);
  return v ? *v : fallback;
}

llvm::Expected<int64_t> Config::getInt(const std::string& section, const std::string& option,
                                       int64_t fallback) const {
  auto v = get(section, option);
  if (!v) return fallback;
  std::string t = trim(*v);
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0' || errno == ERANGE)
    return makeError("[" + section + "] " + option + ": expected an integer, got '" + *v + "'");
  return int64_t(n);
}

llvm::Expected<bool> Config::getBool(const std::string& section, const std::string& option,
                                     bool fallback) const {
  auto v = get(section, option);
  if (!v) return fallback;
  std::string t = fold(trim(*v));
  if (t == "true" || t == "yes" || t == "on" || t == "1") return true;
  if (t == "false" || t == "no" || t == "off" || t == "0") return false;
  return makeError("[" + section + "] " + option + ": expected a boolean, got '" + *v + "'");
}

void Config::set(const std::string& section, const std::string& option, const std::string& value) {
  values_[fold(section)][fold(option)] = value;
}

std::map<std::string, std::string> Config::section(const std::string& section) const {
  auto s = values_.find(fold(section));
  return s == values_.end() ? std::map<std::string, std::string>{} : s->second;
}

std::vector<std::string> Config::sectionNames() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : values_) out.push_back(name);
  return out;
}

} // namespace inm::config

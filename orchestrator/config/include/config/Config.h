// Inmanta-style INI configuration for the orchestrator's binaries (server, scheduler, agent, inmanta-cli,
// export push). Files are read in the reference's order, later ones winning: /etc/inmanta/inmanta.cfg,
// /etc/inmanta/inmanta.d/*.cfg (sorted), ~/.inmanta.cfg, ./.inmanta, ./.inmanta.cfg, then every -c FILE in
// the order given. An environment variable INMANTA_<SECTION>_<OPTION> (upper case, '-' as '_') overrides any
// file. Invariant: section and option names are compared after folding case and '-' to '_', so
// `bind-port`, `bind_port` and `BIND_PORT` are one option.
#pragma once

#include <llvm/Support/Error.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace inm::config {

/// A loaded configuration: the merged contents of every file read, plus environment overrides on lookup.
class Config {
 public:
  /// Reads the standard search order relative to `cwd`, then `extraFiles` (each must exist: a missing -c file
  /// is an error naming it). A file that fails to parse is an error naming its path and line.
  static llvm::Expected<Config> load(const std::vector<std::string>& extraFiles,
                                     const std::string& cwd = ".");

  /// Parses one INI text into this configuration (later values win); `origin` names it in errors.
  llvm::Error mergeText(const std::string& text, const std::string& origin);

  /// The raw value of [section] option, the environment override first; nullopt when unset.
  std::optional<std::string> get(const std::string& section, const std::string& option) const;
  /// The value or `fallback` when unset.
  std::string getString(const std::string& section, const std::string& option,
                        const std::string& fallback) const;
  /// An integer option; a value that is not an integer is an error naming section, option and value.
  llvm::Expected<int64_t> getInt(const std::string& section, const std::string& option,
                                 int64_t fallback) const;
  /// A boolean option (true/false, yes/no, on/off, 1/0, any case); anything else is an error.
  llvm::Expected<bool> getBool(const std::string& section, const std::string& option, bool fallback) const;
  /// Sets a value as if read from a file (command-line flags use this to win over files, not over env vars).
  void set(const std::string& section, const std::string& option, const std::string& value);
  /// Every option of a section (folded names), e.g. to enumerate `[auth_jwt_*]` sections' contents.
  std::map<std::string, std::string> section(const std::string& section) const;
  /// The folded names of all sections seen.
  std::vector<std::string> sectionNames() const;

  /// The files that were read, in order (for `-vv` logs and error messages).
  const std::vector<std::string>& files() const { return files_; }

  /// Folds a section or option name: lower case, '-' -> '_'.
  static std::string fold(const std::string& name);

 private:
  std::map<std::string, std::map<std::string, std::string>> values_;
  std::vector<std::string> files_;
};

} // namespace inm::config

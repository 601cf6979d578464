// `inmanta-cli`'s library (orchestrator/cli, inm_cli): the argument reader, the session a command runs in
// (the client, the configuration, the output mode) and the command dispatch. The program's entry
// (tools/CliMain.cpp) reads the global options, opens the client and calls runCommand. Sits above
// orchestrator/client and speaks only REST through it. Invariant: a failure is a thrown CliError, caught once
// by the caller, which prints one `Error: …` (exit 1) or `Usage error: …` (exit 2) line.
#pragma once

#include "client/Client.h"
#include "config/Config.h"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inm::cli {

using nlohmann::json;

/// A usage mistake (exit 2) or a failure (exit 1), thrown inside the CLI only and caught once by the program
/// entry (tools/CliMain.cpp).
struct CliError {
  std::string message; ///< the text after `Error: ` / `Usage error: `
  int code = 1;        ///< the exit code: 2 usage, 1 failure
};

/// Throws a usage mistake (exit 2).
[[noreturn]] inline void usageError(const std::string& msg) { throw CliError{msg, 2}; }
/// Throws a failure (exit 1).
[[noreturn]] inline void failure(const std::string& msg) { throw CliError{msg, 1}; }

/// The arguments of one verb: flags and options by name (several spellings), then positionals.
class Args {
 public:
  /// The words after the command, in order.
  explicit Args(std::vector<std::string> a) : args_(std::move(a)) {}
  /// Whether one of the spellings `names` is given; consumes it.
  bool flag(std::initializer_list<const char*> names) {
    for (size_t i = 0; i < args_.size(); ++i)
      for (const char* n : names)
        if (args_[i] == n) {
          args_.erase(args_.begin() + long(i));
          return true;
        }
    return false;
  }
  /// The value of `--name VALUE` or `--name=VALUE` for one of the spellings `names`; consumes both; a missing
  /// value is a usage error.
  std::optional<std::string> option(std::initializer_list<const char*> names) {
    for (size_t i = 0; i < args_.size(); ++i)
      for (const char* n : names) {
        std::string eq = std::string(n) + "=";
        if (args_[i] == n) {
          if (i + 1 >= args_.size()) usageError(std::string(n) + " needs a value");
          std::string v = args_[i + 1];
          args_.erase(args_.begin() + long(i), args_.begin() + long(i) + 2);
          return v;
        }
        if (args_[i].rfind(eq, 0) == 0) {
          std::string v = args_[i].substr(eq.size());
          args_.erase(args_.begin() + long(i));
          return v;
        }
      }
    return std::nullopt;
  }
  /// Like option(), but an absent option is a usage error naming its first spelling.
  std::string required(std::initializer_list<const char*> names) {
    auto v = option(names);
    if (!v) usageError(std::string("missing option ") + *names.begin());
    return *v;
  }
  /// The remaining positional arguments; any leftover option is an error.
  std::vector<std::string> positionals(size_t want, const char* what) {
    for (const std::string& a : args_)
      if (a.size() > 1 && a[0] == '-') usageError("unknown option " + a);
    if (args_.size() != want) usageError(std::string("expected ") + what);
    return args_;
  }
  /// No argument may be left.
  void done() { positionals(0, "no further arguments"); }
  /// Whatever was not consumed, in order.
  std::vector<std::string> rest() const { return args_; }

 private:
  std::vector<std::string> args_;
};

/// The state shared by all commands: the client, output mode, configuration.
struct Cli {
  std::unique_ptr<client::Client> client; ///< connected to [cmdline_rest_transport] and the flags
  config::Config cfg;                     ///< the configuration read (token bootstrap reads its keys)
  bool jsonOutput = false;                ///< --json: print the fetched data instead of tables

  /// A call that must succeed; its JSON answer. `tenant` = the environment to send as X-Inmanta-tid.
  json call(const std::string& method, const std::string& path, const json* body = nullptr,
            const client::Query& query = {}, const std::string& tenant = "");
  /// Like call(), but a 404 yields nullopt.
  std::optional<json> callOptional(const std::string& method, const std::string& path,
                                   const client::Query& query, const std::string& tenant);
  /// `key` of an answer, which must be there.
  static json key(const json& answer, const char* k, const char* what);
  /// The id of a project or environment named by id or by name (a name must be unique).
  std::string projectId(const std::string& ref);
  std::string environmentId(const std::string& ref);
  /// Prints `data` as JSON (with --json) and returns true, or returns false for the table.
  bool printedJson(const json& data);
};

/// Runs the command named by `words` (group, verb[, sub-verb], then its arguments) against `cli`; the exit
/// code. Throws CliError for a usage mistake or a failure.
int runCommand(Cli& cli, const std::vector<std::string>& words);

/// The overview printed by `inmanta-cli --help` (and, with exit 2, without arguments).
extern const char* const kCliHelp;

} // namespace inm::cli

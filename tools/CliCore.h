// The shared pieces of `inmanta-cli` (tools/CliMain.cpp and the command groups in tools/Cli*.cpp): the
// argument reader, the client state with its call helpers, and the reference's table and value printing.
// Invariant: a failure is a thrown CliError, caught once in cliMain, which prints one `Error: …` line.
#pragma once

#include "CliHelp.h"
#include "Verbs.h"
#include "client/Client.h"
#include "config/Config.h"
#include "model/Ids.h"

#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inm::tools::cli {

using nlohmann::json;

/// A usage mistake (exit 2) or a failure (exit 1), thrown inside the CLI only and caught in cliMain.
struct CliError {
  std::string message;
  int code = 1;
};

[[noreturn]] inline void usageError(const std::string& msg) { throw CliError{msg, 2}; }
[[noreturn]] inline void failure(const std::string& msg) { throw CliError{msg, 1}; }

/// The arguments of one verb: flags and options by name (several spellings), then positionals.
class Args {
 public:
  explicit Args(std::vector<std::string> a) : args_(std::move(a)) {}
  bool flag(std::initializer_list<const char*> names) {
    for (size_t i = 0; i < args_.size(); ++i)
      for (const char* n : names)
        if (args_[i] == n) {
          args_.erase(args_.begin() + long(i));
          return true;
        }
    return false;
  }
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
  void done() { positionals(0, "no further arguments"); }
  /// Whatever was not consumed, in order.
  std::vector<std::string> rest() const { return args_; }

 private:
  std::vector<std::string> args_;
};

/// A JSON value as the reference's CLI prints it (Python's str()).
inline std::string show(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  return v.dump();
}

inline std::string field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? "" : show(*it);
}

/// Prints an aligned table with a header rule, in the reference's texttable style.
inline void printTable(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto rule = [&](char ch) {
    std::string s = "+";
    for (size_t c : w) s += std::string(c + 2, ch) + "+";
    llvm::outs() << s << "\n";
  };
  auto line = [&](const std::vector<std::string>& r) {
    std::string s = "|";
    for (size_t c = 0; c < w.size(); ++c) {
      std::string cell = c < r.size() ? r[c] : "";
      s += " " + cell + std::string(w[c] - cell.size(), ' ') + " |";
    }
    llvm::outs() << s << "\n";
  };
  rule('-');
  line(header);
  rule('=');
  for (const auto& r : rows) line(r);
  rule('-');
}

inline bool isUuid(const std::string& s) { return model::isUuid(s); }

/// The state shared by all verbs: the client, output mode, configuration.
struct Cli {
  std::unique_ptr<client::Client> client;
  config::Config cfg;
  bool jsonOutput = false;

  /// A call that must succeed; its JSON answer. `tenant` = the environment to send as X-Inmanta-tid.
  nlohmann::json call(const std::string& method, const std::string& path, const json* body = nullptr,
                      const client::Query& query = {}, const std::string& tenant = "") {
    client->endpoint().environment = tenant;
    auto r = client->call(method, path, body, query);
    if (r) return *r;
    client::Failure f = client::takeFailure(r.takeError());
    failure(tools::withTokenHint(f.text, f.status, "cmdline_rest_transport"));
  }
  /// Like call(), but a 404 yields nullopt.
  std::optional<nlohmann::json> callOptional(const std::string& method, const std::string& path,
                                             const client::Query& query, const std::string& tenant) {
    client->endpoint().environment = tenant;
    auto r = client->call(method, path, nullptr, query);
    if (r) return *r;
    client::Failure f = client::takeFailure(r.takeError());
    if (f.status == 404) return std::nullopt;
    failure(tools::withTokenHint(f.text, f.status, "cmdline_rest_transport"));
  }
  /// `key` of an answer, which must be there.
  static json key(const json& answer, const char* k, const char* what) {
    if (!answer.is_object() || !answer.contains(k))
      failure(std::string("the server's answer to ") + what + " has no `" + k + "`");
    return answer[k];
  }

  std::string projectId(const std::string& ref) {
    if (isUuid(ref)) return ref;
    std::vector<std::string> ids;
    for (const json& p : key(call("GET", "/api/v1/project"), "projects", "list projects"))
      if (field(p, "name") == ref) ids.push_back(field(p, "id"));
    if (ids.empty()) failure("no project with id or name '" + ref + "'");
    if (ids.size() > 1) failure("several projects are named '" + ref + "': use the id");
    return ids[0];
  }
  std::string environmentId(const std::string& ref) {
    if (isUuid(ref)) return ref;
    std::vector<std::string> ids;
    for (const json& e : key(call("GET", "/api/v1/environment"), "environments", "list environments"))
      if (field(e, "name") == ref) ids.push_back(field(e, "id"));
    if (ids.empty()) failure("no environment with id or name '" + ref + "'");
    if (ids.size() > 1) failure("several environments are named '" + ref + "': use the id");
    return ids[0];
  }
  /// Prints `data` as JSON (with --json) and returns true, or returns false for the table.
  bool printedJson(const json& data) {
    if (!jsonOutput) return false;
    llvm::outs() << data.dump(2) << "\n";
    return true;
  }
};

inline std::string seg(const std::string& s) { return client::encodeSegment(s); }

/// Prints each line of `text` after `indent` (stage output, content diffs).
inline void printIndented(const std::string& text, const char* indent) {
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    llvm::outs() << indent << text.substr(start, nl - start) << "\n";
    start = nl + 1;
  }
}

/// `inmanta-cli compile list|show` (tools/CliCompile.cpp).
int compile(Cli& cli, const std::string& verb, Args& a);
/// `inmanta-cli dryrun request|list|show` (tools/CliDryrun.cpp).
int dryrun(Cli& cli, const std::string& verb, Args& a);
/// Prints a list of resource diffs (a dry-run report's `diff`, a desired-state compare's `data`): each
/// resource that is not unmodified, each attribute `from -> to`, and a file's unified content diff; returns
/// how many were printed (tools/CliDryrun.cpp).
size_t printResourceDiffs(const json& diffs);

} // namespace inm::tools::cli

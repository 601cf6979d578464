// The private pieces the command groups of `inmanta-cli` share (orchestrator/cli/Cli*.cpp): the reference's
// table and value printing and the groups that live in files of their own. Invariant: printing goes to
// llvm::outs() only; failures are thrown as CliError (cli/Cli.h), never printed here.
#pragma once

#include "cli/Cli.h"
#include "cli/CliHelp.h"
#include "model/Ids.h"

#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inm::cli {

using nlohmann::json;

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

/// `inmanta-cli compile list|show` (CliCompile.cpp).
int compile(Cli& cli, const std::string& verb, Args& a);
/// `inmanta-cli dryrun request|list|show` (CliDryrun.cpp).
int dryrun(Cli& cli, const std::string& verb, Args& a);
/// Prints a list of resource diffs (a dry-run report's `diff`, a desired-state compare's `data`): each
/// resource that is not unmodified, each attribute `from -> to`, and a file's unified content diff; returns
/// how many were printed (CliDryrun.cpp).
size_t printResourceDiffs(const json& diffs);

} // namespace inm::cli

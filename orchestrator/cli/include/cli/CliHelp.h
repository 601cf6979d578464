// The help of `inmanta-cli` commands, their list and "did you mean" for unknown ones
// (orchestrator/cli/CliHelp.cpp), and the hint a 401 answer gets in `inmanta-cli` and `inmanta export`.
// Invariant: the command table in CliHelp.cpp names every command CliCommands.cpp dispatches.
#pragma once

#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace inm::cli {

/// Prints the help of the command named by the words starting `args` (group, verb[, sub-verb]) or, for a
/// group alone, its commands; false when the words name nothing known (the caller prints the global help).
bool printCliHelp(llvm::raw_ostream& os, const std::vector<std::string>& args);
/// Every command, one per line ("project create", "environment setting set", "monitor").
void listCliCommands(llvm::raw_ostream& os);
/// For an unknown group: the nearest group; for an unknown verb of a known group: "group verb"; or "".
std::string suggestCliCommand(const std::string& group, const std::string& verb);
/// For command words (at the start of `args`) that name no command but are near one: "unknown command 'x';
/// did you mean 'y'?"; else "" (a command this table does not know yet is left to the dispatch).
std::string misspeltCliCommand(const std::vector<std::string>& args);
/// `text`, with the tokenHint on a line of its own for a 401 answer.
std::string withTokenHint(const std::string& text, unsigned status, const char* section);
/// For a 401 answer (`status`): how to pass a token, with the configuration `section` the program reads
/// ("cmdline_rest_transport" for inmanta-cli, "compiler_rest_transport" for export); "" for other statuses.
std::string tokenHint(unsigned status, const char* section);

} // namespace inm::cli

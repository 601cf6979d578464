// Private state of one ir::lower run, shared by the lowering files: Lower.cpp (namespaces, imports,
// type registration, std::Entity, plugins), LowerDecls.cpp (typedefs, entities, relations,
// implementations, implements, indexes) and PluginSignature.cpp. Invariant: one Namespace per file
// namespace; every type name is registered before any declaration body is resolved.
#pragma once

#include "ir/Lower.h"
#include "support/PairKey.h"

#include <llvm/ADT/StringMap.h>

namespace inm::ir {

struct LowerContext {
  Program& program;
  StringTable& strings;
  DiagnosticEngine& diags;
  const frontend::Project& project;
  llvm::StringMap<NamespaceId> nsByName;
  /// Declaration ranges of every registered type (for "original at").
  llvm::DenseMap<uint64_t, SourceRange, PairKeyInfo> typeRanges; // (ns << 32 | name) -> range

  LowerContext(Program& p, StringTable& s, DiagnosticEngine& d, const frontend::Project& pr)
      : program(p), strings(s), diags(d), project(pr) {}

  NamespaceId getNamespace(llvm::StringRef name);
  /// Registers a type name in `ns`; on duplicate reports and returns false.
  /// `what` names the definition in the duplicate message ("Entity a::B"); "" = "Type a::b".
  bool defineType(NamespaceId ns, StringId name, TypeEntry entry, SourceRange range, const std::string& what);
  /// Resolves a type name used in a declaration of file namespace `ns`; reports on failure, attributed to
  /// `reportedIn` (the declaring statement, e.g. "Entity(Host)") when given.
  bool resolve(NamespaceId ns, StringId name, SourceRange range, TypeEntry& out,
               llvm::StringRef reportedIn = {});
  std::string loc(SourceRange r) const { return diags.formatLoc(r, true); }
};

/// Parses one builtin plugin signature into a Plugin (ns/name left to the caller). False if malformed.
bool parsePluginSignature(const Program& program, StringTable& strings, llvm::StringRef sig, Plugin& out,
                          std::string& fullName);

void lowerDecls(LowerContext& cx);

} // namespace inm::ir

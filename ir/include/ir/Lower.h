// Entry of the ir stage: the loaded project's ASTs -> a Program with every declaration registered
// (namespaces, imports, entities, attributes, relations, typedefs, implementations, implements, indexes,
// plugins). Static errors (duplicates, unknown types, bad defaults, cycles…) are reported to `diags`.
#pragma once

#include "frontend/Project.h"
#include "ir/Ir.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

namespace inm::ir {

/// A built-in plugin's signature in the language's own notation, e.g.
/// "std::replace(string: string, old: string, new: string) -> string". Flags: allow_unknown, deprecated.
struct PluginSpec {
  const char* signature;
  bool allowUnknown = false;
  bool deprecated = false;
};
/// Signatures of every native std plugin (the runtime registers an implementation for each).
const std::vector<PluginSpec>& builtinPluginSpecs();

Program lower(const frontend::Project& project, StringTable& strings, DiagnosticEngine& diags);

/// Deterministic dump of the resolved declarations (`inmanta compile --dump-ir`).
void dumpIr(const Program& program, const SourceManager& sm, llvm::raw_ostream& os);

} // namespace inm::ir

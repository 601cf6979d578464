// Deterministic JSON text for the artifact: strings (escaped, always valid UTF-8: ill-formed bytes become
// U+FFFD), numbers (integers exactly, floats in Python repr form), and runtime values (dict keys sorted by
// bytes, Unknown as the reference's "<<undefined>>"). Private to the exporter stage.
// Invariant: the same value always produces the same bytes; output is valid JSON (NaN/inf become null).
#pragma once

#include "runtime/Value.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

namespace inm::exporter {

/// The text the reference puts in a field whose value is unknown.
inline constexpr const char* kUndefinedText = "<<undefined>>";

void writeJsonString(llvm::raw_ostream& os, llvm::StringRef s);
void writeJsonDouble(llvm::raw_ostream& os, double d);
/// Writes a runtime value; instances must have been rejected before (they are written as null).
void writeJsonValue(llvm::raw_ostream& os, const runtime::Value& v);

/// True if `v` is or contains an entity instance (not representable in a resource).
bool containsInstance(const runtime::Value& v);

} // namespace inm::exporter

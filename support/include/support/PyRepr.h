// Python renderings shared by the stages that must write values the way the reference (a Python program)
// does: the frontend's "reported in" texts, the runtime's str()/repr() of values, the executor's `%r` log
// formatting. Invariant: pure functions of their argument.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <string>

namespace inm {

/// Python's repr() of a string ('a', "it's", escapes for quotes, backslashes and control characters).
std::string pyStrRepr(llvm::StringRef s);

/// Python's repr() of a float: shortest round-trip digits, always a fractional part or an exponent (`1.0`,
/// `1e+16`, `0.1`), `inf`, `-inf`, `nan`.
std::string pyFloatRepr(double f);

} // namespace inm

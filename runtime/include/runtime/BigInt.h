// Exact integers of any size, the slow path of the language's ints (Python ints in the reference). An int
// that fits in int64 is a ValueKind::Int; every operation here normalises its result back to one when it
// fits, so a ValueKind::BigInt never holds a 64-bit value and int equality stays a kind + payload comparison.
// Big ints are immutable magnitudes in the Model's arena. Their size is bounded by Limits::maxIntDigits:
// an operation whose result would have more decimal digits is refused with a limit error (never a hang).
#pragma once

#include "runtime/Value.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>

namespace inm::runtime {

class ValueArena;

struct BigData {
  uint32_t size; // limbs
  bool negative;
  uint64_t limbs[1]; // magnitude, least significant first, no leading zero limb
};

enum class IntOp : uint8_t { Add, Sub, Mul, FloorDiv, Mod, Pow };

/// `a op b` on ints (Int, BigInt or Bool) with Python semantics: floor division and modulo (sign of the
/// divisor), b != 0 for FloorDiv/Mod and b >= 0 for Pow (the caller handles the other cases). Returns "" or
/// the text of a limit error (the result would exceed Limits::maxIntDigits).
std::string intArith(ValueArena& arena, IntOp op, const Value& a, const Value& b, Value& out);
/// Three-way comparison of two ints (Int, BigInt or Bool): -1, 0 or 1.
int compareInts(const Value& a, const Value& b);
/// Exact comparison of an int with a double, as Python compares them: -1, 0, 1, or 2 when `d` is NaN.
int compareIntFloat(const Value& a, double d);
/// The int as the nearest double; false when it is beyond the double range (Python's OverflowError).
bool intToDouble(const Value& v, double& out);
/// An int as a float attribute stores it (unchanged when beyond the double range: the type check reports it).
inline Value intAsFloat(const Value& v) {
  double d;
  return intToDouble(v, d) ? Value::real(d) : v;
}
/// True if the int is negative.
bool intIsNegative(const Value& v);
/// Decimal digits with a leading '-' for negatives.
std::string intToString(const Value& v);
/// Magnitude in base 2, 8, 10 or 16 (lower-case digits unless `upper`), without sign or prefix.
std::string intMagnitudeText(const Value& v, unsigned base, bool upper = false);
/// Parses an optional sign and digits in `base` (10 or 16; no prefix, no underscores). Returns false for a
/// malformed text; a text with too many digits sets `err` to the limit error and returns false.
bool parseInt(ValueArena& arena, llvm::StringRef text, unsigned base, Value& out, std::string& err);
/// The int `trunc(d)` for a finite double (exact, big when needed); false for NaN and infinities.
bool floatToIntValue(ValueArena& arena, double d, Value& out);
/// Saturates an int to int64 (for counts and indexes: a big int is beyond any limit anyway).
int64_t intSaturated(const Value& v);

} // namespace inm::runtime

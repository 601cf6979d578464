// Integer arithmetic of the language without undefined behaviour: every operation on 64-bit ints reports
// overflow instead of wrapping (the language's ints are exact Python ints: on overflow the caller redoes the
// operation on big ints, runtime/BigInt.h; see docs/limits.md), floor division/modulo never trap on
// INT64_MIN / -1, and a float converts to an int only when it is in range. Used by the evaluator's operators,
// the template engine and plugins.
#pragma once

#include <cmath>
#include <cstdint>

namespace inm {

/// a ** b for b >= 0 by square-and-multiply (O(log b)); false on overflow.
inline bool checkedPow(int64_t base, int64_t exp, int64_t& out) {
  if (exp < 0) return false;
  if (base == 0 || base == 1) {
    out = exp == 0 ? 1 : base;
    return true;
  }
  if (base == -1) {
    out = exp % 2 ? -1 : 1;
    return true;
  }
  int64_t acc = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(acc, base, &acc)) return false;
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return false;
  }
  out = acc;
  return true;
}

/// Python's floor modulo (sign of the divisor); b != 0. INT64_MIN % -1 is 0, not a trap.
inline int64_t floorMod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

/// Python's floor division; b != 0. False only for INT64_MIN // -1 (does not fit).
inline bool floorDiv(int64_t a, int64_t b, int64_t& out) {
  if (b == -1) return !__builtin_sub_overflow(int64_t(0), a, &out);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  out = q;
  return true;
}

/// -a; false for INT64_MIN.
inline bool checkedNeg(int64_t a, int64_t& out) { return !__builtin_sub_overflow(int64_t(0), a, &out); }

/// Truncates a finite float in [-2**63, 2**63) to int64; false for NaN, infinities and out-of-range values.
inline bool floatToInt(double d, int64_t& out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
  out = int64_t(d);
  return true;
}

} // namespace inm

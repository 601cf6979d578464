// Big ints on Boost.Multiprecision's cpp_int (header-only): values are converted to cpp_int for one operation
// and stored back as limbs in the arena (the arena frees without destructors, so no cpp_int lives in it).
// See runtime/BigInt.h.
#include "runtime/BigInt.h"

#include "runtime/Model.h"
#include "support/Limits.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // false positives inside Boost's limb storage
#include <boost/multiprecision/cpp_int.hpp>
#pragma GCC diagnostic pop
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

namespace inm::runtime {

namespace mp = boost::multiprecision;
using Big = mp::cpp_int;

namespace {

constexpr double kLog10Of2 = 0.30102999566398119521;

Big toBig(const Value& v) {
  switch (v.kind) {
  case ValueKind::Bool: return Big(v.b ? 1 : 0);
  case ValueKind::Int: return Big(v.i);
  case ValueKind::BigInt: {
    Big r;
    mp::import_bits(r, v.big->limbs, v.big->limbs + v.big->size, 64, false);
    return v.big->negative ? Big(-r) : r;
  }
  default: return Big(0);
  }
}

/// Bits of |x| (0 for 0).
uint64_t bitLength(const Big& x) { return x.is_zero() ? 0 : uint64_t(mp::msb(mp::abs(x))) + 1; }

/// Decimal digits of a number of `bits` bits, rounded up (exact or one more).
uint64_t digitsForBits(uint64_t bits) { return bits == 0 ? 1 : uint64_t(double(bits) * kLog10Of2) + 1; }

std::string tooBig(uint64_t digits) {
  return fmt::format("an integer of about {} digits exceeds the limit of {} digits (--max-int-digits)",
                     digits, limits().maxIntDigits);
}

/// Stores `x` as a Value: an Int when it fits in int64, else a BigInt in the arena.
Value makeInt(ValueArena& arena, const Big& x) {
  if (x >= Big(INT64_MIN) && x <= Big(INT64_MAX)) return Value::integer(x.convert_to<int64_t>());
  std::vector<uint64_t> limbs;
  Big mag = mp::abs(x);
  mp::export_bits(mag, std::back_inserter(limbs), 64, false);
  size_t bytes = sizeof(BigData) + (limbs.size() - 1) * sizeof(uint64_t);
  auto* mem = static_cast<BigData*>(arena.allocator().Allocate(bytes, alignof(BigData)));
  mem->size = uint32_t(limbs.size());
  mem->negative = x.sign() < 0;
  std::memcpy(mem->limbs, limbs.data(), limbs.size() * sizeof(uint64_t));
  Value v;
  v.kind = ValueKind::BigInt;
  v.big = mem;
  return v;
}

/// Python's floor division and modulo on exact ints; b != 0.
void floorDivMod(const Big& a, const Big& b, Big& q, Big& m) {
  mp::divide_qr(a, b, q, m); // truncating
  if (!m.is_zero() && ((m.sign() < 0) != (b.sign() < 0))) {
    q -= 1;
    m += b;
  }
}

} // namespace

std::string intArith(ValueArena& arena, IntOp op, const Value& av, const Value& bv, Value& out) {
  Big a = toBig(av), b = toBig(bv), r;
  uint64_t maxDigits = limits().maxIntDigits;
  switch (op) {
  case IntOp::Add: r = a + b; break;
  case IntOp::Sub: r = a - b; break;
  case IntOp::Mul:
    // Operands are within the limit, so the product has at most twice as many digits: check before computing
    // only to fail early.
    if (digitsForBits(bitLength(a) + bitLength(b)) > maxDigits + 1 && !a.is_zero() && !b.is_zero())
      return tooBig(digitsForBits(bitLength(a) + bitLength(b) - 1));
    r = a * b;
    break;
  case IntOp::FloorDiv: {
    Big m;
    floorDivMod(a, b, r, m);
    break;
  }
  case IntOp::Mod: {
    Big q;
    floorDivMod(a, b, q, r);
    break;
  }
  case IntOp::Pow: {
    Big mag = mp::abs(a);
    if (mag <= 1 || b.is_zero()) {
      r = b.is_zero() ? Big(1) : (a.sign() < 0 && mp::bit_test(b, 0)) ? Big(-1) : mag;
      break;
    }
    // |a| >= 2: the result has at least (bits(a) - 1) * b bits; refuse before computing anything huge.
    uint64_t bits = bitLength(a) - 1;
    if (b > Big(uint64_t(1) << 40) || digitsForBits(bits * b.convert_to<uint64_t>()) > maxDigits + 1)
      return tooBig(b > Big(uint64_t(1) << 40) ? UINT64_MAX : digitsForBits(bits * b.convert_to<uint64_t>()));
    r = mp::pow(a, b.convert_to<unsigned>());
    break;
  }
  }
  uint64_t bits = bitLength(r);
  if (bits > 63 && digitsForBits(bits) > maxDigits) {
    // digitsForBits may be one too many: count exactly only near the limit.
    uint64_t exact = Big(mp::abs(r)).str().size();
    if (exact > maxDigits) return tooBig(exact);
  }
  out = makeInt(arena, r);
  return "";
}

int compareInts(const Value& a, const Value& b) {
  if (a.kind != ValueKind::BigInt && b.kind != ValueKind::BigInt) {
    int64_t x = a.kind == ValueKind::Bool ? int64_t(a.b) : a.i,
            y = b.kind == ValueKind::Bool ? int64_t(b.b) : b.i;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return toBig(a).compare(toBig(b)) < 0 ? -1 : toBig(a).compare(toBig(b)) > 0 ? 1 : 0;
}

int compareIntFloat(const Value& a, double d) {
  if (std::isnan(d)) return 2;
  if (a.kind != ValueKind::BigInt) {
    int64_t i = a.kind == ValueKind::Bool ? int64_t(a.b) : a.i;
    if (i >= -(int64_t(1) << 53) && i <= (int64_t(1) << 53)) { // exact as a double
      double x = double(i);
      return x < d ? -1 : x > d ? 1 : 0;
    }
  }
  if (std::isinf(d)) return d > 0 ? -1 : 1;
  double fl = std::floor(d);
  Big x = toBig(a), f(fl); // a finite double converts to cpp_int exactly
  int c = x.compare(f);
  if (c < 0) return -1;
  if (c > 0) return 1;
  return fl == d ? 0 : -1; // x == floor(d) < d
}

bool intToDouble(const Value& v, double& out) {
  if (v.kind != ValueKind::BigInt) {
    out = v.kind == ValueKind::Bool ? double(v.b) : double(v.i);
    return true;
  }
  out = toBig(v).convert_to<double>();
  return std::isfinite(out);
}

bool intIsNegative(const Value& v) {
  return v.kind == ValueKind::BigInt ? v.big->negative : v.kind == ValueKind::Int && v.i < 0;
}

std::string intToString(const Value& v) {
  if (v.kind == ValueKind::Int) return std::to_string(v.i);
  if (v.kind == ValueKind::Bool) return v.b ? "1" : "0";
  return toBig(v).str();
}

std::string intMagnitudeText(const Value& v, unsigned base, bool upper) {
  Big mag = mp::abs(toBig(v));
  if (mag.is_zero()) return "0";
  if (base == 10) return mag.str();
  unsigned shift = base == 2 ? 1 : base == 8 ? 3 : 4;
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string s;
  uint64_t bits = bitLength(mag);
  for (uint64_t pos = ((bits + shift - 1) / shift) * shift; pos > 0; pos -= shift) {
    unsigned d = 0;
    for (unsigned k = 0; k < shift; ++k)
      if (mp::bit_test(mag, unsigned(pos - 1 - k))) d |= 1u << (shift - 1 - k);
    s += digits[d];
  }
  size_t nz = s.find_first_not_of('0');
  return nz == std::string::npos ? "0" : s.substr(nz);
}

bool parseInt(ValueArena& arena, llvm::StringRef text, unsigned base, Value& out, std::string& err) {
  bool neg = false;
  if (text.startswith("-") || text.startswith("+")) {
    neg = text[0] == '-';
    text = text.drop_front();
  }
  if (text.empty()) return false;
  for (char c : text)
    if (base == 10 ? !isdigit((unsigned char)c) : !isxdigit((unsigned char)c)) return false;
  size_t nz = text.find_first_not_of('0');
  llvm::StringRef digits = nz == llvm::StringRef::npos ? llvm::StringRef("0") : text.drop_front(nz);
  uint64_t decDigits = base == 10 ? digits.size() : digitsForBits(digits.size() * 4);
  if (decDigits > limits().maxIntDigits + 1 || (base == 10 && decDigits > limits().maxIntDigits)) {
    err = tooBig(decDigits);
    return false;
  }
  Big r(base == 10 ? digits.str() : "0x" + digits.str());
  out = makeInt(arena, neg ? Big(-r) : r);
  return true;
}

bool floatToIntValue(ValueArena& arena, double d, Value& out) {
  if (!std::isfinite(d)) return false;
  double t = std::trunc(d);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) {
    out = Value::integer(int64_t(t));
    return true;
  }
  out = makeInt(arena, Big(t)); // at most ~309 digits: below any sensible limit
  return true;
}

int64_t intSaturated(const Value& v) {
  if (v.kind == ValueKind::BigInt) return v.big->negative ? INT64_MIN : INT64_MAX;
  return v.kind == ValueKind::Bool ? int64_t(v.b) : v.i;
}

} // namespace inm::runtime

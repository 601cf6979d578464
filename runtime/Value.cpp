// Value equality with Python semantics and unknown detection; see Value.h.
#include "runtime/Value.h"

#include "runtime/BigInt.h"

#include <cmath>

namespace inm::runtime {

bool valuesEqual(const Value& a, const Value& b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.kind == ValueKind::Float && b.kind == ValueKind::Float) return a.f == b.f;
    if (a.kind == ValueKind::Float) return compareIntFloat(b, a.f) == 0; // exact, as Python compares
    if (b.kind == ValueKind::Float) return compareIntFloat(a, b.f) == 0;
    if (a.kind == ValueKind::BigInt || b.kind == ValueKind::BigInt) return compareInts(a, b) == 0;
    int64_t x = a.kind == ValueKind::Bool ? int64_t(a.b) : a.i;
    int64_t y = b.kind == ValueKind::Bool ? int64_t(b.b) : b.i;
    return x == y;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case ValueKind::Null: return true;
  case ValueKind::Unknown: return false;
  case ValueKind::String: return a.s == b.s || a.str() == b.str();
  case ValueKind::Instance: return a.inst == b.inst;
  case ValueKind::List: {
    if (a.l->size != b.l->size) return false;
    for (uint32_t i = 0; i < a.l->size; ++i)
      if (!valuesEqual(a.l->items[i], b.l->items[i])) return false;
    return true;
  }
  case ValueKind::Dict: {
    if (a.d->size != b.d->size) return false;
    for (uint32_t i = 0; i < a.d->size; ++i) {
      const Value* other = b.d->find(a.d->entries[i].key->str());
      if (!other || !valuesEqual(a.d->entries[i].value, *other)) return false;
    }
    return true;
  }
  default: return false;
  }
}

bool containsUnknown(const Value& v) {
  switch (v.kind) {
  case ValueKind::Unknown: return true;
  case ValueKind::List:
    for (uint32_t i = 0; i < v.l->size; ++i)
      if (containsUnknown(v.l->items[i])) return true;
    return false;
  case ValueKind::Dict:
    for (uint32_t i = 0; i < v.d->size; ++i)
      if (containsUnknown(v.d->entries[i].value)) return true;
    return false;
  default: return false;
  }
}

} // namespace inm::runtime

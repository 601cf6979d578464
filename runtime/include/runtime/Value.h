// Runtime values of the modelling language: null, bool, int, float, string, list, dict, instance, unknown.
// Ints are exact (Python ints): an int that fits in 64 bits is always ValueKind::Int; a bigger one is
// ValueKind::BigInt (runtime/BigInt.h), so an overflow-checked int64 operation stays the fast path.
// A Value is 16 bytes; strings, lists and dicts are immutable and allocated in the Model's arena (freed
// in one piece with the Model), so Values copy freely and never own anything.
// Invariant: lists are flat after construction where the language flattens (literals, relations); a
// dict's keys are unique strings in insertion order.
#pragma once

#include "support/Id.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>

namespace inm::runtime {

using InstanceId = Id<struct InstanceTag>;

enum class ValueKind : uint8_t { Null, Bool, Int, Float, String, List, Dict, Instance, Unknown, BigInt };

struct StrData {
  uint32_t size;
  char data[1]; // size bytes, then '\0'
  llvm::StringRef str() const { return {data, size}; }
};
struct Value;
struct ListData;
struct DictData;
struct BigData;

struct Value {
  ValueKind kind = ValueKind::Null;
  union {
    bool b;
    int64_t i;
    double f;
    const StrData* s;
    const ListData* l;
    const DictData* d;
    const BigData* big; // never fits in int64 (normalised by makeInt, runtime/BigInt.h)
    uint32_t inst;
  };
  Value() : i(0) {}

  static Value null() { return Value(); }
  static Value unknown() {
    Value v;
    v.kind = ValueKind::Unknown;
    return v;
  }
  static Value boolean(bool x) {
    Value v;
    v.kind = ValueKind::Bool;
    v.i = 0;
    v.b = x;
    return v;
  }
  static Value integer(int64_t x) {
    Value v;
    v.kind = ValueKind::Int;
    v.i = x;
    return v;
  }
  static Value real(double x) {
    Value v;
    v.kind = ValueKind::Float;
    v.f = x;
    return v;
  }
  static Value string(const StrData* x) {
    Value v;
    v.kind = ValueKind::String;
    v.s = x;
    return v;
  }
  static Value list(const ListData* x) {
    Value v;
    v.kind = ValueKind::List;
    v.l = x;
    return v;
  }
  static Value dict(const DictData* x) {
    Value v;
    v.kind = ValueKind::Dict;
    v.d = x;
    return v;
  }
  static Value instance(InstanceId x) {
    Value v;
    v.kind = ValueKind::Instance;
    v.i = 0;
    v.inst = x.index;
    return v;
  }

  bool isNull() const { return kind == ValueKind::Null; }
  bool isUnknown() const { return kind == ValueKind::Unknown; }
  /// int, bool, float or a big int
  bool isNumber() const {
    return kind == ValueKind::Int || kind == ValueKind::Float || kind == ValueKind::Bool ||
           kind == ValueKind::BigInt;
  }
  /// an int of any size (not bool)
  bool isInt() const { return kind == ValueKind::Int || kind == ValueKind::BigInt; }
  llvm::StringRef str() const { return s->str(); }
  InstanceId instanceId() const { return InstanceId{inst}; }
  inline llvm::ArrayRef<Value> items() const;
};

struct ListData {
  uint32_t size;
  uint32_t depth; // 1 + the deepest list/dict item (in the padding before items: free)
  Value items[1];
};
struct DictEntry {
  const StrData* key;
  Value value;
};
struct DictData {
  uint32_t size;
  uint32_t depth; // 1 + the deepest list/dict value
  DictEntry entries[1];
  const Value* find(llvm::StringRef key) const {
    for (uint32_t i = 0; i < size; ++i)
      if (entries[i].key->str() == key) return &entries[i].value;
    return nullptr;
  }
};

inline llvm::ArrayRef<Value> Value::items() const {
  return kind == ValueKind::List ? llvm::ArrayRef<Value>(l->items, l->size) : llvm::ArrayRef<Value>();
}

/// Nesting depth of a value: 0 for scalars, 1 for a flat list/dict. Walks over values (repr, equality,
/// export) recurse this deep; the evaluator keeps it within Limits::maxNesting.
inline uint32_t valueDepth(const Value& v) {
  return v.kind == ValueKind::List ? v.l->depth : v.kind == ValueKind::Dict ? v.d->depth : 0;
}

/// Python `==` between two values (1 == 1.0 == true; instances by identity; lists/dicts deep).
bool valuesEqual(const Value& a, const Value& b);
/// True if `v` is or contains an unknown (lists/dicts searched deeply).
bool containsUnknown(const Value& v);

} // namespace inm::runtime

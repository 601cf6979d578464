// 64-bit keys built from two 32-bit IDs, and the hashing to use them in LLVM's open-addressing maps.
// LLVM's default hash for integers (x * 37) keeps the low bits of the key, so a key whose low half takes only
// a few values (e.g. (instance, implementation)) lands in a handful of buckets and lookups turn linear.
// Invariant: every DenseMap/DenseSet keyed by a pairKey uses PairKeyInfo.
#pragma once

#include <llvm/ADT/DenseMapInfo.h>

#include <cstdint>

namespace inm {

inline uint64_t pairKey(uint32_t a, uint32_t b) { return (uint64_t(a) << 32) | b; }

/// DenseMapInfo for pair keys: full 64-bit mixing (splitmix64 finaliser) before the bucket mask.
struct PairKeyInfo {
  static inline uint64_t getEmptyKey() { return ~uint64_t(0); }
  static inline uint64_t getTombstoneKey() { return ~uint64_t(0) - 1; }
  static unsigned getHashValue(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return unsigned(x);
  }
  static bool isEqual(uint64_t a, uint64_t b) { return a == b; }
};

} // namespace inm

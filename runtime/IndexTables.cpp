// Entity indexes and the lookups waiting on them (see IndexTables.h).
#include "Evaluator.h"

#include <llvm/Support/xxhash.h>

namespace inm::runtime {

namespace {
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
} // namespace

void IndexTables::init(const ir::Program& prog, const Model& model) {
  model_ = &model;
  tables_ = std::make_unique<Table[]>(prog.indexes.size());
  for (uint32_t i = 0; i < prog.indexes.size(); ++i)
    tables_[i].arity = uint32_t(prog.indexes[ir::IndexId{i}].attrNames.size());
}

std::string IndexTables::keyText(const Value& v) const {
  if (v.kind == ValueKind::Float && v.f == double(int64_t(v.f))) return std::to_string(int64_t(v.f));
  return model_->repr(v);
}

static bool rareKind(ValueKind k) {
  return k == ValueKind::Float || k == ValueKind::BigInt || k == ValueKind::List || k == ValueKind::Dict;
}

uint64_t IndexTables::hash(llvm::ArrayRef<Value> key) const {
  uint64_t h = key.size();
  for (const Value& v : key) {
    uint64_t part = 0;
    switch (v.kind) {
    case ValueKind::Instance: part = v.inst; break;
    case ValueKind::String: part = llvm::xxHash64(v.str()); break;
    case ValueKind::Int: part = uint64_t(v.i); break;
    case ValueKind::Bool: part = v.b; break;
    default:
      if (rareKind(v.kind)) part = llvm::xxHash64(keyText(v));
      break;
    }
    h = mix(h * 31 + uint64_t(v.kind) + mix(part));
  }
  return h;
}

bool IndexTables::sameKey(llvm::ArrayRef<Value> a, llvm::ArrayRef<Value> b) const {
  for (size_t i = 0; i < a.size(); ++i) {
    const Value& x = a[i];
    const Value& y = b[i];
    if (x.kind != y.kind) return false;
    switch (x.kind) {
    case ValueKind::Instance:
      if (x.inst != y.inst) return false;
      break;
    case ValueKind::String:
      if (x.s != y.s && x.str() != y.str()) return false;
      break;
    case ValueKind::Int:
      if (x.i != y.i) return false;
      break;
    case ValueKind::Bool:
      if (x.b != y.b) return false;
      break;
    default:
      if (rareKind(x.kind) && keyText(x) != keyText(y)) return false;
      break;
    }
  }
  return true;
}

InstanceId IndexTables::find(uint32_t index, llvm::ArrayRef<Value> key) const {
  const Table& t = tables_[index];
  assert(key.size() == t.arity && "a key has one value per index attribute");
  if (t.buckets.empty()) return InstanceId{};
  uint32_t h = uint32_t(hash(key));
  for (uint32_t b = h & t.mask; t.buckets[b] != 0; b = (b + 1) & t.mask) {
    if (uint32_t(t.buckets[b] >> 32) != h) continue;
    uint32_t e = uint32_t(t.buckets[b]) - 1;
    if (sameKey(key, llvm::ArrayRef<Value>(t.keys).slice(size_t(e) * t.arity, t.arity)))
      return InstanceId{t.insts[e]};
  }
  return InstanceId{};
}

void IndexTables::grow(Table& t) {
  size_t n = t.buckets.empty() ? 64 : t.buckets.size() * 2;
  std::vector<uint64_t> buckets(n, 0);
  uint32_t mask = uint32_t(n - 1);
  for (uint64_t entry : t.buckets) {
    if (entry == 0) continue;
    uint32_t b = uint32_t(entry >> 32) & mask;
    while (buckets[b] != 0) b = (b + 1) & mask;
    buckets[b] = entry;
  }
  t.buckets.swap(buckets);
  t.mask = mask;
}

void IndexTables::insert(uint32_t index, llvm::ArrayRef<Value> key, uint64_t hash64, InstanceId inst) {
  Table& t = tables_[index];
  assert(key.size() == t.arity && "a key has one value per index attribute");
  if ((t.insts.size() + 1) * 2 > t.buckets.size()) grow(t);
  uint32_t h = uint32_t(hash64);
  uint32_t b = h & t.mask;
  for (; t.buckets[b] != 0; b = (b + 1) & t.mask) {
    if (uint32_t(t.buckets[b] >> 32) != h) continue;
    uint32_t e = uint32_t(t.buckets[b]) - 1;
    if (sameKey(key, llvm::ArrayRef<Value>(t.keys).slice(size_t(e) * t.arity, t.arity)))
      return; // the key keeps its first instance
  }
  t.buckets[b] = (uint64_t(h) << 32) | (uint64_t(t.insts.size()) + 1);
  t.insts.push_back(inst.index);
  t.keys.insert(t.keys.end(), key.begin(), key.end());
}

void IndexTables::addAndWake(uint32_t index, llvm::ArrayRef<Value> key, InstanceId inst,
                             llvm::SmallVectorImpl<UnitId>& woken) {
  uint64_t h = hash(key);
  insert(index, key, h, inst);
  if (lookupWaiters_.empty()) return;
  auto range = lookupWaiters_.equal_range(waitKey(index, h));
  for (auto w = range.first; w != range.second; ++w) woken.push_back(w->second);
  lookupWaiters_.erase(range.first, range.second);
}

void IndexTables::waitFor(llvm::ArrayRef<Value> key, PendingLookup p) {
  lookupWaiters_.emplace(waitKey(p.index, hash(key)), p.unit);
  pendingLookups_.push_back(std::move(p));
}

} // namespace inm::runtime

// Value allocation, attribute access and the display/repr renderings of the evaluated model.
// display() follows Python's str() as the reference shows values (True/False, None at top level, null
// inside containers, floats with repr precision, `1.0` kept); interpolation applies its own float rule.
#include "runtime/Model.h"

#include "runtime/BigInt.h"
#include "support/PyRepr.h"

#include <fmt/format.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace inm::runtime {

const StrData* ValueArena::makeString(llvm::StringRef s) {
  auto* mem = static_cast<StrData*>(alloc_.Allocate(sizeof(uint32_t) + s.size() + 1, alignof(StrData)));
  mem->size = uint32_t(s.size());
  if (!s.empty()) std::memcpy(mem->data, s.data(), s.size());
  mem->data[s.size()] = '\0';
  return mem;
}

Value ValueArena::list(llvm::ArrayRef<Value> items) {
  if (items.empty() && emptyList_) return Value::list(emptyList_);
  size_t bytes = sizeof(ListData) + (items.empty() ? 0 : (items.size() - 1) * sizeof(Value));
  auto* mem = static_cast<ListData*>(alloc_.Allocate(bytes, alignof(ListData)));
  mem->size = uint32_t(items.size());
  uint32_t depth = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    new (&mem->items[i]) Value(items[i]);
    depth = std::max(depth, valueDepth(items[i]));
  }
  mem->depth = depth + 1;
  if (items.empty()) emptyList_ = mem;
  return Value::list(mem);
}

Value ValueArena::dict(llvm::ArrayRef<std::pair<llvm::StringRef, Value>> entries) {
  if (entries.empty() && emptyDict_) return Value::dict(emptyDict_);
  size_t bytes = sizeof(DictData) + (entries.empty() ? 0 : (entries.size() - 1) * sizeof(DictEntry));
  auto* mem = static_cast<DictData*>(alloc_.Allocate(bytes, alignof(DictData)));
  mem->size = uint32_t(entries.size());
  uint32_t depth = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    mem->entries[i].key = makeString(entries[i].first);
    new (&mem->entries[i].value) Value(entries[i].second);
    depth = std::max(depth, valueDepth(entries[i].second));
  }
  mem->depth = depth + 1;
  if (entries.empty()) emptyDict_ = mem;
  return Value::dict(mem);
}

std::string Model::locText(SourceRange r) const {
  if (!r.valid() || !sm_) return "<unknown>";
  return sm_->path(r.file).str() + ":" + std::to_string(r.line);
}

void Model::allocateSlots() {
  while (slots_.size() < slotCount_) slots_.emplace_back();
  set_.resize(slotCount_, 0);
}

void Model::adoptSlots(ChunkedVector<Value>&& values) {
  slots_ = std::move(values);
  allocateSlots();
}

InstanceId Model::addInstance(ir::EntityId e, SourceRange at, uint32_t firstSlot) {
  Instance inst;
  inst.entity = e;
  inst.firstSlot = firstSlot == UINT32_MAX ? slotCount_ : firstSlot;
  inst.createdAt = at;
  slotCount_ = std::max(slotCount_, inst.firstSlot + uint32_t(program_->entities[e].slots.size()));
  return instances_.add(inst);
}

const Value* Model::get(InstanceId id, StringId name) const {
  int slot = program_->slotOf(instances_[id].entity, name);
  if (slot < 0 || !isSet(id, uint32_t(slot))) return nullptr;
  return &slots_[instances_[id].firstSlot + uint32_t(slot)];
}

const Value* Model::get(InstanceId id, llvm::StringRef name) const {
  StringId sid = program_->strings->lookup(name);
  if (!sid.valid()) return nullptr;
  return get(id, sid);
}

std::vector<InstanceId> Model::instancesOf(ir::EntityId e) const {
  std::vector<InstanceId> out;
  for (uint32_t i = 0; i < instances_.size(); ++i) {
    InstanceId id{i};
    if (program_->isSubtype(instances_[id].entity, e)) out.push_back(id);
  }
  return out;
}

std::string Model::describe(InstanceId id) const {
  const Instance& inst = instances_[id];
  std::string s = program_->entities[inst.entity].fullName + " (instantiated at ";
  s += locText_(inst.createdAt);
  if (auto more = moreCreatedAt_.find(id.index); more != moreCreatedAt_.end())
    for (const SourceRange& r : more->second) s += "," + locText_(r);
  s += ")";
  return s;
}

std::string Model::repr(const Value& v) const {
  switch (v.kind) {
  case ValueKind::String: return pyStrRepr(v.str());
  default: return display(v, false);
  }
}

std::string Model::display(const Value& v, bool topLevel) const {
  switch (v.kind) {
  case ValueKind::Null: return topLevel ? "None" : "null";
  case ValueKind::Bool: return v.b ? "True" : "False";
  case ValueKind::Int: return std::to_string(v.i);
  case ValueKind::BigInt: return intToString(v);
  case ValueKind::Float: return pyFloatRepr(v.f);
  case ValueKind::String: return topLevel ? v.str().str() : pyStrRepr(v.str());
  case ValueKind::Unknown: return "Unknown";
  case ValueKind::Instance:
    // Inside a list or dict Python shows an instance's repr, "Type <address>": ours is a stable fake address.
    if (topLevel) return describe(v.instanceId());
    return fmt::format("{} {:x}", program_->entities[entityOf(v.instanceId())].fullName,
                       0x7f5a10000000ULL + uint64_t(v.inst) * 0x60);
  case ValueKind::List: {
    std::string s = "[";
    for (uint32_t i = 0; i < v.l->size; ++i) {
      if (i) s += ", ";
      s += display(v.l->items[i], false);
    }
    return s + "]";
  }
  case ValueKind::Dict: {
    std::string s = "{";
    for (uint32_t i = 0; i < v.d->size; ++i) {
      if (i) s += ", ";
      s += pyStrRepr(v.d->entries[i].key->str()) + ": " + display(v.d->entries[i].value, false);
    }
    return s + "}";
  }
  }
  return "";
}

void Model::dump(llvm::raw_ostream& os, const SourceManager& sm) const {
  for (uint32_t i = 0; i < instances_.size(); ++i) {
    InstanceId id{i};
    const Instance& inst = instances_[id];
    const ir::Entity& e = program_->entities[inst.entity];
    os << "instance " << i << " " << e.fullName << " at "
       << llvm::sys::path::filename(sm.path(inst.createdAt.file)) << ":" << inst.createdAt.line << "\n";
    // attributes in name order for determinism
    std::vector<std::pair<std::string, uint32_t>> names;
    for (uint32_t s = 0; s < e.slots.size(); ++s)
      names.emplace_back(program_->strings->str(program_->attrs[e.slots[s]].name).str(), s);
    std::sort(names.begin(), names.end());
    for (auto& [name, s] : names) {
      os << "  " << name << " = ";
      if (!isSet(id, s)) {
        os << "<unset>\n";
        continue;
      }
      const Value& v = slot(id, s);
      if (v.kind == ValueKind::Instance)
        os << "#" << v.inst << " " << program_->entities[entityOf(v.instanceId())].fullName;
      else if (v.kind == ValueKind::List && v.l->size && v.l->items[0].kind == ValueKind::Instance) {
        os << "[";
        for (uint32_t k = 0; k < v.l->size; ++k) os << (k ? ", #" : "#") << v.l->items[k].inst;
        os << "]";
      } else
        os << repr(v);
      os << "\n";
    }
  }
}

} // namespace inm::runtime

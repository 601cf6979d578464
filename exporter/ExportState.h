// The exporter's working data between its phases (private to the stage): collect resources from the
// model (Collect.cpp), order them by id and build the requires graph and resource sets (Exporter.cpp),
// write the artifact (ArtifactWriter.cpp). Field values are runtime Values: the mappers' are kept here (their
// strings in this state's arenas), attribute fields are read from the model when needed; ids and agents are
// text in per-collector arenas or the model's strings. Invariant after ordering: resources are sorted by
// unversioned id, unique, and byInstance maps an instance to its resource number (kNone when it is not
// exported).
#pragma once

#include "exporter/Exporter.h"
#include "exporter/Files.h"
#include "exporter/ResourceRegistry.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Allocator.h>

#include <cassert>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace inm::exporter {

inline constexpr uint32_t kNone = UINT32_MAX;

/// A fixed-capacity array of trivially copyable items whose storage is not cleared when it is allocated: the
/// collectors fill disjoint ranges of it on two threads, so each thread takes the page faults of its own
/// range (a zero-filled std::vector of 100k resources touched all of its fresh pages on one thread first).
template <typename T>
class PodArray {
  static_assert(std::is_trivially_copyable_v<T>, "items are moved with memmove");

 public:
  PodArray() = default;
  PodArray(const PodArray&) = delete;
  PodArray& operator=(const PodArray&) = delete;
  ~PodArray() { ::operator delete(data_); }
  /// Drops the items and makes room for `capacity` (uninitialised).
  void allocate(size_t capacity) {
    ::operator delete(data_);
    data_ = capacity ? static_cast<T*>(::operator new(capacity * sizeof(T))) : nullptr;
    size_ = 0;
    capacity_ = capacity;
  }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  /// Sets the number of items; items [old size, n) must have been written through data().
  void setSize(size_t n) {
    assert(n <= capacity_ && "past the capacity");
    size_ = n;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) {
    assert(i < size_ && "index past the end");
    return data_[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_ && "index past the end");
    return data_[i];
  }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct ExportedResource {
  uint32_t type; ///< index into the registry's types()
  runtime::InstanceId inst;
  llvm::StringRef id;    ///< unversioned, escaped; in one of ExportState::texts
  llvm::StringRef agent; ///< the model's string, or in one of ExportState::texts
  uint32_t firstField;   ///< its mapper fields' values in ExportState::mapperValues
  uint32_t firstDep;     ///< requires: ExportState::deps[firstDep, firstDep + depCount) (after the graph)
  uint32_t depCount;
  bool undefined;
};

struct ExportState {
  ExportState(const runtime::Model& m, const BoundRegistry& b) : model(m), bound(b) {}
  const runtime::Model& model;
  const BoundRegistry& bound;
  runtime::ValueArena arena;
  std::vector<std::unique_ptr<runtime::ValueArena>> moreArenas; ///< of a parallel collection's other part
  std::vector<std::unique_ptr<llvm::BumpPtrAllocator>> texts;   ///< ids and agents, one per collector
  FileStore files;
  PodArray<ExportedResource> resources;
  /// The values the mappers computed, per resource one per mapper field of its type. Attribute fields are
  /// not copied: they are read from the model again when written (fieldValue()).
  PodArray<runtime::Value> mapperValues;
  /// Per registration and field: the field's index among the registration's mapper fields, -1 for an
  /// attribute.
  std::vector<std::vector<int>> mapperIndex;
  /// Per entity index (registered entities only): the model slot of each field of its registration (-1 for a
  /// mapper field).
  std::vector<std::vector<int>> fieldSlots;
  std::vector<uint32_t> deps;          ///< requires edges, sorted per resource (resource numbers)
  std::vector<uint32_t> byInstance;    ///< per instance index
  std::vector<llvm::StringRef> agents; ///< sorted, unique
  std::map<std::string, std::vector<uint32_t>> sets; ///< name -> sorted resource numbers

  const ResourceType& typeOf(const ExportedResource& r) const { return bound.registry().types()[r.type]; }
  /// The exported value of field `name` of resource `r`, nullptr if the type has no such field.
  const runtime::Value* field(uint32_t r, llvm::StringRef name) const;
  /// The exported value of field `f` of `r`: the mapper's value, or the attribute's (Unknown when it contains
  /// an unknown).
  const runtime::Value& fieldValue(const ExportedResource& r, uint32_t f) const {
    int m = mapperIndex[r.type][f];
    if (m >= 0) return mapperValues[r.firstField + uint32_t(m)];
    const runtime::Value& v = model.slot(r.inst, uint32_t(fieldSlots[model.entityOf(r.inst).index][f]));
    return r.undefined && runtime::containsUnknown(v) ? kUnknown : v; // no unknown in a defined resource
  }
  static const runtime::Value kUnknown;
  /// The resources resource `r` requires, ascending.
  llvm::ArrayRef<uint32_t> depsOf(const ExportedResource& r) const {
    return llvm::ArrayRef<uint32_t>(deps).slice(r.firstDep, r.depCount);
  }
};

/// Builds every resource of the model (ids, fields, undefined flags, files); errors go to `diags`.
void collectResources(ExportState& state, DiagnosticEngine& diags);

/// Writes the artifact (docs/artifact.md) for a complete, error-free state.
void writeArtifact(const ExportState& state, const ExportOptions& opts, llvm::raw_ostream& os);

} // namespace inm::exporter

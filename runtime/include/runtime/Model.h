// The evaluated model: every instance with every attribute and relation final. Product of
// runtime::evaluate, read by the exporter (and by `--dump-model`). Also the allocator of runtime values.
// Invariant after a successful evaluate(): every slot of every instance is set (relations frozen); values
// reference only this Model's arena and instances.
#pragma once

#include "ir/Ir.h"
#include "runtime/Value.h"
#include "support/ChunkedVector.h"
#include "support/Diagnostics.h"

#include <llvm/Support/Allocator.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace inm::runtime {

class PluginRegistry;

struct Instance {
  ir::EntityId entity;
  uint32_t firstSlot = 0; // slots [firstSlot, firstSlot + entity.slots.size()) in Model
  SourceRange createdAt;  // first constructor location (further ones: Model::moreCreatedAt)
};

/// The instances of a model by id. Chunked, so that growing it never copies (a doubling vector of 235k
/// instances held two copies at its last growth).
class InstanceStore {
 public:
  InstanceId add(const Instance& inst) {
    items_.push_back(inst);
    return InstanceId{uint32_t(items_.size() - 1)};
  }
  uint32_t size() const { return uint32_t(items_.size()); }
  const Instance& operator[](InstanceId id) const { return items_[id.index]; }

 private:
  ChunkedVector<Instance, 13> items_;
};

/// Allocates immutable runtime values in one arena. Empty lists share one allocation (they are immutable and
/// compared by content, and a model has one per empty relation end: ~0.8M on the 100k bench project), and so
/// do empty dicts (a `dict x = {}` default: one per instance).
class ValueArena {
 public:
  const StrData* makeString(llvm::StringRef s);
  Value str(llvm::StringRef s) { return Value::string(makeString(s)); }
  Value list(llvm::ArrayRef<Value> items);
  /// keys and values in insertion order; keys must be unique.
  Value dict(llvm::ArrayRef<std::pair<llvm::StringRef, Value>> entries);
  llvm::BumpPtrAllocator& allocator() { return alloc_; }

 private:
  llvm::BumpPtrAllocator alloc_;
  const ListData* emptyList_ = nullptr;
  const DictData* emptyDict_ = nullptr;
};

class Model {
 public:
  explicit Model(const ir::Program& program) : program_(&program) {}
  Model(Model&&) = default;
  Model& operator=(Model&&) = default;

  const ir::Program& program() const { return *program_; }
  ValueArena& arena() { return arena_; }

  const InstanceStore& instances() const { return instances_; }
  const Instance& instance(InstanceId id) const { return instances_[id]; }
  ir::EntityId entityOf(InstanceId id) const { return instances_[id].entity; }

  /// Final value of attribute `name` (relations: List of instances for multi ends, Instance or Null for
  /// [1]/[0:1] ends). Returns nullptr if the entity has no such attribute or it was never set.
  const Value* get(InstanceId id, StringId name) const;
  const Value* get(InstanceId id, llvm::StringRef name) const;
  const Value& slot(InstanceId id, uint32_t slotIndex) const {
    return slots_[instances_[id].firstSlot + slotIndex];
  }

  /// Instances whose entity is `e` or a subtype, in creation order.
  std::vector<InstanceId> instancesOf(ir::EntityId e) const;

  /// Python `str()` rendering, as string interpolation and std::print display values.
  std::string display(const Value& v, bool topLevel = true) const;
  /// Python `repr()`-style rendering used in error messages ('a', 1, [1, 'b']).
  std::string repr(const Value& v) const;
  /// "mod::Type (instantiated at file:line)".
  std::string describe(InstanceId id) const;

  /// Deterministic dump of every instance and attribute (`--dump-model`).
  void dump(llvm::raw_ostream& os, const SourceManager& sm) const;

  // ---- building (used by the evaluator) ----
  /// Registers an instance; its attribute storage exists only after allocateSlots() / adoptSlots().
  /// `firstSlot` places its attributes in the storage (default: after the previous instance's).
  InstanceId addInstance(ir::EntityId e, SourceRange at, uint32_t firstSlot = UINT32_MAX);
  /// Records a further constructor location of an instance (an index match: "instantiated at a,b").
  void addCreatedAt(InstanceId id, SourceRange at) { moreCreatedAt_[id.index].push_back(at); }
  /// Allocates the attribute storage of every instance added since the last call (values already set are
  /// kept).
  void allocateSlots();
  /// Takes `values` as the attribute storage (the evaluator hands over its slot array instead of copying it).
  void adoptSlots(ChunkedVector<Value>&& values);
  Value& mutableSlot(InstanceId id, uint32_t slotIndex) {
    return slots_[instances_[id].firstSlot + slotIndex];
  }
  std::vector<uint8_t>& setFlags() { return set_; }
  bool isSet(InstanceId id, uint32_t slotIndex) const {
    return set_[instances_[id].firstSlot + slotIndex] != 0;
  }
  void setSources(const SourceManager* sm) { sm_ = sm; }
  /// "file:line" of a range (used in "instantiated at" texts).
  std::string locText(SourceRange r) const;

 private:
  std::string locText_(SourceRange r) const { return locText(r); }
  const ir::Program* program_;
  const SourceManager* sm_ = nullptr;
  ValueArena arena_;
  InstanceStore instances_;
  std::unordered_map<uint32_t, std::vector<SourceRange>> moreCreatedAt_; // instance index -> locations
  ChunkedVector<Value> slots_;
  std::vector<uint8_t> set_;
  uint32_t slotCount_ = 0;
};

/// Where the model's output (std::print) goes. The driver owns it (`inmanta compile` writes to stdout); tests
/// and embedders pass their own to capture the lines.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  /// One line of output, without its newline.
  virtual void writeLine(llvm::StringRef line) = 0;
};

/// An OutputSink appending to a stream (the driver passes llvm::outs()).
class StreamOutputSink : public OutputSink {
 public:
  explicit StreamOutputSink(llvm::raw_ostream& os) : os_(os) {}
  void writeLine(llvm::StringRef line) override { os_ << line << "\n"; }

 private:
  llvm::raw_ostream& os_;
};

struct EvalOptions {
  std::string projectDir;
  /// Receives std::print lines; none: they are dropped.
  OutputSink* output = nullptr;
  /// Print evaluation statistics (instances, slots, units, memory) to stderr (the driver's INM_EVAL_STATS).
  bool stats = false;
  unsigned maxIterations = 100000;
  /// Leave the evaluator's working tables allocated after evaluate() returns (a short-lived CLI process ends
  /// right after; freeing millions of small objects would cost ~5% of a large compile).
  bool skipTeardown = false;
  /// Plugin implementations beyond the built-in ones (Python plugins, pybridge/); looked up after them.
  const PluginRegistry* extraPlugins = nullptr;
  /// False when the project's own std brings its plugins (as Python): the native std implementations are not
  /// used, only `extraPlugins`.
  bool nativeStdPlugins = true;
  /// Called at the end of each inner phase of the evaluation ("eval run", "eval finalize", "eval model")
  /// when set: the driver's per-phase statistics.
  std::function<void(llvm::StringRef)> phaseEnd;
};

/// Executes the program. Errors (with the reference's exception classes and wrapping) go to `diags`;
/// on error the returned model is partial and must not be exported.
Model evaluate(const ir::Program& program, DiagnosticEngine& diags, const EvalOptions& opts);

} // namespace inm::runtime

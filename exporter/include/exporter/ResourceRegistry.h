// The resource registry: which entity types the exporter turns into resources, and how. A registration
// names the entity ("std::File"), the agent attribute path ("host.name", crossing relations), the id
// attribute ("path"), and the fields; a field is the attribute of the same name unless a mapper computes
// it (File's `hash`, `permissions`). Base field sets come with the base class (every resource:
// `send_event`; purgeable: `purged`, `purge_on_delete`; managed: `managed`, where managed=false drops the
// resource). Dependency managers (std's dir_before_file) add requires edges after flattening.
// Invariant: an instance is exported with the registration of its most specific registered ancestor
// entity (BoundRegistry), and a field name is never one of the artifact's envelope keys.
#pragma once

#include "ir/Ir.h"
#include "runtime/Model.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace inm::exporter {

class FileStore;

/// What a field mapper produced: a value (Unknown = the resource is undefined), "ignore this resource"
/// (the reference's IgnoreResourceException: the instance and the requires edges to it are dropped), or an
/// export error.
struct FieldResult {
  enum Kind : uint8_t { Ok, Ignore, Error } kind = Ok;
  runtime::Value value;
  std::string message; ///< for Error

  static FieldResult ok(runtime::Value v) {
    FieldResult r;
    r.value = v;
    return r;
  }
  static FieldResult ignore() {
    FieldResult r;
    r.kind = Ignore;
    return r;
  }
  static FieldResult error(std::string msg) {
    FieldResult r;
    r.kind = Error;
    r.message = std::move(msg);
    return r;
  }
};

/// Services a mapper may use while computing a field of one instance.
class MapperContext {
 public:
  MapperContext(const runtime::Model& model, runtime::ValueArena& arena, FileStore& files)
      : model_(model), arena_(arena), files_(files) {}
  const runtime::Model& model() const { return model_; }
  /// Final attribute value, nullptr if the entity has no such attribute (or it is unset).
  const runtime::Value* attr(runtime::InstanceId inst, llvm::StringRef name) const {
    return model_.get(inst, name);
  }
  /// A string value owned by the export (outlives the mapper call).
  runtime::Value str(llvm::StringRef s) { return arena_.str(s); }
  /// The export's value allocator (lists and dicts a mapper builds).
  runtime::ValueArena& arena() { return arena_; }
  /// Stores `content` in the artifact's files set; returns its sha1 hex.
  std::string addFile(llvm::StringRef content);

 private:
  const runtime::Model& model_;
  runtime::ValueArena& arena_;
  FileStore& files_;
};

using Mapper = std::function<FieldResult(MapperContext& ctx, runtime::InstanceId inst)>;

/// One field of a registration: the attribute of the same name, or the mapper's value.
struct FieldSpec {
  std::string name;
  Mapper mapper; ///< empty: the attribute `name`
};

/// Which base class's fields a registration inherits.
struct BaseFields {
  bool purgeable = false; ///< + purged, purge_on_delete
  bool managed = false;   ///< + managed (false => not exported)
};

/// A registered resource type.
struct ResourceType {
  std::string entity;            ///< fully qualified entity name, also the id's type
  std::string agentPath;         ///< dotted attribute path, e.g. "host.name" or "agentname"
  std::string idAttribute;       ///< attribute whose value names the resource
  std::vector<FieldSpec> fields; ///< own and base fields, sorted by name, unique
  bool managed = false;          ///< has the `managed` field (ManagedResource)
};

/// Read-only view of the exported resources given to dependency managers.
class DependencyView {
 public:
  virtual ~DependencyView() = default;
  virtual const runtime::Model& model() const = 0;
  virtual uint32_t size() const = 0;
  /// Registration entity name (the id's type), e.g. "std::File" also for a ConfigFile instance.
  virtual llvm::StringRef typeName(uint32_t resource) const = 0;
  virtual runtime::InstanceId instance(uint32_t resource) const = 0;
  /// The exported value of a field (Unknown when undefined, nullptr when the type has no such field).
  virtual const runtime::Value* field(uint32_t resource, llvm::StringRef name) const = 0;
  /// The unversioned resource id ("std::File[h1,path=/x]") and its agent.
  virtual llvm::StringRef id(uint32_t resource) const {
    (void)resource;
    return {};
  }
  virtual llvm::StringRef agent(uint32_t resource) const {
    (void)resource;
    return {};
  }
  /// A dependency manager that failed reports why (an export error).
  virtual void error(std::string message) const { (void)message; }
};

/// Adds requires edges (from, to) = "from requires to" between exported resources.
using DependencyManager =
    std::function<void(const DependencyView& view, std::vector<std::pair<uint32_t, uint32_t>>& edges)>;

/// The set of registrations and dependency managers; independent of any model.
class ResourceRegistry {
 public:
  /// Adds a registration; base fields are added from `base`. Fails on a duplicate entity, a field name
  /// starting with `_` or equal to an envelope key (id, version, requires, undefined), or a duplicate field.
  llvm::Error add(std::string entity, std::string agentPath, std::string idAttribute,
                  std::vector<FieldSpec> fields, BaseFields base = {});
  void addDependencyManager(std::string name, DependencyManager fn);

  const std::vector<ResourceType>& types() const { return types_; }
  const ResourceType* find(llvm::StringRef entity) const;
  const std::vector<std::pair<std::string, DependencyManager>>& dependencyManagers() const {
    return managers_;
  }

  /// Every resource of std.md §3 (File, Directory, Symlink, Package, Service, AgentConfig,
  /// testing::NullResource) and the dir_before_file dependency manager.
  static const ResourceRegistry& standard();

 private:
  std::vector<ResourceType> types_;
  std::vector<std::pair<std::string, DependencyManager>> managers_;
};

/// Registers the std resources and dependency manager into `registry` (used by standard()).
void registerStdResources(ResourceRegistry& registry);

/// A registry bound to one program: the registration (index into types()) of each entity, through its
/// most specific registered ancestor.
class BoundRegistry {
 public:
  /// Entities with two registered ancestors of which neither is more specific get no registration and
  /// are listed in `conflicts` as "Entity: A, B".
  BoundRegistry(const ResourceRegistry& registry, const ir::Program& program,
                std::vector<std::string>* conflicts);
  /// The registration of entity `e`, nullptr if it is not a resource.
  const ResourceType* typeOf(ir::EntityId e) const {
    int t = typeIndex_[e.index];
    return t < 0 ? nullptr : &registry_.types()[size_t(t)];
  }
  int typeIndexOf(ir::EntityId e) const { return typeIndex_[e.index]; }
  /// The entity registered under types()[t], invalid if the program does not define it.
  ir::EntityId entityOfType(size_t t) const { return typeEntity_[t]; }
  const ResourceRegistry& registry() const { return registry_; }

 private:
  const ResourceRegistry& registry_;
  std::vector<int> typeIndex_;           // per EntityId index
  std::vector<ir::EntityId> typeEntity_; // per registration
};

} // namespace inm::exporter

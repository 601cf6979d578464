// Registration bookkeeping (base field sets, reserved names, sorted unique fields) and the binding of
// a registry to one program's entities (most specific registered ancestor). The std registrations live
// in StdResources.cpp. Invariant: a bound entity's registration is an ancestor-or-self of it and every
// other registered ancestor is an ancestor of that registration.
#include "exporter/ResourceRegistry.h"

#include "exporter/Files.h"

#include <algorithm>

namespace inm::exporter {

std::string MapperContext::addFile(llvm::StringRef content) { return files_.add(content); }

namespace {

bool reservedField(llvm::StringRef name) {
  return name.empty() || name.startswith("_") || name == "id" || name == "version" || name == "requires" ||
         name == "undefined";
}

llvm::Error registryError(const llvm::Twine& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

llvm::Error ResourceRegistry::add(std::string entity, std::string agentPath, std::string idAttribute,
                                  std::vector<FieldSpec> fields, BaseFields base) {
  if (find(entity)) return registryError("resource type " + entity + " is registered twice");
  if (agentPath.empty() || idAttribute.empty())
    return registryError("resource type " + entity + " needs an agent path and an id attribute");
  fields.push_back({"send_event", {}});
  if (base.purgeable) {
    fields.push_back({"purged", {}});
    fields.push_back({"purge_on_delete", {}});
  }
  if (base.managed) fields.push_back({"managed", {}});
  std::stable_sort(fields.begin(), fields.end(),
                   [](const FieldSpec& a, const FieldSpec& b) { return a.name < b.name; });
  for (size_t i = 0; i < fields.size(); ++i) {
    if (reservedField(fields[i].name))
      return registryError("resource type " + entity + ": '" + fields[i].name + "' cannot be a field name");
    if (i > 0 && fields[i].name == fields[i - 1].name)
      return registryError("resource type " + entity + ": field '" + fields[i].name + "' is listed twice");
  }
  ResourceType t;
  t.entity = std::move(entity);
  t.agentPath = std::move(agentPath);
  t.idAttribute = std::move(idAttribute);
  t.fields = std::move(fields);
  t.managed = base.managed;
  types_.push_back(std::move(t));
  return llvm::Error::success();
}

void ResourceRegistry::addDependencyManager(std::string name, DependencyManager fn) {
  managers_.emplace_back(std::move(name), std::move(fn));
}

const ResourceType* ResourceRegistry::find(llvm::StringRef entity) const {
  for (const ResourceType& t : types_)
    if (t.entity == entity) return &t;
  return nullptr;
}

const ResourceRegistry& ResourceRegistry::standard() {
  static const ResourceRegistry registry = [] {
    ResourceRegistry r;
    registerStdResources(r);
    return r;
  }();
  return registry;
}

BoundRegistry::BoundRegistry(const ResourceRegistry& registry, const ir::Program& program,
                             std::vector<std::string>* conflicts)
    : registry_(registry) {
  const auto& types = registry.types();
  typeEntity_.assign(types.size(), ir::EntityId{});
  // entity index -> registration index, for the registered entities the program defines
  std::vector<int> direct(program.entities.size(), -1);
  for (uint32_t e = 0; e < program.entities.size(); ++e) {
    const ir::Entity& entity = program.entities[ir::EntityId{e}];
    for (size_t t = 0; t < types.size(); ++t)
      if (types[t].entity == entity.fullName) {
        direct[e] = int(t);
        typeEntity_[t] = ir::EntityId{e};
      }
  }
  typeIndex_.assign(program.entities.size(), -1);
  for (uint32_t e = 0; e < program.entities.size(); ++e) {
    const ir::Entity& entity = program.entities[ir::EntityId{e}];
    int best = -1;
    ir::EntityId bestEntity;
    bool ambiguous = false;
    for (ir::EntityId a : entity.ancestors) {
      int t = direct[a.index];
      if (t < 0) continue;
      if (best < 0 || program.isSubtype(a, bestEntity)) {
        best = t;
        bestEntity = a;
        ambiguous = false;
      } else if (!program.isSubtype(bestEntity, a)) {
        ambiguous = true;
      }
    }
    // A later, more specific registration may resolve an earlier ambiguity: re-check against the winner.
    if (ambiguous && best >= 0) {
      ambiguous = false;
      for (ir::EntityId a : entity.ancestors)
        if (direct[a.index] >= 0 && !program.isSubtype(bestEntity, a)) ambiguous = true;
    }
    if (ambiguous) {
      if (conflicts) {
        std::string text = entity.fullName + ":";
        for (ir::EntityId a : entity.ancestors)
          if (direct[a.index] >= 0) text += " " + program.entities[a].fullName;
        conflicts->push_back(std::move(text));
      }
      continue;
    }
    typeIndex_[e] = best;
  }
}

} // namespace inm::exporter

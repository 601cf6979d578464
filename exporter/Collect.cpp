// Phase 1 of the export: turn every instance of a registered entity into a resource. For each instance:
// agent value (walking the agent path through relations; a list yields its first element), id value,
// `managed` check, then every field (attribute or mapper). An unknown agent or id value skips the
// instance silently; an unknown elsewhere marks the resource undefined (the field is written as
// "<<undefined>>"); a mapper may ignore the instance. Invariant: a resource is appended only when all of
// its fields were computed without error.
#include "ExportState.h"
#include "JsonWriter.h"
#include "artifact/ResourceId.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace inm::exporter {

using artifact::ResourceId;
using runtime::InstanceId;
using runtime::Value;
using runtime::ValueKind;

const Value* ExportState::field(uint32_t r, llvm::StringRef name) const {
  const ExportedResource& res = resources[r];
  const auto& fields = typeOf(res).fields;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return &fieldValues[res.firstField + i];
  return nullptr;
}

namespace {

/// Names of a registration pre-resolved to StringIds (invalid when the program never interned them).
struct TypeNames {
  llvm::SmallVector<StringId, 2> agentPath;
  llvm::SmallVector<llvm::StringRef, 2> agentPathText;
  StringId idAttr;
  std::vector<StringId> fields;
  StringId managed;
};

enum class Outcome : uint8_t { Ok, Unknown, Error };

class Collector {
 public:
  Collector(ExportState& state, DiagnosticEngine& diags) : s_(state), diags_(diags), model_(state.model) {
    const auto& types = s_.bound.registry().types();
    const StringTable& strings = *model_.program().strings;
    for (const ResourceType& t : types) {
      TypeNames n;
      llvm::SmallVector<llvm::StringRef, 2> parts;
      llvm::StringRef(t.agentPath).split(parts, '.');
      for (llvm::StringRef p : parts) {
        n.agentPath.push_back(strings.lookup(p));
        n.agentPathText.push_back(p);
      }
      n.idAttr = strings.lookup(t.idAttribute);
      for (const FieldSpec& f : t.fields) n.fields.push_back(strings.lookup(f.name));
      n.managed = strings.lookup("managed");
      names_.push_back(std::move(n));
    }
  }

  void run() {
    const uint32_t n = model_.instances().size();
    s_.byInstance.assign(n, kNone);
    MapperContext ctx(model_, s_.arena, s_.files);
    // One pass to size the resource array: growing it by doubling moved every resource and briefly held
    // both copies (100k resources: ~10 MiB twice).
    size_t count = 0, fields = 0;
    for (uint32_t i = 0; i < n; ++i) {
      int t = s_.bound.typeIndexOf(model_.entityOf(InstanceId{i}));
      if (t < 0) continue;
      ++count;
      fields += s_.bound.registry().types()[size_t(t)].fields.size();
    }
    s_.resources.reserve(count);
    s_.fieldValues.reserve(fields);
    for (uint32_t i = 0; i < n; ++i) {
      InstanceId inst{i};
      int t = s_.bound.typeIndexOf(model_.entityOf(inst));
      if (t >= 0) collectOne(ctx, inst, uint32_t(t));
    }
  }

 private:
  const Value* get(InstanceId inst, StringId name) const {
    return name.valid() ? model_.get(inst, name) : nullptr;
  }

  /// Reports `kind` at the instance's constructor; the first field of every such message is the instance.
  template <typename... Args>
  void error(InstanceId inst, DiagKind kind, Args&&... args) {
    diags_.error(kind, model_.instance(inst).createdAt, model_.describe(inst), std::forward<Args>(args)...);
  }

  /// Text of an agent or id value; Unknown when it is (or contains) an unknown.
  Outcome idText(InstanceId inst, const Value& v, llvm::StringRef what, std::string& out) {
    if (runtime::containsUnknown(v)) return Outcome::Unknown;
    if (containsInstance(v)) {
      error(inst, DiagKind::ExportValueIsEntity, what.str());
      return Outcome::Error;
    }
    out = v.kind == ValueKind::String ? v.str().str() : model_.display(v);
    if (out.empty()) {
      error(inst, DiagKind::ExportValueEmpty, what.str());
      return Outcome::Error;
    }
    return Outcome::Ok;
  }

  Outcome agentValue(InstanceId inst, const ResourceType& type, const TypeNames& names, std::string& out) {
    InstanceId cur = inst;
    for (size_t k = 0; k < names.agentPath.size(); ++k) {
      const Value* v = get(cur, names.agentPath[k]);
      if (!v) {
        error(inst, DiagKind::ExportAgentPathMissing, type.agentPath, names.agentPathText[k].str(),
              model_.describe(cur));
        return Outcome::Error;
      }
      Value step = *v;
      if (step.kind == ValueKind::List) {
        if (step.items().empty()) {
          error(inst, DiagKind::ExportAgentPathEmptyList, type.agentPath, names.agentPathText[k].str());
          return Outcome::Error;
        }
        step = step.items().front();
      }
      if (step.isUnknown()) return Outcome::Unknown;
      if (k + 1 == names.agentPath.size()) {
        if (step.isNull()) {
          error(inst, DiagKind::ExportAgentNull, type.agentPath);
          return Outcome::Error;
        }
        return idText(inst, step, "agent attribute '" + type.agentPath + "'", out);
      }
      if (step.kind != ValueKind::Instance) {
        error(inst, DiagKind::ExportAgentPathNotEntity, type.agentPath, names.agentPathText[k].str(),
              model_.repr(step));
        return Outcome::Error;
      }
      cur = step.instanceId();
    }
    return Outcome::Error; // empty path: rejected at registration
  }

  void collectOne(MapperContext& ctx, InstanceId inst, uint32_t t) {
    const ResourceType& type = s_.bound.registry().types()[t];
    const TypeNames& names = names_[t];

    std::string agent;
    Outcome o = agentValue(inst, type, names, agent);
    if (o != Outcome::Ok) return;
    const Value* idValue = get(inst, names.idAttr);
    if (!idValue) {
      error(inst, DiagKind::ExportNoIdAttribute, type.idAttribute);
      return;
    }
    std::string idText_;
    if (idText(inst, *idValue, "id attribute '" + type.idAttribute + "'", idText_) != Outcome::Ok) return;
    if (type.managed) {
      const Value* managed = get(inst, names.managed);
      if (managed && managed->kind == ValueKind::Bool && !managed->b) return; // not managed: not exported
    }

    ExportedResource r;
    r.type = t;
    r.inst = inst;
    r.agent = std::move(agent);
    r.firstField = uint32_t(s_.fieldValues.size());
    for (size_t f = 0; f < type.fields.size(); ++f) {
      const FieldSpec& spec = type.fields[f];
      Value v;
      if (spec.mapper) {
        FieldResult res = spec.mapper(ctx, inst);
        if (res.kind == FieldResult::Ignore) {
          s_.fieldValues.resize(r.firstField);
          return;
        }
        if (res.kind == FieldResult::Error) {
          error(inst, DiagKind::ExportFieldFailed, spec.name, res.message);
          s_.fieldValues.resize(r.firstField);
          return;
        }
        v = res.value;
      } else {
        const Value* attr = get(inst, names.fields[f]);
        if (!attr) {
          error(inst, DiagKind::ExportFieldMissing, type.entity, spec.name);
          s_.fieldValues.resize(r.firstField);
          return;
        }
        v = *attr;
      }
      if (runtime::containsUnknown(v)) {
        v = Value::unknown();
        r.undefined = true;
      } else if (containsInstance(v)) {
        error(inst, DiagKind::ExportFieldIsEntity, spec.name);
        s_.fieldValues.resize(r.firstField);
        return;
      }
      s_.fieldValues.push_back(v);
    }
    ResourceId id;
    id.type = type.entity;
    id.agent = r.agent;
    id.attribute = type.idAttribute;
    id.value = std::move(idText_);
    r.id = id.str();
    s_.resources.push_back(std::move(r));
  }

  ExportState& s_;
  DiagnosticEngine& diags_;
  const runtime::Model& model_;
  std::vector<TypeNames> names_;
};

} // namespace

void collectResources(ExportState& state, DiagnosticEngine& diags) { Collector(state, diags).run(); }

} // namespace inm::exporter

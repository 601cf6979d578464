// Phase 1 of the export: turn every instance of a registered entity into a resource. For each instance:
// agent value (walking the agent path through relations; a list yields its first element), id value,
// `managed` check, then every field (attribute or mapper). An unknown agent or id value skips the
// instance silently; an unknown elsewhere marks the resource undefined (the field is written as
// "<<undefined>>"); a mapper may ignore the instance. Invariant: a resource is appended only when all of
// its fields were computed without error. Threads: with the native std registrations and 2048 or more
// candidates, the instances are split in two halves collected at once (this thread and one helper, each with
// its own value arena, text arena, files set and error list) and merged in instance order, which gives the
// same result. Attributes are read through slot numbers looked up once per entity, not by name per instance.
#include "ExportState.h"
#include "JsonWriter.h"
#include "artifact/ResourceId.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

namespace inm::exporter {

using runtime::InstanceId;
using runtime::Value;
using runtime::ValueKind;

const Value ExportState::kUnknown = Value::unknown();

const Value* ExportState::field(uint32_t r, llvm::StringRef name) const {
  const ExportedResource& res = resources[r];
  const auto& fields = typeOf(res).fields;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return &fieldValue(res, uint32_t(i));
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

/// The slots of one resource entity's registration attributes (-1: the entity has no such attribute).
struct EntitySlots {
  int agent = -1; ///< the first step of the agent path
  int id = -1;
  int managed = -1;
};

/// artifact::appendEscaped, with the text before the first byte to escape (usually all of it) copied at once.
void appendIdPart(std::string& out, llvm::StringRef text, artifact::IdPart part) {
  size_t plain = 0;
  while (plain < text.size()) {
    char c = text[plain];
    if (c == '\\' || c == ',' || c == ']' || c == '=') break; // a superset of every part's escapes
    ++plain;
  }
  out.append(text.data(), plain);
  if (plain < text.size()) artifact::appendEscaped(out, text.substr(plain), part);
}

/// Appends into a PodArray from a start index (the arrays are sized for every candidate resource up front, so
/// the two halves of a parallel collection write into disjoint ranges of one array).
template <typename T>
class RangeOut {
 public:
  RangeOut(PodArray<T>& v, size_t begin) : v_(v), end_(begin) {}
  size_t size() const { return end_; } ///< the next index in the whole array
  void push_back(const T& x) {
    assert(end_ < v_.capacity() && "more resources than counted");
    v_.data()[end_++] = x;
  }
  void resize(size_t n) { end_ = n; } ///< drops what was appended past n
 private:
  PodArray<T>& v_;
  size_t end_;
};

/// Where one collector puts its results. Errors are kept in instance order when `errors` is set, else
/// reported at once.
struct Part {
  RangeOut<ExportedResource> resources;
  RangeOut<Value> mapperValues;
  runtime::ValueArena& arena;
  llvm::BumpPtrAllocator& text; ///< ids and agents that are not model strings
  FileStore& files;
  std::vector<Diagnostic>* errors = nullptr;
  std::string scratch; ///< the id being built
};

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
    for (const ResourceType& t : types) {
      std::vector<int>& index = s_.mapperIndex.emplace_back();
      int mappers = 0;
      for (const FieldSpec& f : t.fields) index.push_back(f.mapper ? mappers++ : -1);
    }
    const ir::Program& program = model_.program();
    slots_.resize(program.entities.size());
    s_.fieldSlots.resize(program.entities.size());
    for (uint32_t e = 0; e < program.entities.size(); ++e) {
      int t = s_.bound.typeIndexOf(ir::EntityId{e});
      if (t < 0) continue;
      const TypeNames& n = names_[size_t(t)];
      EntitySlots& es = slots_[e];
      auto slotOf = [&](StringId name) { return name.valid() ? program.slotOf(ir::EntityId{e}, name) : -1; };
      es.agent = n.agentPath.empty() ? -1 : slotOf(n.agentPath.front());
      es.id = slotOf(n.idAttr);
      es.managed = slotOf(n.managed);
      const ResourceType& type = types[size_t(t)];
      for (size_t f = 0; f < n.fields.size(); ++f)
        s_.fieldSlots[e].push_back(type.fields[f].mapper ? -1 : slotOf(n.fields[f]));
    }
  }

  void run() {
    const uint32_t n = model_.instances().size();
    s_.byInstance.assign(n, kNone);
    // One pass to size the resource arrays: growing them by doubling moved every resource and briefly held
    // both copies (100k resources: ~10 MiB twice). It also finds the instance that splits the resources in
    // halves for a parallel collection.
    size_t count = 0, fields = 0, work = 0;
    for (uint32_t i = 0; i < n; ++i) {
      int t = s_.bound.typeIndexOf(model_.entityOf(InstanceId{i}));
      if (t < 0) continue;
      ++count;
      fields += mapperCount(t);
      work += workOf(t);
    }
    s_.resources.allocate(count);
    s_.mapperValues.allocate(fields);
    // Two threads when there is enough work and the mappers are the native std ones (a registry from Python
    // plugins calls into the interpreter, which is single-threaded).
    const bool parallel = count >= kParallelMin && &s_.bound.registry() == &ResourceRegistry::standard();
    llvm::BumpPtrAllocator& firstText = *s_.texts.emplace_back(std::make_unique<llvm::BumpPtrAllocator>());
    if (!parallel) {
      Part all{{s_.resources, 0}, {s_.mapperValues, 0}, s_.arena, firstText, s_.files, nullptr, {}};
      collectRange(all, 0, n);
      s_.resources.setSize(all.resources.size());
      s_.mapperValues.setSize(all.mapperValues.size());
      return;
    }
    // The second part starts at the instance where half of the estimated work is done (a File, with its
    // mappers, costs about three NullResources: splitting by count left one thread working twice as long);
    // its resources and fields are written from there on, and moved down to close the gap left by skipped
    // instances of the first.
    uint32_t split = 0;
    size_t firstCount = 0, firstFields = 0;
    for (size_t done = 0; split < n && done < work / 2; ++split) {
      int t = s_.bound.typeIndexOf(model_.entityOf(InstanceId{split}));
      if (t < 0) continue;
      ++firstCount;
      firstFields += mapperCount(t);
      done += workOf(t);
    }
    runtime::ValueArena& secondArena = *s_.moreArenas.emplace_back(std::make_unique<runtime::ValueArena>());
    llvm::BumpPtrAllocator& secondText = *s_.texts.emplace_back(std::make_unique<llvm::BumpPtrAllocator>());
    FileStore secondFiles;
    std::vector<Diagnostic> firstErrors, secondErrors;
    Part first{{s_.resources, 0}, {s_.mapperValues, 0}, s_.arena, firstText, s_.files, &firstErrors, {}};
    Part second{{s_.resources, firstCount},
                {s_.mapperValues, firstFields},
                secondArena,
                secondText,
                secondFiles,
                &secondErrors,
                {}};
    std::thread helper([&] { collectRange(second, split, n); });
    collectRange(first, 0, split);
    helper.join();
    // Merge in instance order: the same resources, fields and errors as one pass over all instances.
    size_t r = first.resources.size(), f = first.mapperValues.size();
    const uint32_t fieldShift = uint32_t(firstFields - f);
    ExportedResource* res = s_.resources.data();
    for (size_t i = firstCount; i < second.resources.size(); ++i, ++r) {
      res[i].firstField -= fieldShift;
      if (r != i) res[r] = res[i];
    }
    Value* values = s_.mapperValues.data();
    if (f != firstFields)
      std::memmove(values + f, values + firstFields,
                   (second.mapperValues.size() - firstFields) * sizeof(Value));
    f += second.mapperValues.size() - firstFields;
    s_.resources.setSize(r);
    s_.mapperValues.setSize(f);
    s_.files.absorb(secondFiles);
    for (auto* errors : {&firstErrors, &secondErrors})
      for (Diagnostic& d : *errors) diags_.report(std::move(d));
  }

  /// The number of mapper fields of registration `t`.
  size_t mapperCount(int t) const {
    const std::vector<int>& index = s_.mapperIndex[size_t(t)];
    return size_t(std::count_if(index.begin(), index.end(), [](int m) { return m >= 0; }));
  }

  /// The estimated cost of collecting a resource of registration `t`, in units of a plain one: two more per
  /// mapper field (File: hashing and storing its content, its permissions; measured on the 100k bench
  /// project).
  size_t workOf(int t) const { return 1 + 2 * mapperCount(t); }

  /// Below this many resources one thread collects (the thread's start costs more than it saves).
  static constexpr size_t kParallelMin = 2048;

  void collectRange(Part& part, uint32_t begin, uint32_t end) {
    MapperContext ctx(model_, part.arena, part.files);
    for (uint32_t i = begin; i < end; ++i) {
      InstanceId inst{i};
      int t = s_.bound.typeIndexOf(model_.entityOf(inst));
      if (t >= 0) collectOne(part, ctx, inst, uint32_t(t));
    }
  }

 private:
  const Value* get(InstanceId inst, StringId name) const {
    return name.valid() ? model_.get(inst, name) : nullptr;
  }
  /// The value in slot `slot` of `inst` (what Model::get returns for that attribute's name).
  const Value* read(InstanceId inst, int slot) const {
    if (slot < 0 || !model_.isSet(inst, uint32_t(slot))) return nullptr;
    return &model_.slot(inst, uint32_t(slot));
  }

  /// Reports `kind` at the instance's constructor; the first field of every such message is the instance.
  /// A part collected on a worker thread keeps it for the merge in instance order.
  template <typename... Args>
  void error(Part& part, InstanceId inst, DiagKind kind, Args&&... args) {
    Diagnostic d =
        makeDiag(kind, model_.instance(inst).createdAt, model_.describe(inst), std::forward<Args>(args)...);
    if (part.errors)
      part.errors->push_back(std::move(d));
    else
      diags_.report(std::move(d));
  }

  /// Text of an agent or id value (the model's string, or a copy in the part's text arena); Unknown when it
  /// is (or contains) an unknown.
  Outcome idText(Part& part, InstanceId inst, const Value& v, llvm::StringRef what, llvm::StringRef& out) {
    if (runtime::containsUnknown(v)) return Outcome::Unknown;
    if (containsInstance(v)) {
      error(part, inst, DiagKind::ExportValueIsEntity, what.str());
      return Outcome::Error;
    }
    if (v.kind == ValueKind::String) {
      out = v.str();
    } else {
      std::string text = model_.display(v);
      out = llvm::StringRef(text).copy(part.text);
    }
    if (out.empty()) {
      error(part, inst, DiagKind::ExportValueEmpty, what.str());
      return Outcome::Error;
    }
    return Outcome::Ok;
  }

  Outcome agentValue(Part& part, InstanceId inst, const ResourceType& type, const TypeNames& names,
                     llvm::StringRef& out) {
    InstanceId cur = inst;
    for (size_t k = 0; k < names.agentPath.size(); ++k) {
      const Value* v =
          k == 0 ? read(cur, slots_[model_.entityOf(inst).index].agent) : get(cur, names.agentPath[k]);
      if (!v) {
        error(part, inst, DiagKind::ExportAgentPathMissing, type.agentPath, names.agentPathText[k].str(),
              model_.describe(cur));
        return Outcome::Error;
      }
      Value step = *v;
      if (step.kind == ValueKind::List) {
        if (step.items().empty()) {
          error(part, inst, DiagKind::ExportAgentPathEmptyList, type.agentPath, names.agentPathText[k].str());
          return Outcome::Error;
        }
        step = step.items().front();
      }
      if (step.isUnknown()) return Outcome::Unknown;
      if (k + 1 == names.agentPath.size()) {
        if (step.isNull()) {
          error(part, inst, DiagKind::ExportAgentNull, type.agentPath);
          return Outcome::Error;
        }
        return idText(part, inst, step, "agent attribute '" + type.agentPath + "'", out);
      }
      if (step.kind != ValueKind::Instance) {
        error(part, inst, DiagKind::ExportAgentPathNotEntity, type.agentPath, names.agentPathText[k].str(),
              model_.repr(step));
        return Outcome::Error;
      }
      cur = step.instanceId();
    }
    return Outcome::Error; // empty path: rejected at registration
  }

  void collectOne(Part& part, MapperContext& ctx, InstanceId inst, uint32_t t) {
    const ResourceType& type = s_.bound.registry().types()[t];
    const TypeNames& names = names_[t];
    const EntitySlots& slots = slots_[model_.entityOf(inst).index];
    const std::vector<int>& fieldSlots = s_.fieldSlots[model_.entityOf(inst).index];

    llvm::StringRef agent;
    Outcome o = agentValue(part, inst, type, names, agent);
    if (o != Outcome::Ok) return;
    const Value* idValue = read(inst, slots.id);
    if (!idValue) {
      error(part, inst, DiagKind::ExportNoIdAttribute, type.idAttribute);
      return;
    }
    llvm::StringRef idValueText;
    if (idText(part, inst, *idValue, "id attribute '" + type.idAttribute + "'", idValueText) != Outcome::Ok)
      return;
    if (type.managed) {
      const Value* managed = read(inst, slots.managed);
      if (managed && managed->kind == ValueKind::Bool && !managed->b) return; // not managed: not exported
    }

    ExportedResource r;
    r.type = t;
    r.inst = inst;
    r.agent = agent;
    r.firstField = uint32_t(part.mapperValues.size());
    r.firstDep = 0;
    r.depCount = 0;
    r.undefined = false;
    for (size_t f = 0; f < type.fields.size(); ++f) {
      const FieldSpec& spec = type.fields[f];
      Value v;
      if (spec.mapper) {
        FieldResult res = spec.mapper(ctx, inst);
        if (res.kind == FieldResult::Ignore) {
          part.mapperValues.resize(r.firstField);
          return;
        }
        if (res.kind == FieldResult::Error) {
          error(part, inst, DiagKind::ExportFieldFailed, spec.name, res.message);
          part.mapperValues.resize(r.firstField);
          return;
        }
        v = res.value;
      } else {
        const Value* attr = read(inst, fieldSlots[f]);
        if (!attr) {
          error(part, inst, DiagKind::ExportFieldMissing, type.entity, spec.name);
          part.mapperValues.resize(r.firstField);
          return;
        }
        v = *attr;
      }
      if (runtime::containsUnknown(v)) {
        v = Value::unknown();
        r.undefined = true;
      } else if (containsInstance(v)) {
        error(part, inst, DiagKind::ExportFieldIsEntity, spec.name);
        part.mapperValues.resize(r.firstField);
        return;
      }
      if (spec.mapper) part.mapperValues.push_back(v); // attribute values are read again when written
    }
    // type[agent,attribute=value], escaped as artifact::ResourceId::str() does.
    std::string& id = part.scratch;
    id.assign(type.entity);
    id += '[';
    appendIdPart(id, agent, artifact::IdPart::Agent);
    id += ',';
    appendIdPart(id, type.idAttribute, artifact::IdPart::Attribute);
    id += '=';
    appendIdPart(id, idValueText, artifact::IdPart::Value);
    id += ']';
    r.id = llvm::StringRef(id).copy(part.text);
    part.resources.push_back(r);
  }

  ExportState& s_;
  DiagnosticEngine& diags_;
  const runtime::Model& model_;
  std::vector<TypeNames> names_;
  std::vector<EntitySlots> slots_; ///< per entity index; empty for entities that are not resources
};

} // namespace

void collectResources(ExportState& state, DiagnosticEngine& diags) { Collector(state, diags).run(); }

} // namespace inm::exporter

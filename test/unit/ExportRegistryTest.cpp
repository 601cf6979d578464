// Unit tests for the resource registry (exporter/ResourceRegistry.h) and exportModel on tiny hand-built
// models: registration rules, most-specific-ancestor binding, agent paths through relations, unknowns
// (skipped ids, undefined fields), mappers (values, ignore), managed=false, requires flattening with its
// warning, dependency cycles, resource sets and byte-identical output. The Program and Model are built
// directly (no parser), so these tests depend only on the IR and runtime data structures.
#include "exporter/Exporter.h"
#include "exporter/Files.h"
#include "exporter/ResourceRegistry.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

namespace inm::exporter {
namespace {

using runtime::InstanceId;
using runtime::Value;

/// A Program with hand-made entities; attributes are untyped slots.
struct TinyProgram {
  StringTable strings;
  ir::Program program;
  TinyProgram() { program.strings = &strings; }

  ir::EntityId entity(const std::string& fullName, std::vector<ir::EntityId> parents,
                      std::vector<std::string> attrs) {
    ir::Entity e;
    e.fullName = fullName;
    e.name = strings.intern(llvm::StringRef(fullName).rsplit("::").second);
    e.parents = parents;
    ir::EntityId id{program.entities.size()};
    for (ir::EntityId p : parents) {
      const ir::Entity& pe = program.entities[p];
      for (ir::EntityId a : pe.ancestors) e.ancestors.push_back(a);
      for (ir::AttrId a : pe.slots) {
        if (e.slotByName.count(program.attrs[a].name.index)) continue;
        e.slotByName[program.attrs[a].name.index] = uint32_t(e.slots.size());
        e.slots.push_back(a);
      }
    }
    e.ancestors.push_back(id);
    std::sort(e.ancestors.begin(), e.ancestors.end());
    e.ancestors.erase(std::unique(e.ancestors.begin(), e.ancestors.end()), e.ancestors.end());
    for (const std::string& name : attrs) {
      ir::Attribute a;
      a.name = strings.intern(name);
      a.owner = id;
      ir::AttrId aid = program.attrs.add(a);
      e.ownAttrs.push_back(aid);
      e.slotByName[a.name.index] = uint32_t(e.slots.size());
      e.slots.push_back(aid);
    }
    e.defaults.resize(e.slots.size());
    return program.entities.add(std::move(e));
  }
};

struct TinyModel {
  runtime::Model model;
  explicit TinyModel(const ir::Program& p) : model(p) {}
  InstanceId make(ir::EntityId e, std::vector<std::pair<std::string, Value>> values) {
    InstanceId id = model.addInstance(e, SourceRange{});
    model.allocateSlots();
    for (auto& [name, v] : values) set(id, name, v);
    return id;
  }
  void set(InstanceId id, const std::string& name, Value v) {
    int slot = model.program().slotOf(model.entityOf(id), model.program().strings->lookup(name));
    ASSERT_GE(slot, 0) << name;
    model.mutableSlot(id, uint32_t(slot)) = v;
    model.setFlags()[model.instance(id).firstSlot + uint32_t(slot)] = 1;
  }
  Value str(llvm::StringRef s) { return model.arena().str(s); }
  Value list(std::vector<Value> items) { return model.arena().list(items); }
};

struct ExportResult {
  std::string text;
  ExportSummary summary;
  std::vector<Diagnostic> diags;
  unsigned errors = 0;
};

ExportResult run(const runtime::Model& model, const ResourceRegistry& registry, int64_t version = 0) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  ExportOptions opts;
  opts.registry = &registry;
  opts.version = version;
  ExportResult r;
  llvm::raw_string_ostream os(r.text);
  r.summary = exportModel(model, diags, opts, os);
  os.flush();
  r.diags = diags.all();
  r.errors = diags.errorCount();
  return r;
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

/// test::Host(name), test::Thing(name, value, host, requires, managed) registered as a managed resource.
struct ExportModelTest : ::testing::Test {
  TinyProgram tp;
  ir::EntityId entityRoot, host, thing, special, group, resourceSet;
  ResourceRegistry registry;
  void SetUp() override {
    entityRoot = tp.entity("std::Entity", {}, {"requires", "provides"});
    host = tp.entity("test::Host", {entityRoot}, {"name"});
    thing = tp.entity("test::Thing", {entityRoot},
                      {"name", "value", "host", "managed", "send_event", "purged", "purge_on_delete"});
    special = tp.entity("test::SpecialThing", {thing}, {"extra"});
    group = tp.entity("test::Group", {entityRoot}, {"name"});
    resourceSet = tp.entity("std::ResourceSet", {entityRoot}, {"name", "resources"});
    ASSERT_FALSE(bool(registry.add("test::Thing", "host.name", "name", {{"name", {}}, {"value", {}}},
                                   BaseFields{true, true})));
  }
  InstanceId makeHost(TinyModel& m, const char* name) {
    return m.make(host, {{"name", m.str(name)}, {"requires", m.list({})}});
  }
  InstanceId makeThing(TinyModel& m, InstanceId h, const char* name, Value value, ir::EntityId e = {}) {
    std::vector<std::pair<std::string, Value>> values = {{"name", m.str(name)},
                                                         {"value", value},
                                                         {"host", Value::instance(h)},
                                                         {"requires", m.list({})},
                                                         {"managed", Value::boolean(true)},
                                                         {"send_event", Value::boolean(false)},
                                                         {"purged", Value::boolean(false)},
                                                         {"purge_on_delete", Value::boolean(false)}};
    if (e == special) values.push_back({"extra", Value::null()});
    return m.make(e.valid() ? e : thing, values);
  }
};

TEST(ExportRegistryTest, RejectsReservedAndDuplicateFields) {
  ResourceRegistry r;
  EXPECT_TRUE(bool(llvm::errorToBool(r.add("a::B", "agent", "name", {{"id", {}}}))));
  EXPECT_TRUE(bool(llvm::errorToBool(r.add("a::B", "agent", "name", {{"_private", {}}}))));
  EXPECT_TRUE(bool(llvm::errorToBool(r.add("a::B", "agent", "name", {{"x", {}}, {"x", {}}}))));
  EXPECT_TRUE(bool(llvm::errorToBool(r.add("a::B", "agent", "name", {{"send_event", {}}})))); // base field
  EXPECT_FALSE(bool(
      llvm::errorToBool(r.add("a::B", "agent", "name", {{"z", {}}, {"a", {}}}, BaseFields{true, true}))));
  EXPECT_TRUE(bool(llvm::errorToBool(r.add("a::B", "agent", "name", {})))); // registered twice
  const ResourceType* t = r.find("a::B");
  ASSERT_NE(t, nullptr);
  std::vector<std::string> names;
  for (const FieldSpec& f : t->fields) names.push_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"a", "managed", "purge_on_delete", "purged", "send_event", "z"}));
  EXPECT_TRUE(t->managed);
}

TEST(ExportRegistryTest, StandardRegistryHasEveryStdResource) {
  const ResourceRegistry& r = ResourceRegistry::standard();
  for (const char* e : {"std::File", "std::Directory", "std::Symlink", "std::Package", "std::Service",
                        "std::AgentConfig", "std::testing::NullResource"})
    EXPECT_NE(r.find(e), nullptr) << e;
  EXPECT_EQ(r.find("std::File")->agentPath, "host.name");
  EXPECT_EQ(r.find("std::Symlink")->idAttribute, "target");
  EXPECT_EQ(r.find("std::AgentConfig")->agentPath, "agent");
  EXPECT_EQ(r.dependencyManagers().size(), 1u);
}

TEST_F(ExportModelTest, BindsMostSpecificRegisteredAncestor) {
  ASSERT_FALSE(bool(registry.add("test::SpecialThing", "host.name", "name", {{"extra", {}}})));
  std::vector<std::string> conflicts;
  BoundRegistry bound(registry, tp.program, &conflicts);
  EXPECT_TRUE(conflicts.empty());
  ASSERT_NE(bound.typeOf(thing), nullptr);
  EXPECT_EQ(bound.typeOf(thing)->entity, "test::Thing");
  EXPECT_EQ(bound.typeOf(special)->entity, "test::SpecialThing");
  EXPECT_EQ(bound.typeOf(host), nullptr);
}

TEST_F(ExportModelTest, SubtypeExportedAsRegisteredAncestor) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  makeThing(m, h, "s", Value::integer(1), special);
  ExportResult r = run(m.model, registry);
  EXPECT_EQ(r.errors, 0u);
  EXPECT_TRUE(contains(r.text, "\"id\": \"test::Thing[h1,name=s],v=0\"")) << r.text;
}

TEST_F(ExportModelTest, AmbiguousRegistrationIsReported) {
  ir::EntityId other = tp.entity("test::Other", {entityRoot}, {"name", "agent"});
  ir::EntityId both = tp.entity("test::Both", {thing, other}, {});
  ASSERT_FALSE(bool(registry.add("test::Other", "agent", "name", {})));
  std::vector<std::string> conflicts;
  BoundRegistry bound(registry, tp.program, &conflicts);
  EXPECT_EQ(bound.typeOf(both), nullptr);
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0], "test::Both: test::Thing test::Other");
}

TEST_F(ExportModelTest, WritesSortedResourcesWithSortedKeys) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  makeThing(m, h, "b", Value::integer(2));
  makeThing(m, h, "a", m.str("x\"y"));
  ExportResult r = run(m.model, registry, 7);
  ASSERT_EQ(r.errors, 0u);
  EXPECT_EQ(r.summary.resources, 2u);
  EXPECT_EQ(r.summary.agents, 1u);
  EXPECT_TRUE(contains(
      r.text, "    {\"id\": \"test::Thing[h1,name=a],v=7\", \"managed\": true, \"name\": \"a\", "
              "\"purge_on_delete\": false, \"purged\": false, \"requires\": [], \"send_event\": false, "
              "\"undefined\": false, \"value\": \"x\\\"y\", \"version\": 7},\n"
              "    {\"id\": \"test::Thing[h1,name=b],v=7\""))
      << r.text;
  EXPECT_TRUE(contains(r.text, "\"agents\": [\"h1\"]")) << r.text;
  EXPECT_TRUE(contains(r.text, "\"format_version\": 1")) << r.text;
  // Deterministic bytes.
  EXPECT_EQ(run(m.model, registry, 7).text, r.text);
}

TEST_F(ExportModelTest, UnknownIdSkippedUnknownFieldUndefined) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  InstanceId unknownHost = m.make(host, {{"name", Value::unknown()}, {"requires", m.list({})}});
  makeThing(m, h, "u", m.list({Value::integer(1), Value::unknown()}));
  makeThing(m, unknownHost, "skipped", Value::integer(1));
  InstanceId noName = makeThing(m, h, "tmp", Value::integer(1));
  m.set(noName, "name", Value::unknown());
  ExportResult r = run(m.model, registry);
  ASSERT_EQ(r.errors, 0u);
  EXPECT_EQ(r.summary.resources, 1u);
  EXPECT_EQ(r.summary.undefined, 1u);
  EXPECT_TRUE(contains(r.text, "\"undefined\": true, \"value\": \"<<undefined>>\"")) << r.text;
  EXPECT_FALSE(contains(r.text, "skipped"));
}

TEST_F(ExportModelTest, ManagedFalseAndMapperIgnoreDropResourceAndEdges) {
  ResourceRegistry reg;
  ASSERT_FALSE(bool(reg.add("test::Thing", "host.name", "name",
                            {{"name", {}},
                             {"value",
                              [](MapperContext& ctx, InstanceId inst) {
                                const Value* v = ctx.attr(inst, "value");
                                if (v && v->kind == runtime::ValueKind::Int && v->i < 0)
                                  return FieldResult::ignore();
                                return FieldResult::ok(ctx.str("mapped"));
                              }}},
                            BaseFields{true, true})));
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  InstanceId ignored = makeThing(m, h, "ignored", Value::integer(-1));
  InstanceId unmanaged = makeThing(m, h, "unmanaged", Value::integer(1));
  m.set(unmanaged, "managed", Value::boolean(false));
  InstanceId kept = makeThing(m, h, "kept", Value::integer(1));
  m.set(kept, "requires", m.list({Value::instance(ignored), Value::instance(unmanaged)}));
  ExportResult r = run(m.model, reg);
  ASSERT_EQ(r.errors, 0u);
  EXPECT_EQ(r.summary.resources, 1u);
  EXPECT_TRUE(contains(r.text, "\"requires\": []")) << r.text;
  EXPECT_TRUE(contains(r.text, "\"value\": \"mapped\"")) << r.text;
  // Requirements existed but none is a resource: the reference's warning.
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].kind, DiagKind::ExportWarning);
  EXPECT_TRUE(contains(r.diags[0].message, "The resource test::Thing[h1,name=kept] had requirements before "
                                           "flattening, but not after flattening."))
      << r.diags[0].message;
}

TEST_F(ExportModelTest, RequiresKeepsOnlyResources) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  InstanceId g = m.make(group, {{"name", m.str("g")}, {"requires", m.list({})}});
  InstanceId a = makeThing(m, h, "a", Value::integer(1));
  InstanceId b = makeThing(m, h, "b", Value::integer(1));
  m.set(b, "requires", m.list({Value::instance(g), Value::instance(a), Value::instance(a)}));
  ExportResult r = run(m.model, registry);
  ASSERT_EQ(r.errors, 0u);
  EXPECT_TRUE(r.diags.empty());
  EXPECT_TRUE(contains(r.text, "\"requires\": [\"test::Thing[h1,name=a]\"]")) << r.text;
}

TEST_F(ExportModelTest, CycleIsAnExportError) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  InstanceId a = makeThing(m, h, "a", Value::integer(1));
  InstanceId b = makeThing(m, h, "b", Value::integer(1));
  InstanceId c = makeThing(m, h, "c", Value::integer(1));
  m.set(a, "requires", m.list({Value::instance(c)}));
  m.set(c, "requires", m.list({Value::instance(b)}));
  m.set(b, "requires", m.list({Value::instance(a)}));
  ExportResult r = run(m.model, registry);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_TRUE(r.text.empty());
  ASSERT_FALSE(r.diags.empty());
  EXPECT_EQ(r.diags[0].message,
            "dependency cycle between resources: test::Thing[h1,name=a] -> test::Thing[h1,name=c] -> "
            "test::Thing[h1,name=b] -> test::Thing[h1,name=a]");
}

TEST_F(ExportModelTest, DuplicateIdIsAnError) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  makeThing(m, h, "a", Value::integer(1));
  makeThing(m, h, "a", Value::integer(2));
  ExportResult r = run(m.model, registry);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_TRUE(contains(r.diags[0].message, "exists more than once")) << r.diags[0].message;
}

TEST_F(ExportModelTest, ResourceSets) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  InstanceId a = makeThing(m, h, "a", Value::integer(1));
  InstanceId b = makeThing(m, h, "b", Value::integer(1));
  m.make(resourceSet, {{"name", m.str("set-b")},
                       {"resources", m.list({Value::instance(b), Value::instance(a)})},
                       {"requires", m.list({})}});
  m.make(resourceSet, {{"name", m.str("empty")}, {"resources", m.list({})}, {"requires", m.list({})}});
  ExportResult r = run(m.model, registry);
  ASSERT_EQ(r.errors, 0u);
  EXPECT_TRUE(contains(r.text, "\"resource_sets\": {\n    \"empty\": [],\n    \"set-b\": "
                               "[\"test::Thing[h1,name=a]\", \"test::Thing[h1,name=b]\"]\n  },"))
      << r.text;

  m.make(resourceSet,
         {{"name", m.str("other")}, {"resources", m.list({Value::instance(a)})}, {"requires", m.list({})}});
  ExportResult twice = run(m.model, registry);
  EXPECT_EQ(twice.errors, 1u);
  EXPECT_TRUE(contains(twice.diags[0].message, "is in two resource sets")) << twice.diags[0].message;
}

TEST_F(ExportModelTest, AgentPathErrors) {
  TinyModel m(tp.program);
  InstanceId t = m.make(thing, {{"name", m.str("x")},
                                {"value", Value::integer(1)},
                                {"host", Value::null()},
                                {"requires", m.list({})},
                                {"managed", Value::boolean(true)},
                                {"send_event", Value::boolean(false)},
                                {"purged", Value::boolean(false)},
                                {"purge_on_delete", Value::boolean(false)}});
  (void)t;
  ExportResult r = run(m.model, registry);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_TRUE(contains(r.diags[0].message, "does not reach an entity at 'host'")) << r.diags[0].message;
}

TEST_F(ExportModelTest, EntityValuedFieldIsAnError) {
  TinyModel m(tp.program);
  InstanceId h = makeHost(m, "h1");
  makeThing(m, h, "a", Value::instance(h));
  ExportResult r = run(m.model, registry);
  EXPECT_EQ(r.errors, 1u);
  EXPECT_TRUE(contains(r.diags[0].message, "field 'value' holds an entity")) << r.diags[0].message;
}

const Mapper& stdMapper(const char* entity, const char* field) {
  const ResourceType* t = ResourceRegistry::standard().find(entity);
  for (const FieldSpec& f : t->fields)
    if (f.name == field) return f.mapper;
  static Mapper none;
  return none;
}

TEST(ExportStdMappersTest, FileHashWithPrefixAndSuffix) {
  TinyProgram tp;
  ir::EntityId content = tp.entity("std::Content", {}, {"value", "sorting_key"});
  ir::EntityId file =
      tp.entity("std::File", {}, {"content", "prefix_content", "suffix_content", "content_seperator"});
  TinyModel m(tp.program);
  InstanceId p1 = m.make(content, {{"value", m.str("second")}, {"sorting_key", m.str("b")}});
  InstanceId p2 = m.make(content, {{"value", m.str("zfirst")}, {"sorting_key", m.str("a")}});
  InstanceId s1 = m.make(content, {{"value", m.str("y")}, {"sorting_key", Value::null()}});
  InstanceId s2 = m.make(content, {{"value", m.str("x")}, {"sorting_key", Value::null()}});
  InstanceId f = m.make(file, {{"content", m.str("BODY")},
                               {"prefix_content", m.list({Value::instance(p1), Value::instance(p2)})},
                               {"suffix_content", m.list({Value::instance(s1), Value::instance(s2)})},
                               {"content_seperator", m.str(";")}});
  InstanceId plain = m.make(file, {{"content", m.str("just this")},
                                   {"prefix_content", m.list({})},
                                   {"suffix_content", m.list({})},
                                   {"content_seperator", m.str(";")}});
  runtime::ValueArena arena;
  FileStore files;
  MapperContext ctx(m.model, arena, files);
  const Mapper& hash = stdMapper("std::File", "hash");
  ASSERT_TRUE(bool(hash));
  FieldResult r = hash(ctx, f);
  ASSERT_EQ(r.kind, FieldResult::Ok);
  const std::string expected = "zfirst;second;;BODY;x;y;";
  EXPECT_EQ(r.value.str(), sha1Hex(expected));
  EXPECT_EQ(files.content(sha1Hex(expected)), expected);
  FieldResult r2 = hash(ctx, plain);
  EXPECT_EQ(r2.value.str(), sha1Hex("just this"));
  EXPECT_EQ(files.size(), 2u);

  InstanceId unknownPart = m.make(content, {{"value", Value::unknown()}, {"sorting_key", Value::null()}});
  InstanceId g = m.make(file, {{"content", m.str("c")},
                               {"prefix_content", m.list({Value::instance(unknownPart)})},
                               {"suffix_content", m.list({})},
                               {"content_seperator", m.str(";")}});
  EXPECT_TRUE(hash(ctx, g).value.isUnknown());
  EXPECT_EQ(files.size(), 2u);
}

TEST(ExportStdMappersTest, PermissionsIsIntOfMode) {
  TinyProgram tp;
  ir::EntityId file = tp.entity("std::File", {}, {"mode"});
  TinyModel m(tp.program);
  runtime::ValueArena arena;
  FileStore files;
  MapperContext ctx(m.model, arena, files);
  const Mapper& perm = stdMapper("std::File", "permissions");
  auto run = [&](Value mode) { return perm(ctx, m.make(file, {{"mode", mode}})); };
  EXPECT_EQ(run(Value::integer(644)).value.i, 644);
  EXPECT_EQ(run(Value::real(755.9)).value.i, 755);
  EXPECT_EQ(run(m.str(" 600")).value.i, 600);
  EXPECT_TRUE(run(Value::unknown()).value.isUnknown());
  EXPECT_EQ(run(m.str("rwx")).kind, FieldResult::Error);
  EXPECT_EQ(run(Value::null()).kind, FieldResult::Error);
}

TEST(ExportStdMappersTest, AgentConfigNeedsAutostart) {
  TinyProgram tp;
  ir::EntityId cfg = tp.entity("std::AgentConfig", {}, {"autostart"});
  TinyModel m(tp.program);
  runtime::ValueArena arena;
  FileStore files;
  MapperContext ctx(m.model, arena, files);
  const Mapper& autostart = stdMapper("std::AgentConfig", "autostart");
  EXPECT_EQ(autostart(ctx, m.make(cfg, {{"autostart", Value::boolean(true)}})).kind, FieldResult::Ok);
  EXPECT_EQ(autostart(ctx, m.make(cfg, {{"autostart", Value::boolean(false)}})).kind, FieldResult::Ignore);
  EXPECT_EQ(autostart(ctx, m.make(cfg, {{"autostart", Value::unknown()}})).kind, FieldResult::Ignore);
}

} // namespace
} // namespace inm::exporter

// The exporter's entry point: bind the resource registry to the program, collect resources
// (Collect.cpp), order them by id (duplicates are errors), flatten each instance's `requires` onto
// exported resources (others dropped, with the reference's warning when none remain), run the
// dependency managers, reject cycles, assign resource sets, then stream the artifact (ArtifactWriter.cpp).
// Invariant: nothing is written to the output when any export error was reported.
#include "exporter/Exporter.h"

#include "ExportState.h"
#include "exporter/Dependencies.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <thread>

namespace inm::exporter {

using runtime::InstanceId;
using runtime::Value;
using runtime::ValueKind;

namespace {

class StateView final : public DependencyView {
 public:
  explicit StateView(const ExportState& s) : s_(s) {}
  const runtime::Model& model() const override { return s_.model; }
  uint32_t size() const override { return uint32_t(s_.resources.size()); }
  llvm::StringRef typeName(uint32_t r) const override { return s_.typeOf(s_.resources[r]).entity; }
  InstanceId instance(uint32_t r) const override { return s_.resources[r].inst; }
  const Value* field(uint32_t r, llvm::StringRef name) const override { return s_.field(r, name); }
  llvm::StringRef id(uint32_t r) const override { return s_.resources[r].id; }
  llvm::StringRef agent(uint32_t r) const override { return s_.resources[r].agent; }
  void error(std::string message) const override { errors.push_back(std::move(message)); }
  mutable std::vector<std::string> errors;

 private:
  const ExportState& s_;
};

/// From this many resources on, sorting and building the graph use a second thread.
constexpr size_t kParallelMin = 4096;

/// Sort entry of one resource: the rank of its type's id prefix ("type["), then 16 bytes of its id from the
/// first byte where the ids of its type differ (big-endian, zero-padded), then the whole id. The first two
/// decide most comparisons without touching the id (ids of one type share a long prefix).
struct SortKey {
  uint32_t rank;
  uint32_t index;
  uint64_t bytes, moreBytes; ///< 16 bytes of the id from the first byte where the ids of its type differ
};

uint64_t bytesAt(llvm::StringRef s, size_t from) {
  uint64_t k = 0;
  for (size_t i = 0; i < 8; ++i) k = (k << 8) | (from + i < s.size() ? uint8_t(s[from + i]) : 0);
  return k;
}

/// Sorts resources by id, reports duplicate ids, fills byInstance. The resources are permuted in place (a
/// sorted copy held both arrays at once: ~10 MiB more at the peak of a 100k export).
void orderResources(ExportState& s, DiagnosticEngine& diags) {
  const auto& types = s.bound.registry().types();
  const uint32_t n = uint32_t(s.resources.size());
  // Ids of different types compare as their "type[" prefixes do ('[' never occurs in a type name).
  std::vector<uint32_t> typeRank(types.size());
  {
    std::vector<uint32_t> byName(types.size());
    std::iota(byName.begin(), byName.end(), 0);
    std::sort(byName.begin(), byName.end(),
              [&](uint32_t a, uint32_t b) { return types[a].entity + "[" < types[b].entity + "["; });
    for (uint32_t i = 0; i < byName.size(); ++i) typeRank[byName[i]] = i;
  }
  // Per type, the length of the prefix its ids share: the key's bytes start there.
  std::vector<size_t> common(types.size(), SIZE_MAX);
  std::vector<llvm::StringRef> firstId(types.size());
  for (const ExportedResource& r : s.resources) {
    size_t& lcp = common[r.type];
    if (lcp == SIZE_MAX) {
      firstId[r.type] = r.id;
      lcp = r.id.size();
      continue;
    }
    llvm::StringRef first = firstId[r.type];
    lcp = std::min(lcp, r.id.size());
    if (std::memcmp(first.data(), r.id.data(), lcp) == 0) continue;
    size_t i = 0;
    while (first[i] == r.id[i]) ++i;
    lcp = i;
  }
  std::vector<SortKey> keys(n);
  auto less = [&](const SortKey& a, const SortKey& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.bytes != b.bytes) return a.bytes < b.bytes;
    if (a.moreBytes != b.moreBytes) return a.moreBytes < b.moreBytes;
    int c = s.resources[a.index].id.compare(s.resources[b.index].id);
    return c != 0 ? c < 0 : a.index < b.index; // equal ids: model order (the first one is kept)
  };
  auto sortRange = [&](uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end; ++i) {
      const ExportedResource& r = s.resources[i];
      keys[i] = {typeRank[r.type], i, bytesAt(r.id, common[r.type]), bytesAt(r.id, common[r.type] + 8)};
    }
    std::sort(keys.begin() + begin, keys.begin() + end, less);
  };
  // A large list: each half sorted on its own thread, then merged (the keys are all distinct).
  const uint32_t half = n >= kParallelMin ? n / 2 : n;
  if (half < n) {
    std::thread helper([&] { sortRange(half, n); });
    sortRange(0, half);
    helper.join();
  } else {
    sortRange(0, n);
  }
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0, j = half, k = 0; k < n; ++k)
    order[k] = (j == n || (i < half && less(keys[i], keys[j]))) ? keys[i++].index : keys[j++].index;
  keys = std::vector<SortKey>();
  // Apply the permutation (position i receives resource order[i]) cycle by cycle.
  for (uint32_t i = 0; i < order.size(); ++i) {
    if (order[i] == i || order[i] == kNone) continue;
    ExportedResource held = s.resources[i];
    uint32_t at = i;
    while (order[at] != i) {
      uint32_t from = order[at];
      s.resources[at] = s.resources[from];
      order[at] = kNone;
      at = from;
    }
    s.resources[at] = held;
    order[at] = kNone;
  }
  // Drop duplicates (the first, in model order, is kept: the sort was stable).
  size_t kept = 0;
  for (size_t r = 0; r < s.resources.size(); ++r) {
    ExportedResource& res = s.resources[r];
    if (kept > 0 && s.resources[kept - 1].id == res.id) {
      const ExportedResource& first = s.resources[kept - 1];
      Diagnostic d = makeDiag(DiagKind::DuplicateResource, s.model.instance(res.inst).createdAt, res.id);
      d.note(makeDiag(DiagKind::FirstResourceHere, s.model.instance(first.inst).createdAt,
                      s.model.describe(first.inst)));
      diags.report(std::move(d));
      continue;
    }
    if (kept != r) s.resources[kept] = res;
    ++kept;
  }
  s.resources.setSize(kept);
  for (uint32_t r = 0; r < s.resources.size(); ++r) s.byInstance[s.resources[r].inst.index] = r;
}

/// Each element of `requires` that is an exported resource becomes an edge; the rest is dropped. Warnings
/// go to `warnings` (this may run on a helper thread).
void flattenRequires(const ExportState& s, Graph& graph, std::vector<Diagnostic>& warnings) {
  const ir::Program& program = s.model.program();
  const StringId requiresName = program.strings->lookup("requires");
  std::vector<int> slotOf(program.entities.size(), -2); // per entity: the slot of `requires`, -2 unknown yet
  // In instance order, which reads the model sequentially (resource order visits it at random); the
  // warnings are then put in resource order.
  std::vector<std::pair<uint32_t, Diagnostic>> found;
  for (uint32_t i = 0; i < s.byInstance.size(); ++i) {
    const uint32_t r = s.byInstance[i];
    if (r == kNone) continue;
    const InstanceId inst{i};
    const ir::EntityId entity = s.model.entityOf(inst);
    int& slot = slotOf[entity.index];
    if (slot == -2) slot = requiresName.valid() ? program.slotOf(entity, requiresName) : -1;
    if (slot < 0 || !s.model.isSet(inst, uint32_t(slot))) continue;
    const Value* req = &s.model.slot(inst, uint32_t(slot));
    llvm::ArrayRef<Value> items = req->kind == ValueKind::List ? req->items() : llvm::ArrayRef<Value>(*req);
    size_t initial = 0;
    for (const Value& v : items) {
      if (v.kind != ValueKind::Instance) continue;
      ++initial;
      uint32_t target = s.byInstance[v.instanceId().index];
      if (target != kNone) graph[r].push_back(target);
    }
    if (initial > 0 && graph[r].empty()) {
      std::string set;
      for (const Value& v : items) {
        if (v.kind != ValueKind::Instance) continue;
        if (!set.empty()) set += ", ";
        set += s.model.describe(v.instanceId());
      }
      found.emplace_back(
          r, makeDiag(DiagKind::ExportWarning, s.model.instance(inst).createdAt, s.resources[r].id, set));
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [r, d] : found) warnings.push_back(std::move(d));
}

/// The dependency managers' edges; their failures go to `errors`. On this thread: a manager may be Python.
std::vector<std::pair<uint32_t, uint32_t>> runDependencyManagers(ExportState& s,
                                                                 std::vector<Diagnostic>& errors) {
  StateView view(s);
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (const auto& [name, fn] : s.bound.registry().dependencyManagers()) {
    fn(view, edges);
    for (std::string& e : view.errors)
      errors.push_back(makeDiag(DiagKind::DependencyManagerFailed, SourceRange{}, name, e));
    view.errors.clear();
  }
  return edges;
}

/// The requires graph: flattened `requires` (on a helper thread for a large export) and the dependency
/// managers' edges (on this one), with the diagnostics of both in that order.
/// `meanwhile` runs on this thread too, after the managers (work that needs neither the graph nor
/// diagnostics).
Graph buildGraph(ExportState& s, DiagnosticEngine& diags, const std::function<void()>& meanwhile) {
  Graph graph(s.resources.size());
  std::vector<Diagnostic> warnings, errors;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  if (s.resources.size() >= kParallelMin) {
    std::thread helper([&] { flattenRequires(s, graph, warnings); });
    edges = runDependencyManagers(s, errors);
    meanwhile();
    helper.join();
  } else {
    flattenRequires(s, graph, warnings);
    edges = runDependencyManagers(s, errors);
    meanwhile();
  }
  for (auto* list : {&warnings, &errors})
    for (Diagnostic& d : *list) diags.report(std::move(d));
  for (auto [from, to] : edges)
    if (from < graph.size() && to < graph.size()) graph[from].push_back(to);
  return graph;
}

bool reportCycles(ExportState& s, const Graph& graph, DiagnosticEngine& diags) {
  std::vector<std::vector<uint32_t>> cycles = findCycles(graph);
  for (const auto& cycle : cycles) {
    std::string text;
    for (uint32_t r : cycle) text += s.resources[r].id.str() + " -> ";
    text += s.resources[cycle.front()].id;
    diags.error(DiagKind::ResourceCycle, s.model.instance(s.resources[cycle.front()].inst).createdAt, text);
  }
  return cycles.empty();
}

void assignResourceSets(ExportState& s, DiagnosticEngine& diags) {
  const ir::Program& program = s.model.program();
  ir::EntityId setEntity;
  for (uint32_t e = 0; e < program.entities.size(); ++e)
    if (program.entities[ir::EntityId{e}].fullName == "std::ResourceSet") setEntity = ir::EntityId{e};
  if (!setEntity.valid()) return;
  std::vector<const std::string*> setOf(s.resources.size(), nullptr);
  for (InstanceId inst : s.model.instancesOf(setEntity)) {
    const Value* name = s.model.get(inst, "name");
    const Value* members = s.model.get(inst, "resources");
    if (!name || name->kind != ValueKind::String) continue; // unknown name: the set cannot be exported
    auto [it, fresh] = s.sets.try_emplace(name->str().str());
    const std::string& setName = it->first;
    if (!members) continue;
    llvm::ArrayRef<Value> items =
        members->kind == ValueKind::List ? members->items() : llvm::ArrayRef<Value>(*members);
    for (const Value& v : items) {
      if (v.kind != ValueKind::Instance) continue;
      uint32_t r = s.byInstance[v.instanceId().index];
      if (r == kNone) continue;
      if (setOf[r] && *setOf[r] != setName) {
        diags.error(DiagKind::ResourceInTwoSets, s.model.instance(inst).createdAt, s.resources[r].id,
                    *setOf[r], setName);
        continue;
      }
      if (setOf[r]) continue;
      setOf[r] = &setName;
      it->second.push_back(r);
    }
  }
  for (auto& [name, members] : s.sets) std::sort(members.begin(), members.end());
}

} // namespace

ExportSummary exportModel(const runtime::Model& model, DiagnosticEngine& diags, const ExportOptions& opts,
                          llvm::raw_ostream& os) {
  ExportSummary summary;
  const unsigned errorsBefore = diags.errorCount();
  std::vector<std::string> conflicts;
  BoundRegistry bound(opts.registry ? *opts.registry : ResourceRegistry::standard(), model.program(),
                      &conflicts);
  for (const std::string& c : conflicts) { // "Entity: A B"
    size_t colon = c.find(": ");
    diags.error(DiagKind::AmbiguousResourceAncestor, SourceRange{}, c.substr(0, colon), c.substr(colon + 2));
  }

  // On the heap so that a process about to exit can leave it (opts.skipTeardown): freeing 100k resources'
  // texts and tables takes milliseconds and achieves nothing then.
  auto state = std::make_unique<ExportState>(model, bound);
  ExportState& s = *state;
  struct Leave {
    std::unique_ptr<ExportState>& state;
    bool skip;
    ~Leave() {
      if (skip) (void)state.release();
    }
  } leave{state, opts.skipTeardown};
  collectResources(s, diags);
  orderResources(s, diags);
  if (opts.phaseEnd) opts.phaseEnd("export collect");

  // Agents, sorted and deduplicated (while the requires are flattened). Resources of one type with the same
  // agent are adjacent (ids sort by type, then agent), so only the first of each run is taken before the
  // sort.
  auto listAgents = [&] {
    std::vector<llvm::StringRef> agents;
    for (size_t r = 0; r < s.resources.size(); ++r) {
      const ExportedResource& res = s.resources[r];
      if (res.undefined) ++summary.undefined;
      if (r > 0 && s.resources[r - 1].type == res.type && s.resources[r - 1].agent == res.agent) continue;
      agents.push_back(res.agent);
    }
    std::sort(agents.begin(), agents.end());
    agents.erase(std::unique(agents.begin(), agents.end()), agents.end());
    s.agents = std::move(agents);
  };
  Graph graph = buildGraph(s, diags, listAgents);
  normalizeGraph(graph);
  reportCycles(s, graph, diags);
  size_t edges = 0;
  for (const auto& adj : graph) edges += adj.size();
  s.deps.reserve(edges);
  for (uint32_t r = 0; r < s.resources.size(); ++r) {
    s.resources[r].firstDep = uint32_t(s.deps.size());
    s.resources[r].depCount = uint32_t(graph[r].size());
    s.deps.insert(s.deps.end(), graph[r].begin(), graph[r].end());
  }
  graph = Graph();
  assignResourceSets(s, diags);
  for (const ModuleCode& m : opts.code)
    for (const auto& file : m.files) s.files.add(file.second);
  summary.resources = s.resources.size();
  summary.files = s.files.size();
  summary.agents = s.agents.size();
  summary.resourceSets = s.sets.size();
  if (opts.phaseEnd) opts.phaseEnd("export graph");
  if (diags.errorCount() != errorsBefore) return summary;
  writeArtifact(s, opts, os);
  if (opts.phaseEnd) opts.phaseEnd("export write");
  return summary;
}

} // namespace inm::exporter

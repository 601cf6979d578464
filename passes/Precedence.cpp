// Pass 4: the relation precedence policy of project.yml (language.md §5.9). Each rule
// "<mod::A>.<rel> before <mod::B>.<rel>" is resolved to a pair of relation attributes in
// Program::precedence; unknown types, non-entities, missing or non-relation attributes are
// InvalidRelationPrecedenceRuleError, and a cycle among the rules is CycleInRelationPrecedencePolicyError.
// Invariant: Program::precedence holds only valid rules, in policy order.
#include "Passes.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>

namespace inm::passes {

using namespace ir;

namespace {

struct RuleEnd {
  std::string typeName, attrName;
};

bool parseEnd(llvm::StringRef text, RuleEnd& out) {
  text = text.trim();
  size_t dot = text.rfind('.');
  if (dot == llvm::StringRef::npos || dot == 0 || dot + 1 == text.size()) return false;
  out.typeName = text.substr(0, dot).str();
  out.attrName = text.substr(dot + 1).str();
  return true;
}

} // namespace

void resolvePrecedence(Program& p, DiagnosticEngine& diags) {
  if (!p.project || p.project->relationPrecedencePolicy.empty()) return;
  llvm::StringMap<EntityId> byName;
  for (uint32_t i = 0; i < p.entities.size(); ++i) byName[p.entities[EntityId{i}].fullName] = EntityId{i};
  llvm::StringSet<> typedefNames;
  for (const Typedef& t : p.typedefs.items()) typedefNames.insert(t.fullName);
  auto resolveEnd = [&](const RuleEnd& end, AttrId& out) -> bool {
    auto it = byName.find(end.typeName);
    if (it == byName.end() && typedefNames.contains(end.typeName)) {
      // A type that exists but is not an entity (a typedef) is named as such.
      diags.error(DiagKind::PrecedenceNonEntityType, SourceRange{}, end.typeName);
      return false;
    }
    if (it == byName.end()) {
      diags.error(DiagKind::PrecedenceUnknownType, SourceRange{}, end.typeName);
      return false;
    }
    StringId name = p.strings->lookup(end.attrName);
    int s = name.valid() ? p.slotOf(it->second, name) : -1;
    if (s < 0) {
      diags.error(DiagKind::PrecedenceUnknownAttribute, SourceRange{}, end.typeName, end.attrName);
      return false;
    }
    out = p.entities[it->second].slots[uint32_t(s)];
    if (!p.attrs[out].isRelation) {
      diags.error(DiagKind::PrecedenceNotRelation, SourceRange{}, end.typeName, end.attrName);
      return false;
    }
    return true;
  };
  std::vector<PrecedenceRule> rules;
  for (const std::string& raw : p.project->relationPrecedencePolicy) {
    llvm::StringRef text(raw);
    size_t pos = text.find(" before ");
    RuleEnd a, b;
    if (pos == llvm::StringRef::npos || !parseEnd(text.substr(0, pos), a) ||
        !parseEnd(text.substr(pos + 8), b)) {
      diags.error(DiagKind::InvalidRelationPrecedenceRule, SourceRange{}, raw);
      continue;
    }
    PrecedenceRule r;
    if (resolveEnd(a, r.before) && resolveEnd(b, r.after)) rules.push_back(r);
  }
  // Cycle detection over the attribute graph (iterative DFS).
  llvm::DenseMap<uint32_t, std::vector<uint32_t>> edges;
  for (const PrecedenceRule& r : rules) edges[r.before.index].push_back(r.after.index);
  llvm::DenseMap<uint32_t, uint8_t> state;
  auto attrText = [&](uint32_t a) {
    const Attribute& at = p.attrs[AttrId{a}];
    return p.entities[at.owner].fullName + "." + p.strings->str(at.name).str();
  };
  for (const PrecedenceRule& root : rules) {
    if (state.lookup(root.before.index)) continue;
    std::vector<std::pair<uint32_t, uint32_t>> stack{{root.before.index, 0}};
    state[root.before.index] = 1;
    while (!stack.empty()) {
      auto [node, next] = stack.back();
      const auto& out = edges.lookup(node);
      if (next < out.size()) {
        stack.back().second++;
        uint32_t to = out[next];
        uint8_t st = state.lookup(to);
        if (st == 1) {
          std::string cycle;
          bool in = false;
          for (auto& [n, _] : stack) {
            if (n == to) in = true;
            if (in) cycle += attrText(n) + " -> ";
          }
          cycle += attrText(to);
          diags.error(DiagKind::CycleInRelationPrecedencePolicy, SourceRange{}, cycle);
          return;
        }
        if (st == 0) {
          state[to] = 1;
          stack.push_back({to, 0});
        }
        continue;
      }
      state[node] = 2;
      stack.pop_back();
    }
  }
  p.precedence = std::move(rules);
}

} // namespace inm::passes

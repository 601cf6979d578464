// Folding released versions into one change set and computing BLOCKED (orchestrator.md §6.2, §6.5). Pure code
// over plain values; the scheduler calls it before taking its state lock. Invariant: every id in the newest
// version lands in exactly one of added/updated/unchanged, every managed id absent from it in deleted.
#include "plan/Plan.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace inm::plan {

namespace {

std::set<std::pair<std::string, std::string>> edgesOf(const std::string& id,
                                                      const std::vector<std::string>& reqs) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& r : reqs) out.emplace(id, r);
  return out;
}

/// A ManagedIntent map seen through ManagedLookup.
class MapLookup : public ManagedLookup {
 public:
  explicit MapLookup(const ManagedIntent& m) : m_(m) {}
  std::optional<ManagedRef> find(const std::string& id) const override {
    auto it = m_.find(id);
    if (it == m_.end()) return std::nullopt;
    return ref(it->second);
  }
  void forEach(const std::function<void(const std::string&, const ManagedRef&)>& fn) const override {
    for (const auto& [id, i] : m_) fn(id, ref(i));
  }

 private:
  static ManagedRef ref(const Intent& i) { return ManagedRef{&i.hash, i.undefined, &i.requireIds}; }
  const ManagedIntent& m_;
};

/// The fold; with `consume` the newest version's intents are moved out of `versions` (which is then
/// cleared), else copied and `versions` is left untouched.
ChangeSet fold(const ManagedLookup& managed, int managedVersion, std::vector<VersionSnapshot>& versions,
               bool consume) {
  ChangeSet cs;
  cs.fromVersion = managedVersion;
  cs.toVersion = managedVersion;
  if (versions.empty()) return cs;
  for (const auto& v : versions) cs.folded.push_back(v.version);
  cs.toVersion = versions.back().version;

  // A resource managed before that is missing from some folded version was deleted inside the batch: if the
  // newest version has it again, it comes back as NEW with fresh state (§17.5).
  std::unordered_set<std::string> missingSomewhere;
  for (size_t i = 0; i + 1 < versions.size(); ++i) {
    std::unordered_set<std::string> ids;
    for (const auto& r : versions[i].resources) ids.insert(r.id);
    managed.forEach([&](const std::string& id, const ManagedRef&) {
      if (!ids.count(id)) missingSomewhere.insert(id);
    });
    // A resource new in an earlier folded version and dropped later, then re-added, is still simply NEW.
  }

  auto& newest = versions.back().resources;
  std::unordered_set<std::string> newestIds;
  newestIds.reserve(newest.size());
  auto take = [&](Intent& r) -> Intent { return consume ? std::move(r) : Intent(r); };
  for (auto& r : newest) {
    newestIds.insert(r.id);
    auto old = managed.find(r.id);
    if (!old || missingSomewhere.count(r.id)) {
      for (const auto& e : edgesOf(r.id, r.requireIds)) cs.addedEdges.push_back(e);
      cs.added.push_back(take(r));
      continue;
    }
    auto before = edgesOf(r.id, *old->requireIds), after = edgesOf(r.id, r.requireIds);
    for (const auto& e : after)
      if (!before.count(e)) cs.addedEdges.push_back(e);
    for (const auto& e : before)
      if (!after.count(e)) cs.droppedEdges.push_back(e);
    if (*old->hash != r.hash || old->undefined != r.undefined)
      cs.updated.push_back(take(r));
    else
      cs.unchanged.push_back(take(r));
  }
  managed.forEach([&](const std::string& id, const ManagedRef& old) {
    if (newestIds.count(id)) return;
    cs.deleted.push_back(id);
    for (const auto& e : edgesOf(id, *old.requireIds)) cs.droppedEdges.push_back(e);
  });
  if (consume) versions.clear();
  auto byId = [](const Intent& a, const Intent& b) { return a.id < b.id; };
  std::sort(cs.added.begin(), cs.added.end(), byId);
  std::sort(cs.updated.begin(), cs.updated.end(), byId);
  std::sort(cs.unchanged.begin(), cs.unchanged.end(), byId);
  std::sort(cs.deleted.begin(), cs.deleted.end());
  std::sort(cs.addedEdges.begin(), cs.addedEdges.end());
  std::sort(cs.droppedEdges.begin(), cs.droppedEdges.end());
  return cs;
}

} // namespace

ChangeSet foldVersions(const ManagedIntent& managed, int managedVersion,
                       const std::vector<VersionSnapshot>& versions) {
  // Not consumed: the fold only reads `versions` then.
  return fold(MapLookup(managed), managedVersion, const_cast<std::vector<VersionSnapshot>&>(versions), false);
}

ChangeSet foldVersions(const ManagedLookup& managed, int managedVersion,
                       std::vector<VersionSnapshot>&& versions) {
  return fold(managed, managedVersion, versions, true);
}

ChangeSet foldVersions(const ManagedIntent& managed, int managedVersion,
                       std::vector<VersionSnapshot>&& versions) {
  return fold(MapLookup(managed), managedVersion, versions, true);
}

std::set<std::string> computeBlocked(const std::vector<const Intent*>& intents) {
  std::unordered_map<std::string, std::vector<const Intent*>> provides;
  std::unordered_set<std::string> known;
  for (const Intent* i : intents) known.insert(i->id);
  std::vector<const Intent*> work;
  std::set<std::string> blocked;
  for (const Intent* i : intents) {
    for (const auto& r : i->requireIds)
      if (known.count(r)) provides[r].push_back(i);
    if (i->undefined && blocked.insert(i->id).second) work.push_back(i);
  }
  while (!work.empty()) {
    const Intent* i = work.back();
    work.pop_back();
    auto it = provides.find(i->id);
    if (it == provides.end()) continue;
    for (const Intent* d : it->second)
      if (blocked.insert(d->id).second) work.push_back(d);
  }
  return blocked;
}

std::string ChangeSet::dump() const {
  std::ostringstream os;
  os << "fold " << fromVersion << " -> " << toVersion << " (versions";
  for (int v : folded) os << ' ' << v;
  os << ")\n";
  auto flag = [](const Intent& i) { return i.undefined ? " undefined" : ""; };
  for (const auto& i : added) os << "NEW       " << i.id << " hash=" << i.hash << flag(i) << '\n';
  for (const auto& i : updated) os << "UPDATED   " << i.id << " hash=" << i.hash << flag(i) << '\n';
  for (const auto& id : deleted) os << "DELETED   " << id << '\n';
  for (const auto& [a, b] : addedEdges) os << "EDGE+     " << a << " requires " << b << '\n';
  for (const auto& [a, b] : droppedEdges) os << "EDGE-     " << a << " requires " << b << '\n';
  os << "unchanged " << unchanged.size() << '\n';
  return os.str();
}

} // namespace inm::plan

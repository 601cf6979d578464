// The scheduler's planning step (orchestrator.md §6.2, §6.5): pure functions, no I/O. `foldVersions` turns
// the released versions newer than the managed one into one change set against the managed intent;
// `computeBlocked` finds the resources an undefined root blocks. Invariant: the result depends only on the
// arguments, and `ChangeSet::dump()` prints it in a stable order (sorted ids) so plans can be golden-tested.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace inm::plan {

/// One resource of one version as the scheduler needs it (a `resource` row).
struct Intent {
  std::string id;                                   ///< unversioned resource id
  std::string agent;                                ///< agent name
  std::string hash;                                 ///< attribute_hash (§3.6; excludes requires)
  bool undefined = false;                           ///< is_undefined
  std::vector<std::string> requireIds;              ///< direct requires, unversioned ids
  std::shared_ptr<const nlohmann::json> attributes; ///< all attributes (may be null in tests)
  /// All attributes as compact JSON text, when `attributes` is left unparsed (the scheduler's store: parsed
  /// only when a task is dispatched, so 100k idle intents cost their text, not a JSON tree each).
  std::shared_ptr<const std::string> attributesText;
  std::optional<bool> sendEvent, receiveEvents; ///< set when `attributes` is unparsed
};

/// A released version: every resource it holds.
struct VersionSnapshot {
  int version = 0;
  std::vector<Intent> resources;
};

/// The intent the scheduler manages now: id -> intent (empty when nothing is managed yet).
using ManagedIntent = std::map<std::string, Intent>;

/// The folded difference between the managed intent and the newest of the given versions.
struct ChangeSet {
  int fromVersion = 0;              ///< managed version before (0 = none)
  int toVersion = 0;                ///< newest folded version
  std::vector<int> folded;          ///< the versions folded, in order
  std::vector<Intent> added;        ///< NEW: unmanaged before, or deleted and re-added inside the batch
  std::vector<Intent> updated;      ///< UPDATED: hash or defined-ness changed
  std::vector<Intent> unchanged;    ///< present before and after with equal hash and defined-ness
  std::vector<std::string> deleted; ///< DELETED: managed before, absent from the newest version
  std::vector<std::pair<std::string, std::string>> addedEdges;   ///< (resource, requires) new edges
  std::vector<std::pair<std::string, std::string>> droppedEdges; ///< (resource, requires) edges gone

  /// A stable text form: one line per entry, sorted by id (for goldens and logs).
  std::string dump() const;
};

/// What the fold reads of one managed resource (pointers into the owner's records, valid during the fold).
struct ManagedRef {
  const std::string* hash = nullptr;
  bool undefined = false;
  const std::vector<std::string>* requireIds = nullptr;
};

/// The managed intent as the fold reads it: the scheduler answers from its own records, so a fold of 100k
/// resources does not first copy them into a ManagedIntent.
class ManagedLookup {
 public:
  virtual ~ManagedLookup() = default;
  virtual std::optional<ManagedRef> find(const std::string& id) const = 0;
  virtual void forEach(const std::function<void(const std::string& id, const ManagedRef&)>& fn) const = 0;
};

/// Folds `versions` (released, ascending, all newer than the managed version) into one change set against
/// `managed`. A resource absent from any folded version but present in the newest is NEW (fresh state), even
/// if its hash equals the managed one. Only the newest version's content becomes intent.
ChangeSet foldVersions(const ManagedIntent& managed, int managedVersion,
                       const std::vector<VersionSnapshot>& versions);
/// The same fold; the newest version's intents are moved into the change set (`versions` is left empty), so
/// a 100k-resource version is held once, not twice.
ChangeSet foldVersions(const ManagedLookup& managed, int managedVersion,
                       std::vector<VersionSnapshot>&& versions);
ChangeSet foldVersions(const ManagedIntent& managed, int managedVersion,
                       std::vector<VersionSnapshot>&& versions);

/// The blocked resources of a complete intent: every undefined resource and everything that transitively
/// requires one (requires pointing outside `intents` are ignored). Sorted ids.
std::set<std::string> computeBlocked(const std::vector<const Intent*>& intents);

} // namespace inm::plan

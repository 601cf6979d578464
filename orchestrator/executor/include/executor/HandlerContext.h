// The per-action state a handler reports into (orchestrator.md §8.3): resource state, change, changes,
// structured log lines, facts and a scratch store shared by read and create/update/delete. One context per
// action; the executor turns it into an ActionResult afterwards. Everything it holds is plain data (strings
// and JSON) so the Python bridge can expose it unchanged. Invariant: `change` is set at most once per action
// (a second setCreated/setUpdated/setPurged raises InvalidOperation) and a `non_compliant` state needs
// recorded changes.
#pragma once

#include "model/Vocabulary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace inm::executor {

using Json = nlohmann::json;

/// A resource as a handler sees it: its versioned id, its parsed type/agent and its attributes (all keys of
/// the stored resource but `id`, `version`, `requires`). Plain data: handlers read and (on the `current`
/// copy) write attributes by name.
struct Resource {
  std::string id;    ///< versioned id, e.g. "std::File[web1,path=/etc/motd],v=3"
  std::string type;  ///< "std::File"
  std::string agent; ///< "web1"
  int64_t version = 0;
  Json attributes = Json::object();

  /// Builds a resource from a versioned (or unversioned) id and its attributes; a malformed id is an
  /// InvalidOperation naming it.
  static Resource fromId(const std::string& versionedId, Json attributes);
  /// The id without its ",v=N" suffix: the key of state and of `@cache` entries.
  std::string unversionedId() const;
  /// Attribute `name`, or null when absent.
  const Json& get(const std::string& name) const;
  /// `purged` as a bool (false when absent).
  bool purged() const;
  /// `report_only` as a bool (false when absent).
  bool reportOnly() const;
};

/// The states a handler may end in (§8.3; `deploying`, `available`, … are scheduler states, never reported).
enum class ResourceState : uint8_t {
  Deployed,
  Failed,
  Skipped,
  SkippedForDependency,
  Unavailable,
  NonCompliant,
  Dry
};
/// The status `s` reports (model/DeployStatus.def) and its spelling.
model::DeployStatus deployStatus(ResourceState s);
const char* stateName(ResourceState s);
/// Parses a state name; nullopt when it is not one of the handler states.
std::optional<ResourceState> parseState(const std::string& name);

/// `nochange`, `created`, `updated`, `purged` (the action log's `change`).
/// `nochange`, `created`, `updated`, `purged`: model/Change.def.
using Change = model::Change;
/// The spelling of `c` (model::spelling, NUL-terminated).
const char* changeName(Change c);

/// One structured log line of an action, as stored in the action log (§15).
struct LogLine {
  std::string level; ///< "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"
  std::string msg;   ///< formatted: the template `%`-formatted with kwargs
  Json kwargs = Json::object();
  std::string timestamp; ///< ISO 8601 UTC with microseconds
  Json toJson() const;   ///< {"level","msg","args":[],"kwargs","timestamp"}
};

/// Raised by the context on a misuse that the reference reports as InvalidOperation.
class InvalidOperation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Formats a Python-style template with named arguments: `%(name)s`, `%(name)d`, `%(name)r`, `%(name)f`,
/// `%%`. A missing key or bad conversion leaves the template text as is and returns false through `ok`.
std::string formatPercent(const std::string& tmpl, const Json& kwargs, bool* ok = nullptr);

/// The context of one action (deploy, dry run or fact check) of one resource.
class HandlerContext {
 public:
  HandlerContext(std::string actionId, bool dryRun) : actionId_(std::move(actionId)), dryRun_(dryRun) {}

  /// Sets the final state; a non_compliant state without recorded changes raises InvalidOperation.
  void setResourceState(ResourceState s);
  /// Legacy setter taking a name: an unknown name sets `failed` with a warning line.
  void setStatus(const std::string& name);
  std::optional<ResourceState> status() const { return status_; }

  /// Record what the handler did; a second call of any of them raises InvalidOperation.
  void setCreated();
  void setUpdated();
  void setPurged();
  Change change() const { return change_; }
  bool changed() const { return change_ != Change::NoChange; }

  /// Records `{name: {current, desired}}`.
  void addChange(const std::string& name, Json desired, Json current = nullptr);
  /// Records several changes given as {name: {"current":…, "desired":…}} objects or [current, desired] pairs.
  void updateChanges(const Json& changes);
  /// The reference's `add_changes(**kv)`: the same forms as updateChanges.
  void addChanges(const Json& changes) { updateChanges(changes); }
  const Json& changes() const { return changes_; }

  /// Structured logging: `msg` is a template formatted with `kwargs` (`msg % kwargs`). Non-object kwargs are
  /// ignored with a warning line. `exception` adds kwarg `traceback` with `what`.
  void log(const std::string& level, const std::string& msg, Json kwargs = Json::object());
  void debug(const std::string& msg, Json kwargs = Json::object()) { log("DEBUG", msg, std::move(kwargs)); }
  void info(const std::string& msg, Json kwargs = Json::object()) { log("INFO", msg, std::move(kwargs)); }
  void warning(const std::string& msg, Json kwargs = Json::object()) {
    log("WARNING", msg, std::move(kwargs));
  }
  void error(const std::string& msg, Json kwargs = Json::object()) { log("ERROR", msg, std::move(kwargs)); }
  void critical(const std::string& msg, Json kwargs = Json::object()) {
    log("CRITICAL", msg, std::move(kwargs));
  }
  void exception(const std::string& msg, const std::string& traceback, Json kwargs = Json::object());
  const std::vector<LogLine>& logs() const { return logs_; }

  /// A fact reported after the action; `expires=false` facts never expire on the server.
  void setFact(const std::string& name, const std::string& value, bool expires = true);
  /// Facts as {name: {"value":…, "expires":…}}.
  const Json& facts() const { return facts_; }

  /// Scratch store shared by read_resource and create/update/delete within one action.
  void set(const std::string& key, Json value) { scratch_[key] = std::move(value); }
  const Json& get(const std::string& key) const;
  bool contains(const std::string& key) const { return scratch_.count(key) != 0; }

  bool isDryRun() const { return dryRun_; }
  const std::string& actionId() const { return actionId_; }

 private:
  std::string actionId_;
  bool dryRun_;
  std::optional<ResourceState> status_;
  Change change_ = Change::NoChange;
  Json changes_ = Json::object();
  Json facts_ = Json::object();
  std::vector<LogLine> logs_;
  std::map<std::string, Json> scratch_;
};

/// Now as the action log's timestamp text ("2026-11-24T01:02:03.123456+00:00").
std::string isoNow();

} // namespace inm::executor

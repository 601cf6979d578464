// The handler API (orchestrator.md §8): how an executor runs the code that enforces one resource. A handler
// is an object with the HandlerAPI methods; CRUDHandler implements `execute` with the §8.2 algorithm on top
// of read/create/update/delete; `deploy` adds the §6.5 dependency gate and the reload step. Handlers signal
// outcomes with the exceptions below (ResourcePurged, SkipResource, SkipResourceForDependencies), exactly
// like the reference's Python API, so the Python bridge can map its exceptions one to one; every exception is
// caught in this library and turned into a state. Invariant: `deploy`/`execute`/`checkFacts` never throw and
// always leave a state in the context.
#pragma once

#include "executor/Cache.h"
#include "executor/HandlerContext.h"
#include "executor/HostIo.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace inm::executor {

/// read_resource: the resource does not exist.
class ResourcePurged : public std::runtime_error {
 public:
  ResourcePurged() : std::runtime_error("resource purged") {}
};
/// The handler skips this resource (plain skip, retried on the deploy interval).
class SkipResource : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// The handler skips this resource because of its dependencies (`skipped_for_dependency`).
class SkipResourceForDependencies : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure of handler code written in another language (the Python bridge): reported like the reference
/// reports it — `exception` kwarg `<type>('<message>')` with the foreign traceback as the `traceback` kwarg.
class HandlerException : public std::runtime_error {
 public:
  HandlerException(std::string type, const std::string& message, std::string traceback)
      : std::runtime_error(message), type(std::move(type)), traceback(std::move(traceback)) {}
  std::string type;      ///< e.g. "Exception", "ValueError"
  std::string traceback; ///< the foreign traceback text
};

/// No provider of the resource's type could be made for it (none or several `available`, or one failed while
/// being made): as the reference's get_provider failure, the resource is `unavailable` and the log says
/// "Unable to find a handler for <id>" with this exception.
class NoProviderException : public HandlerException {
 public:
  using HandlerException::HandlerException;
};

/// Content addressed by sha1, provided by the executor host (the scheduler reads the `file` table).
class FileSource {
 public:
  virtual ~FileSource() = default;
  /// The bytes stored under `sha1hex`, or nullopt when the server has no such file. Blocking; may throw
  /// std::runtime_error when the host cannot answer (the action then fails with that message).
  virtual std::optional<std::string> getFile(const std::string& sha1hex) = 0;
  /// Offers content to the server's file store (the current content of a file that differs from the desired
  /// one, so diffs can show it). Fire and forget; the default drops it.
  virtual void putFile(const std::string& sha1hex, const std::string& content) {}
};

/// What the executor gives every handler instance: the agent it runs for, file access and the agent's cache.
struct HandlerServices {
  std::string agent;
  FileSource* files = nullptr;
  HandlerCache* cache = nullptr;
  HostIo* io = nullptr; ///< the agent's host (its URI); null = the executor's own host
};

/// Dependency states handed to `deploy` (§5.2 names: deployed, failed, skipped, …), keyed by unversioned id.
using DependencyStates = std::map<std::string, std::string>;

/// The interface every handler implements. A fresh instance serves one action; `close()` runs afterwards.
class HandlerAPI {
 public:
  virtual ~HandlerAPI() = default;

  /// Enforce (or, when `dryRun`, only compare) the desired state of `resource`.
  virtual void execute(HandlerContext& ctx, const Resource& resource, bool dryRun) = 0;
  /// Facts of the resource: pre, facts(), post; returns {name: value}. Never throws (failure => state
  /// failed).
  Json checkFacts(HandlerContext& ctx, const Resource& resource);
  /// Override to report facts; the returned object's entries become facts.
  virtual Json facts(HandlerContext& ctx, const Resource& resource) { return Json::object(); }
  /// Whether this handler reloads after a dependency changed (default false).
  virtual bool canReload() const { return false; }
  virtual void doReload(HandlerContext& ctx, const Resource& resource) {}
  /// Run before/after the work; `post` always runs and its exception is logged, not reported.
  virtual void pre(HandlerContext& ctx, const Resource& resource) {}
  virtual void post(HandlerContext& ctx, const Resource& resource) {}
  /// Called once after the action.
  virtual void close() {}

  /// The framework entry: dependency gate (§6.5; skipped for report_only), execute, then reload when
  /// `canReload()` and `dependencyChanged`. Never throws.
  void deploy(HandlerContext& ctx, const Resource& resource, const DependencyStates& dependencies,
              bool dependencyChanged = false);

  /// Set by the executor before the first call.
  void attach(const HandlerServices* services) { services_ = services; }
  const HandlerServices& services() const;
  /// The host this agent deploys on (services().io, or the local host when there is none).
  HostIo& io() const;
  /// Fetches a file by hash through the host and verifies its sha1; throws std::runtime_error naming the hash
  /// when it is missing or corrupt.
  std::string getFile(const std::string& sha1hex) const;

 private:
  const HandlerServices* services_ = nullptr;
};

/// The create/read/update/delete pattern for purgeable resources (§8.2).
class CRUDHandler : public HandlerAPI {
 public:
  /// Fill `current` (a copy of the desired resource with purged=false) from the real world; throw
  /// ResourcePurged when it does not exist.
  virtual void readResource(HandlerContext& ctx, Resource& current) = 0;
  virtual void createResource(HandlerContext& ctx, const Resource& desired) = 0;
  /// `changes` = {attr: {"current":…, "desired":…}}.
  virtual void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) = 0;
  virtual void deleteResource(HandlerContext& ctx, const Resource& desired) = 0;
  /// Default: every attribute of `desired` whose value differs in `current`.
  virtual Json calculateDiff(HandlerContext& ctx, const Resource& current, const Resource& desired);

  void execute(HandlerContext& ctx, const Resource& resource, bool dryRun) override;
};

/// Resource type -> handler factory. The last registration of a type wins (like `@provider`).
class HandlerRegistry {
 public:
  using Factory = std::function<std::unique_ptr<HandlerAPI>()>;
  void add(const std::string& resourceType, Factory factory) {
    factories_[resourceType] = std::move(factory);
  }
  /// A fresh handler for `resourceType`, or nullptr when none is registered.
  std::unique_ptr<HandlerAPI> create(const std::string& resourceType) const;
  bool has(const std::string& resourceType) const { return factories_.count(resourceType) != 0; }
  /// The factory registered for `resourceType` (empty when none).
  Factory factory(const std::string& resourceType) const {
    auto it = factories_.find(resourceType);
    return it == factories_.end() ? Factory() : it->second;
  }

 private:
  std::map<std::string, Factory> factories_;
};

/// Registers the std handlers (File, Directory, Symlink, testing::NullResource, AgentConfig, Package,
/// Service).
void registerStdHandlers(HandlerRegistry& registry);

/// sha1 of `bytes` as lower-case hex.
std::string sha1Hex(const std::string& bytes);

} // namespace inm::executor

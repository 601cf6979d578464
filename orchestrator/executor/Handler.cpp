// The framework side of the handler API (include/executor/Handler.h): the §6.5 dependency gate in `deploy`,
// the §8.2 CRUD algorithm, fact checks, the registry and verified file fetches. Every handler exception ends
// here: the signals become skipped / skipped_for_dependency / purged handling, anything else `failed` with an
// ERROR line whose kwarg `traceback` names the step, the exception type and its message.
#include "executor/Handler.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <typeinfo>
#include <vector>

namespace inm::executor {

namespace {

std::string currentExceptionType() {
  std::type_info* t = abi::__cxa_current_exception_type();
  if (!t) return "unknown exception";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t->name(), nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && name ? name.get() : t->name();
}

/// The traceback-like text of the exception being handled: where it happened, its type and its message.
std::string describeCurrentException(const std::string& step, const std::string& what) {
  return "Traceback (C++ handler):\n  in " + step + "\n" + currentExceptionType() + ": " + what;
}

/// Runs `fn`; a failure sets state failed and logs the error line (the shared catch-all of the framework).
template <typename Fn>
bool guarded(HandlerContext& ctx, const Resource& r, const std::string& step, Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const SkipResourceForDependencies& e) {
    ctx.setResourceState(ResourceState::SkippedForDependency);
    ctx.warning("Resource %(resource_id)s was skipped: %(reason)s",
                {{"resource_id", r.id}, {"reason", e.what()}});
  } catch (const SkipResource& e) {
    ctx.setResourceState(ResourceState::Skipped);
    ctx.warning("Resource %(resource_id)s was skipped: %(reason)s",
                {{"resource_id", r.id}, {"reason", e.what()}});
  } catch (const HostUnavailable& e) {
    ctx.setResourceState(ResourceState::Unavailable);
    ctx.error("Resource %(resource_id)s is unavailable: %(reason)s",
              {{"resource_id", r.id}, {"reason", e.what()}});
  } catch (const NoProviderException& e) {
    ctx.setResourceState(ResourceState::Unavailable);
    ctx.exception("Unable to find a handler for %(resource_id)s (exception: %(exception)s)", e.traceback,
                  {{"resource_id", r.id}, {"exception", e.type + "('" + e.what() + "')"}});
  } catch (const HandlerException& e) {
    ctx.setResourceState(ResourceState::Failed);
    ctx.exception("An error occurred during deployment of %(resource_id)s (exception: %(exception)s)",
                  e.traceback, {{"resource_id", r.id}, {"exception", e.type + "('" + e.what() + "')"}});
  } catch (const std::exception& e) {
    ctx.setResourceState(ResourceState::Failed);
    ctx.exception("An error occurred during deployment of %(resource_id)s (exception: %(exception)s)",
                  describeCurrentException(step, e.what()),
                  {{"resource_id", r.id}, {"exception", currentExceptionType() + "('" + e.what() + "')"}});
  } catch (...) {
    ctx.setResourceState(ResourceState::Failed);
    ctx.exception("An error occurred during deployment of %(resource_id)s (exception: %(exception)s)",
                  describeCurrentException(step, "(no message)"),
                  {{"resource_id", r.id}, {"exception", currentExceptionType()}});
  }
  return false;
}

void runPost(HandlerAPI& h, HandlerContext& ctx, const Resource& r) {
  try {
    h.post(ctx, r);
  } catch (const HandlerException& e) {
    ctx.exception("An error occurred after deployment of %(resource_id)s (exception: %(exception)s)",
                  e.traceback, {{"resource_id", r.id}, {"exception", e.type + "('" + e.what() + "')"}});
  } catch (const std::exception& e) {
    ctx.exception("An error occurred after deployment of %(resource_id)s (exception: %(exception)s)",
                  describeCurrentException("post", e.what()),
                  {{"resource_id", r.id}, {"exception", currentExceptionType() + "('" + e.what() + "')"}});
  } catch (...) {
    ctx.exception("An error occurred after deployment of %(resource_id)s",
                  describeCurrentException("post", ""), {{"resource_id", r.id}});
  }
}

} // namespace

void HandlerAPI::deploy(HandlerContext& ctx, const Resource& resource, const DependencyStates& dependencies,
                        bool dependencyChanged) {
  if (!resource.reportOnly()) {
    std::vector<std::string> undefinedDeps, staleDeps, failedDeps;
    for (const auto& [rid, state] : dependencies) {
      switch (model::dependencyGate(state)) {
      case model::DependencyGate::Ready: break;
      case model::DependencyGate::Undefined: undefinedDeps.push_back(rid); break;
      case model::DependencyGate::Stale: staleDeps.push_back(rid); break;
      case model::DependencyGate::Failed: failedDeps.push_back(rid); break;
      }
    }
    if (!undefinedDeps.empty() || !staleDeps.empty() || !failedDeps.empty()) {
      ctx.setResourceState(ResourceState::SkippedForDependency);
      if (!undefinedDeps.empty())
        ctx.warning("Resource %(resource)s skipped because a dependency is undefined: %(dependencies)s",
                    {{"resource", resource.id}, {"dependencies", undefinedDeps}});
      if (!staleDeps.empty())
        ctx.info(
            "Resource %(resource)s skipped because a dependency has a new desired state that is not deployed "
            "yet: %(dependencies)s",
            {{"resource", resource.id}, {"dependencies", staleDeps}});
      if (!failedDeps.empty())
        ctx.info("Resource %(resource)s skipped due to failed dependencies: %(failed)s",
                 {{"resource", resource.id}, {"failed", failedDeps}});
      return;
    }
  }
  guarded(ctx, resource, "execute", [&] { execute(ctx, resource, false); });
  if (!ctx.status()) ctx.setResourceState(ResourceState::Deployed);
  if (dependencyChanged && canReload()) {
    ctx.info("Reloading %(resource_id)s because of a change in a dependency", {{"resource_id", resource.id}});
    guarded(ctx, resource, "do_reload", [&] { doReload(ctx, resource); });
  }
}

Json HandlerAPI::checkFacts(HandlerContext& ctx, const Resource& resource) {
  Json result = Json::object();
  bool ok = guarded(ctx, resource, "facts", [&] {
    pre(ctx, resource);
    Json f = facts(ctx, resource);
    if (f.is_object()) result = std::move(f);
  });
  runPost(*this, ctx, resource);
  for (auto& [name, v] : ctx.facts().items()) result[name] = v["value"];
  if (ok && !ctx.status()) ctx.setResourceState(ResourceState::Deployed);
  return result;
}

const HandlerServices& HandlerAPI::services() const {
  static const HandlerServices kNone;
  return services_ ? *services_ : kNone;
}

HostIo& HandlerAPI::io() const {
  HostIo* io = services().io;
  return io ? *io : localIo();
}

std::string HandlerAPI::getFile(const std::string& sha1hex) const {
  const HandlerServices& s = services();
  if (!s.files) throw std::runtime_error("no file source: cannot fetch file " + sha1hex);
  std::optional<std::string> content = s.files->getFile(sha1hex);
  if (!content) throw std::runtime_error("file " + sha1hex + " is not stored on the server");
  std::string actual = sha1Hex(*content);
  if (actual != sha1hex)
    throw std::runtime_error("file " + sha1hex + " from the server is corrupt: its content hashes to " +
                             actual);
  return *content;
}

Json CRUDHandler::calculateDiff(HandlerContext& ctx, const Resource& current, const Resource& desired) {
  Json changes = Json::object();
  for (auto& [name, want] : desired.attributes.items()) {
    const Json& have = current.get(name);
    if (have != want) changes[name] = Json{{"current", have}, {"desired", want}};
  }
  return changes;
}

void CRUDHandler::execute(HandlerContext& ctx, const Resource& desired, bool dryRun) {
  std::string step = "pre"; // read by the catch in `guarded`: names where a failure happened
  guarded(ctx, desired, step, [&] {
    pre(ctx, desired);
    Resource current = desired;
    current.attributes["purged"] = false;
    Json changes = Json::object();
    try {
      ctx.debug("Calling read_resource");
      step = "read_resource";
      readResource(ctx, current);
      step = "calculate_diff";
      changes = calculateDiff(ctx, current, desired);
    } catch (const ResourcePurged&) {
      if (!desired.purged()) changes["purged"] = Json{{"current", true}, {"desired", false}};
    }
    ctx.updateChanges(changes);

    if (desired.reportOnly()) {
      ctx.setResourceState(changes.empty() ? ResourceState::Deployed : ResourceState::NonCompliant);
      return;
    }
    if (dryRun) {
      ctx.setResourceState(ResourceState::Dry);
      return;
    }
    if (changes.contains("purged")) {
      if (desired.purged()) {
        ctx.debug("Calling delete_resource");
        step = "delete_resource";
        deleteResource(ctx, desired);
      } else {
        ctx.debug("Calling create_resource");
        step = "create_resource";
        createResource(ctx, desired);
      }
    } else if (!changes.empty() && !desired.purged()) {
      ctx.debug("Calling update_resource", {{"changes", changes}});
      step = "update_resource";
      updateResource(ctx, changes, desired);
    }
    if (!ctx.status()) ctx.setResourceState(ResourceState::Deployed);
  });
  runPost(*this, ctx, desired);
}

std::unique_ptr<HandlerAPI> HandlerRegistry::create(const std::string& resourceType) const {
  auto it = factories_.find(resourceType);
  return it == factories_.end() ? nullptr : it->second();
}

std::string sha1Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha1(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    unsigned char b = digest[i];
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

} // namespace inm::executor

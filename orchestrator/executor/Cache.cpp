// HandlerCache (include/executor/Cache.h): a map of shared futures under one mutex. A missing key gets a
// promise inserted before the computation starts, so concurrent callers find it and wait on its future
// instead of computing again. Evicted entries are moved out under the lock and their callOnDelete runs after
// unlocking.
#include "executor/Cache.h"

#include "executor/HandlerContext.h"

#include <chrono>
#include <vector>

namespace inm::executor {

namespace {
constexpr double kDefaultSliding = 60.0;

void runOnDelete(std::vector<std::pair<CacheOptions, std::shared_future<std::any>>>& evicted) {
  for (auto& [opts, fut] : evicted) {
    if (!opts.callOnDelete) continue;
    try {
      opts.callOnDelete(fut.get());
    } catch (...) {
      // A failing on-delete callback must not break eviction of the others.
    }
  }
}
} // namespace

double HandlerCache::steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string HandlerCache::key(const std::string& method, std::initializer_list<std::string> args) {
  std::string k = method + "(";
  bool first = true;
  for (const std::string& a : args) {
    if (!first) k += ", ";
    first = false;
    k += a;
  }
  return k + ")";
}

std::string HandlerCache::keyOf(const Resource& resource) { return resource.unversionedId(); }

bool HandlerCache::expired(const Entry& e, double now) const {
  if (!e.ready) return false;
  const CacheOptions& o = e.options;
  if (!o.evictAfterCreation && !o.evictAfterLastAccess) return now >= e.lastAccess + kDefaultSliding;
  if (o.evictAfterCreation && now >= e.created + *o.evictAfterCreation) return true;
  if (o.evictAfterLastAccess && now >= e.lastAccess + *o.evictAfterLastAccess) return true;
  return false;
}

std::any HandlerCache::get(const std::string& key, const CacheOptions& options,
                           const std::function<std::any()>& compute) {
  std::vector<std::pair<CacheOptions, std::shared_future<std::any>>> evicted;
  std::shared_future<std::any> existing;
  std::promise<std::any> promise;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    double now = clock_();
    auto it = entries_.find(key);
    if (it != entries_.end() && expired(it->second, now)) {
      evicted.emplace_back(std::move(it->second.options), std::move(it->second.value));
      entries_.erase(it);
      it = entries_.end();
    }
    if (it != entries_.end()) {
      it->second.lastAccess = now;
      existing = it->second.value;
    } else {
      Entry e;
      e.value = promise.get_future().share();
      e.options = options;
      entries_.emplace(key, std::move(e));
    }
  }
  runOnDelete(evicted);
  if (existing.valid()) return existing.get(); // rethrows the computation's exception, if any

  std::any value;
  try {
    value = compute();
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(key);
    throw;
  }
  promise.set_value(value);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    if (!options.cacheNone && !value.has_value()) {
      entries_.erase(it);
    } else {
      it->second.ready = true;
      it->second.created = it->second.lastAccess = clock_();
    }
  }
  return value;
}

size_t HandlerCache::cleanup() {
  std::vector<std::pair<CacheOptions, std::shared_future<std::any>>> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    double now = clock_();
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (expired(it->second, now)) {
        evicted.emplace_back(std::move(it->second.options), std::move(it->second.value));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  runOnDelete(evicted);
  return evicted.size();
}

void HandlerCache::clear() {
  std::vector<std::pair<CacheOptions, std::shared_future<std::any>>> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [k, e] : entries_)
      if (e.ready) evicted.emplace_back(std::move(e.options), std::move(e.value));
    entries_.clear();
  }
  runOnDelete(evicted);
}

size_t HandlerCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

} // namespace inm::executor

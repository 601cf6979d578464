// The `@cache` facility of the handler API (orchestrator.md §8.4) as a C++ object: one HandlerCache per
// executor
// (= agent + code version), shared by every action of that agent. A cached method builds its key with `key()`
// (method name + argument texts; a resource argument contributes its unversioned id via `keyOf`) and calls
// `get`. Retention: fixed `evictAfterCreation`, sliding `evictAfterLastAccess`, the shorter wins, neither =>
// 60 s after the last access. Invariants: one computation per key even under concurrent callers (the others
// wait for it); `callOnDelete` runs exactly once per stored value, on eviction or at `clear()`/destruction
// (executor stop), never under the cache's lock. The clock is injectable for tests.
#pragma once

#include <any>
#include <cstddef>
#include <functional>
#include <future>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace inm::executor {

struct Resource;

/// Retention and callbacks of one cached method.
struct CacheOptions {
  std::optional<double> evictAfterCreation;          ///< seconds after the value was computed
  std::optional<double> evictAfterLastAccess;        ///< seconds after the last `get`
  bool cacheNone = true;                             ///< false: an empty std::any result is not stored
  std::function<void(const std::any&)> callOnDelete; ///< runs once when the value leaves the cache
};

/// A keyed, thread-safe value cache with time-based eviction.
class HandlerCache {
 public:
  using Clock = std::function<double()>; ///< monotonic seconds
  /// The default clock: std::chrono::steady_clock in seconds.
  static double steadySeconds();

  explicit HandlerCache(Clock clock = &HandlerCache::steadySeconds) : clock_(std::move(clock)) {}
  ~HandlerCache() { clear(); }
  HandlerCache(const HandlerCache&) = delete;
  HandlerCache& operator=(const HandlerCache&) = delete;

  /// The key of a call: `method(arg1, arg2, …)`.
  static std::string key(const std::string& method, std::initializer_list<std::string> args);
  /// A resource's contribution to a key: its unversioned id (so all versions share the entry).
  static std::string keyOf(const Resource& resource);

  /// The cached value of `key`, computing it with `compute` when absent or expired. Concurrent callers of the
  /// same key wait for one computation. An exception from `compute` propagates to every waiter and stores
  /// nothing.
  std::any get(const std::string& key, const CacheOptions& options, const std::function<std::any()>& compute);

  /// Typed convenience around `get`.
  template <typename T>
  T getAs(const std::string& key, const CacheOptions& options, const std::function<T()>& compute) {
    return std::any_cast<T>(get(key, options, [&] { return std::any(compute()); }));
  }

  /// Evicts every expired entry (called before each action and on an idle tick); returns how many left.
  size_t cleanup();
  /// Evicts everything (executor stop), calling each `callOnDelete` once.
  void clear();
  /// Entries currently stored (including ones being computed).
  size_t size() const;

 private:
  struct Entry {
    std::shared_future<std::any> value;
    bool ready = false;
    double created = 0;
    double lastAccess = 0;
    CacheOptions options;
  };
  bool expired(const Entry& e, double now) const;

  Clock clock_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

} // namespace inm::executor

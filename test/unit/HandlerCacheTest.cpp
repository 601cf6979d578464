// The handler `@cache` (orchestrator/executor/include/executor/Cache.h) with an injected clock: keys, fixed
// and sliding expiry, the 60 s default, call_on_delete exactly once, cache_none and one computation per key.
#include "executor/Cache.h"
#include "executor/HandlerContext.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace inm::executor;

namespace {
struct FakeClock {
  double now = 1000;
  HandlerCache::Clock fn() {
    return [this] { return now; };
  }
};
} // namespace

TEST(HandlerCache, KeyUsesUnversionedResourceId) {
  Resource v1 = Resource::fromId("std::File[h,path=/a],v=1", Json::object());
  Resource v2 = Resource::fromId("std::File[h,path=/a],v=2", Json::object());
  EXPECT_EQ(HandlerCache::key("conn", {HandlerCache::keyOf(v1), "7"}),
            HandlerCache::key("conn", {HandlerCache::keyOf(v2), "7"}));
  EXPECT_EQ(HandlerCache::key("conn", {"x", "7"}), "conn(x, 7)");
  EXPECT_NE(HandlerCache::key("conn", {"x"}), HandlerCache::key("other", {"x"}));
}

TEST(HandlerCache, DefaultIsSixtySecondsAfterLastAccess) {
  FakeClock clock;
  HandlerCache cache(clock.fn());
  int computed = 0;
  auto f = [&] { return ++computed; };
  EXPECT_EQ(cache.getAs<int>("k", {}, f), 1);
  clock.now += 50;
  EXPECT_EQ(cache.getAs<int>("k", {}, f), 1); // refreshes last access
  clock.now += 50;
  EXPECT_EQ(cache.getAs<int>("k", {}, f), 1);
  clock.now += 61;
  EXPECT_EQ(cache.getAs<int>("k", {}, f), 2);
}

TEST(HandlerCache, EvictAfterCreationIsFixed) {
  FakeClock clock;
  HandlerCache cache(clock.fn());
  int computed = 0;
  CacheOptions o;
  o.evictAfterCreation = 10;
  auto f = [&] { return ++computed; };
  cache.getAs<int>("k", o, f);
  clock.now += 6;
  cache.getAs<int>("k", o, f);
  clock.now += 6; // 12 s after creation though accessed 6 s ago
  EXPECT_EQ(cache.getAs<int>("k", o, f), 2);
}

TEST(HandlerCache, ShorterRetentionWins) {
  FakeClock clock;
  HandlerCache cache(clock.fn());
  CacheOptions o;
  o.evictAfterCreation = 100;
  o.evictAfterLastAccess = 5;
  int computed = 0;
  auto f = [&] { return ++computed; };
  cache.getAs<int>("k", o, f);
  clock.now += 6;
  EXPECT_EQ(cache.getAs<int>("k", o, f), 2);
}

TEST(HandlerCache, CallOnDeleteOnceOnEvictionAndOnClear) {
  FakeClock clock;
  std::vector<int> deleted;
  {
    HandlerCache cache(clock.fn());
    CacheOptions o;
    o.evictAfterLastAccess = 5;
    o.callOnDelete = [&](const std::any& v) { deleted.push_back(std::any_cast<int>(v)); };
    cache.getAs<int>("a", o, [] { return 1; });
    cache.getAs<int>("b", o, [] { return 2; });
    clock.now += 3;
    cache.getAs<int>("b", o, [] { return 99; }); // b stays fresh
    clock.now += 3;
    EXPECT_EQ(cache.cleanup(), 1u);
    EXPECT_EQ(deleted, std::vector<int>{1});
    EXPECT_EQ(cache.cleanup(), 0u);
    EXPECT_EQ(cache.size(), 1u);
  } // executor stop: b deleted once
  EXPECT_EQ(deleted, (std::vector<int>{1, 2}));
}

TEST(HandlerCache, CacheNone) {
  FakeClock clock;
  HandlerCache cache(clock.fn());
  int computed = 0;
  CacheOptions o;
  o.cacheNone = false;
  cache.get("k", o, [&] {
    ++computed;
    return std::any();
  });
  cache.get("k", o, [&] {
    ++computed;
    return std::any();
  });
  EXPECT_EQ(computed, 2);
  CacheOptions keep;
  cache.get("n", keep, [&] {
    ++computed;
    return std::any();
  });
  cache.get("n", keep, [&] {
    ++computed;
    return std::any();
  });
  EXPECT_EQ(computed, 3);
}

TEST(HandlerCache, ExceptionStoresNothing) {
  HandlerCache cache;
  EXPECT_THROW(cache.get("k", {}, []() -> std::any { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.getAs<int>("k", {}, [] { return 4; }), 4);
}

TEST(HandlerCache, OneComputationPerKeyUnderConcurrency) {
  HandlerCache cache;
  std::atomic<int> computed{0};
  std::vector<std::thread> threads;
  std::vector<int> results(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      results[i] = cache.getAs<int>("slow", {}, [&] {
        ++computed;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return 42;
      });
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(computed.load(), 1);
  for (int r : results) EXPECT_EQ(r, 42);
}

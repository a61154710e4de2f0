// exec::LayerTimesCache (issue 19): a sweep's points that differ only in parallel.* values
// share one single-device run. Each key is computed once, whichever thread asks first; the
// others get the same times; a failure reaches every caller of its key.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "exec/cluster_step.h"

using fusim::exec::LayerTimesCache;
using fusim::parallel::LayerTimes;

namespace {
LayerTimesCache::Times times_of(fusim::Tick forward) {
  LayerTimes t;
  t.forward = forward;
  return {t, t};
}
}  // namespace

TEST_CASE("layer times cache: one computation per key, shared by every caller") {
  LayerTimesCache cache;
  int calls = 0;
  auto compute = [&](fusim::Tick f) {
    return [&calls, f] {
      ++calls;
      return times_of(f);
    };
  };
  const auto a = cache.get("a", compute(7));
  const auto again = cache.get("a", compute(99));  // not run: "a" is known
  const auto b = cache.get("b", compute(11));
  CHECK(calls == 2);
  CHECK(cache.computed() == 2);
  CHECK(a.get() == again.get());  // the same stored times
  REQUIRE(a->size() == 2);
  CHECK((*a)[1].forward == 7);
  CHECK((*b)[0].forward == 11);
}

TEST_CASE("layer times cache: threads asking for one key at once compute it once") {
  LayerTimesCache cache;
  std::atomic<int> calls{0};
  std::vector<std::thread> threads;
  std::vector<fusim::Tick> seen(8, 0);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      const auto t = cache.get("same", [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others arrive meanwhile
        return times_of(5);
      });
      seen[std::size_t(i)] = (*t)[0].forward;
    });
  for (auto& t : threads) t.join();
  CHECK(calls == 1);
  for (fusim::Tick f : seen) CHECK(f == 5);
}

TEST_CASE("layer times cache: a failed computation rethrows in each caller of its key") {
  LayerTimesCache cache;
  int calls = 0;
  auto fail = [&]() -> LayerTimesCache::Times {
    ++calls;
    throw std::runtime_error("engine failed");
  };
  CHECK_THROWS_WITH(cache.get("k", fail), "engine failed");
  CHECK_THROWS_WITH(cache.get("k", fail), "engine failed");
  CHECK(calls == 1);
}

// core/parallel_for.h: every index once, `done` one call at a time, the first exception
// rethrown and the rest not started.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "core/parallel_for.h"

using namespace fusim;

TEST_CASE("parallel_for: each index once, done serialized, results by index") {
  std::vector<std::size_t> order(200);
  std::iota(order.rbegin(), order.rend(), 0);  // 199 .. 0
  for (int threads : {1, 2, 4}) {
    INFO(threads << " threads");
    std::vector<std::atomic<int>> runs(order.size());
    std::vector<long> square(order.size(), -1);
    int done = 0;  // unguarded: `done` calls must not overlap
    std::atomic<int> inside{0};
    bool overlapped = false;
    parallel_for(
        order, threads,
        [&](std::size_t i) {
          ++runs[i];
          square[i] = long(i * i);
        },
        [&](std::size_t) {
          if (++inside != 1) overlapped = true;
          std::this_thread::sleep_for(std::chrono::microseconds(20));
          ++done;
          --inside;
        });
    CHECK_FALSE(overlapped);
    CHECK(done == 200);
    for (std::size_t i = 0; i < order.size(); ++i) {
      CHECK(runs[i] == 1);
      CHECK(square[i] == long(i * i));
    }
  }
}

TEST_CASE("parallel_for: one thread runs the order as given") {
  const std::vector<std::size_t> order{3, 0, 2, 1};
  std::vector<std::size_t> seen;
  parallel_for(order, 1, [&](std::size_t i) { seen.push_back(i); });
  CHECK(seen == order);
}

TEST_CASE("parallel_for: the first exception is rethrown and no later job starts") {
  std::vector<std::size_t> order(1000);
  std::iota(order.begin(), order.end(), 0);
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    std::atomic<int> started{0};
    // Jobs of 1 ms: once job 5 has thrown, a thread finishes the job it holds and takes
    // no other; without the stop every one of the 1000 would run.
    CHECK_THROWS_WITH(parallel_for(order, threads,
                                   [&](std::size_t i) {
                                     ++started;
                                     if (i == 5) throw std::runtime_error("job 5 failed");
                                     std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                   }),
                      "job 5 failed");
    if (threads == 1)
      CHECK(started == 6);  // 0 .. 5 in order
    else
      CHECK(started < 50);
  }
}

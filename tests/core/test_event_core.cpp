// Event ordering, the idle-off clock, the watchdog and the stats printers.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/clocked.h"
#include "core/event_queue.h"
#include "core/stats.h"
#include "core/watchdog.h"

using namespace fusim;

TEST_CASE("events run by time, then named priority, then insertion order") {
  EventQueue q;
  std::string order;
  q.schedule(2000, Priority::Compute, [&] { order += "c2 "; });
  q.schedule(1000, Priority::Stats, [&] { order += "s1 "; });
  q.schedule(1000, Priority::Compute, [&] { order += "c1a "; });
  q.schedule(1000, Priority::Response, [&] { order += "r1 "; });
  q.schedule(1000, Priority::Compute, [&] { order += "c1b "; });
  q.run();
  CHECK(order == "r1 c1a c1b s1 c2 ");
  CHECK(q.now() == 2000);
  CHECK(q.executed() == 5);
}

TEST_CASE("a clocked component ticks only while it has work") {
  EventQueue q;
  int work = 3;
  std::vector<Tick> ticks;
  ClockedTicker clock(q, Clock(1000), Priority::Memory, [&](Tick now) {
    ticks.push_back(now);
    return --work > 0;
  });
  clock.wake();
  clock.wake();  // already running: no second chain of ticks
  q.run();
  CHECK(ticks == std::vector<Tick>{0, 1000, 2000});
  CHECK_FALSE(clock.running());
  // Work arriving at 5.5 ns wakes it at the next edge, 6 ns; nothing ticks in between.
  q.schedule(5500, Priority::Compute, [&] {
    work = 1;
    clock.wake();
  });
  q.run();
  CHECK(ticks == std::vector<Tick>{0, 1000, 2000, 6000});
  CHECK(clock.cycles_ticked() == 4);
  CHECK(q.executed() == 5);  // 4 ticks + the arrival; no idle cycles simulated
}

TEST_CASE("the watchdog dumps every component when the queue empties with work left") {
  EventQueue q;
  bool lost_response = true;
  Watchdog w;
  w.watch(
      "dram", [&] { return lost_response; }, [] { return "bank 3: read 0x40 in flight"; });
  w.watch(
      "core0", [] { return false; }, [] { return "retired 12 ops"; });
  q.schedule(700, Priority::Compute, [] {});
  try {
    w.run_checked(q);
    FAIL("no stall reported");
  } catch (const SimulationStall& e) {
    CHECK(std::string(e.what()) ==
          "watchdog: event queue empty at 700 ps with work outstanding in: dram\n"
          "== dram (busy)\nbank 3: read 0x40 in flight\n"
          "== core0 (idle)\nretired 12 ops\n");
  }
  lost_response = false;
  CHECK_NOTHROW(w.check(q));
  // Stopping at a time limit with events left is not a stall.
  q.schedule(2000, Priority::Compute, [] {});
  lost_response = true;
  CHECK_NOTHROW(w.run_checked(q, 1000));
}

TEST_CASE("stats trees subtract and print as tables and JSON") {
  auto make = [](std::uint64_t hits, std::uint64_t core1_hits) {
    StatsNode root{"caches", {}, {}};
    StatsNode& l1 = root.child({"L1", {}, {}});
    l1.add("hits", hits).add("misses", 10);
    l1.child({"core0", {{"hits", hits - core1_hits}}, {}});
    l1.child({"core1", {{"hits", core1_hits}}, {}});
    root.child({"memory", {{"reads", 10}}, {}});
    return root;
  };
  StatsNode steady = make(100, 40) - make(30, 10);
  CHECK(steady.children[0].get("hits") == 70);
  CHECK(steady.children[0].get("misses") == 0);
  CHECK(steady.children[0].children[1].get("hits") == 30);
  nlohmann::json j = stats_to_json(steady);
  CHECK(j.dump() ==
        R"({"children":[{"children":[{"hits":40,"name":"core0"},{"hits":30,"name":"core1"}],)"
        R"("hits":70,"misses":0,"name":"L1"},{"name":"memory","reads":0}],"name":"caches"})");
  CHECK(stats_to_table(steady, "part").to_csv() ==
        "part,hits,misses,reads\nL1,70,0,-\nL1/core0,40,-,-\nL1/core1,30,-,-\nmemory,-,-,0\n");
  CHECK(format_ratio(1, 3) == "0.333");
  CHECK(format_ratio(1, 0) == "-");
}

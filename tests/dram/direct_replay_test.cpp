// The direct replay (DirectReplay, no event per arrival, retry or wake-up)
// against the event-driven one: on every preset, with saturating and sparse traces, reads
// and writes, every scheduler and row policy, each channel must issue the same commands at
// the same cycles, and every statistic (latency histograms, so each request's completion
// tick; refreshes settled at the end; bank open time up to the final tick) must be equal.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "mem/dram/address_mapping.h"
#include "replay_compare.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

TEST_CASE("direct replay issues the event-driven replay's commands, channel by channel") {
  struct Case {
    TracePattern pattern;
    Cycle interval;
    std::uint64_t writes;
  };
  // Saturating (one request a cycle: the feeder waits for retries), sparse (idle channels
  // catch up on refreshes), strided (one bank group), write-heavy (write drain turns).
  const Case cases[] = {{TracePattern::Random, 1, 1},
                        {TracePattern::Stream, 1, 1},
                        {TracePattern::Strided, 2, 1},
                        {TracePattern::Random, 40, 1},
                        {TracePattern::Random, 1, 3}};
  std::size_t compared = 0;
  for (const char* name : kPresets) {
    for (const char* scheduler : {"fcfs", "frfcfs", "frfcfs-cap", "stream-aware", "cads"}) {
      for (const RowPolicy policy : {RowPolicy::Open, RowPolicy::Closed, RowPolicy::OpenTimeout}) {
        for (const Case& c : cases) {
          DramSpec spec = preset(name);
          spec.ctrl.scheduler = scheduler;
          spec.ctrl.row_policy = policy;
          spec.ctrl.row_timeout = 50;
          TraceGenOptions o;
          o.pattern = c.pattern;
          o.reads = 2;
          o.writes = c.writes;
          o.count = 1500;
          o.interval = c.interval;
          o.seed = 7;
          o.stride = 8192 + 64;
          o.footprint = std::uint64_t{1} << 26;
          const auto trace = generate_trace(o);
          const Replayed events = replay(spec, trace, ReplayDriver::Events);
          const Replayed direct = replay(spec, trace, ReplayDriver::Direct);
          require_same(
              events, direct,
              fmt::format("{} {} {} pattern {} interval {} writes {}", name, scheduler,
                          to_string(policy), static_cast<int>(c.pattern), c.interval, c.writes));
          REQUIRE(direct.result.stats.requests() == trace.size());
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 5 * 5 * 3 * 5);  // presets x schedulers x row policies x cases
}

// Blocks of many atoms: a 4 KiB block is 64 atoms on DDR4's single channel (more than its
// 32-entry queues: admitted whole once the queue is empty) and spreads over the HBM
// pseudo-channels; 256 B blocks need room in several channels at once.
TEST_CASE("direct replay of multi-atom blocks") {
  for (const char* name : {"ddr4-3200", "ddr5-4800", "hbm3"}) {
    for (const std::uint32_t bytes : {256u, 4096u}) {
      TraceGenOptions o;
      o.pattern = TracePattern::Random;
      o.reads = 2;
      o.writes = 1;
      o.count = 300;
      o.interval = 1;
      o.seed = 3;
      o.line = bytes;
      o.footprint = std::uint64_t{1} << 26;
      const auto trace = generate_trace(o);
      const DramSpec spec = preset(name);
      const Replayed events = replay(spec, trace, ReplayDriver::Events, bytes);
      const Replayed direct = replay(spec, trace, ReplayDriver::Direct, bytes);
      require_same(events, direct, fmt::format("{} blocks of {} B", name, bytes));
      CHECK(direct.result.stats.read_bytes + direct.result.stats.write_bytes == 300 * bytes);
    }
  }
}

TEST_CASE("direct replay: a trace that starts late and an empty trace") {
  const DramSpec spec = preset("hbm3");
  std::vector<TraceRequest> trace;
  for (int i = 0; i < 200; ++i)
    trace.push_back(TraceRequest{static_cast<mem::Addr>(i) * 4096, i % 5 == 0, 10000 + i / 3});
  require_same(replay(spec, trace, ReplayDriver::Events), replay(spec, trace, ReplayDriver::Direct),
               "late start");
  const Replayed empty = replay(spec, {}, ReplayDriver::Direct);
  CHECK(empty.result.stats.requests() == 0);
  CHECK(empty.result.sent == 0);
  CHECK(empty.final_tick == 0);
}

// Worked by hand on DDR4-3200 (tRCD 22, tRAS 52, tRP 22 cycles): A (bank group 0, row 0)
// at cycle 0, B (same bank, row 1) at 1, C (bank group 1, row 0) at 30. ACT A 0, RD A 22;
// the wake-up for PRE B at 52 is superseded by C's ACT at 30; RD C 52, PRE B 53 (the
// command bus is taken at 52), ACT B 75, RD B 97. The superseded wake-up at 52 still runs
// the channel (its wake-up is at 52 again by then), which stops before 53 for the other
// event at 52, so the queue's last event, the final tick, is at 53 and bank group 1's row
// counts as open 30..53 in the stats.
TEST_CASE("direct replay keeps the superseded wake-ups that end the event-driven replay") {
  const DramSpec spec = preset("ddr4-3200");
  const AddressMapping m(spec);
  auto at = [&m](int group, std::int64_t row) {
    DramAddress a;
    a.bankgroup = group;
    a.row = row;
    return m.encode(a);
  };
  const std::vector<TraceRequest> trace = {
      {at(0, 0), false, 0}, {at(0, 1), false, 1}, {at(1, 0), false, 30}};
  for (const ReplayDriver driver : {ReplayDriver::Events, ReplayDriver::Direct}) {
    const Replayed r = replay(spec, trace, driver);
    INFO((driver == ReplayDriver::Direct ? "direct" : "events"));
    const auto& log = r.per_channel[0];
    REQUIRE(log.size() == 7);
    const Cycle cycles[] = {0, 22, 30, 52, 53, 75, 97};
    const Command commands[] = {Command::ACT, Command::RD,  Command::ACT, Command::RD,
                                Command::PRE, Command::ACT, Command::RD};
    for (std::size_t i = 0; i < 7; ++i) {
      CHECK(log[i].cycle == cycles[i]);
      CHECK(log[i].command == commands[i]);
    }
    CHECK(r.final_tick == 53 * spec.tCK);
    CHECK(r.result.stats.bank_open_cycles[4] == 53 - 30);  // bank group 1, bank 0
  }
}

TEST_CASE("replay picks the direct driver only where it is exact") {
  const DramSpec spec = preset("ddr5-4800");  // two channels
  EventQueue queue;
  DramSystem dram(spec, queue);
  CHECK(dram.direct_replay_ok());
  dram.set_retry([] {});
  CHECK_FALSE(dram.direct_replay_ok());  // a retry callback belongs to someone else's feeder
  dram.set_retry(nullptr);
  dram.set_completion([](const mem::MemRequest&, Tick) {});
  CHECK_FALSE(dram.direct_replay_ok());  // completions must be events
  dram.set_completion(nullptr);
  queue.schedule(5, Priority::Compute, [] {});
  CHECK_FALSE(dram.direct_replay_ok());  // someone else's events in the queue
}

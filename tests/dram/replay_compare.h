#pragma once
// Two replays of one trace compared channel by channel: the same commands at the same
// cycles, the same statistics and completion ticks (direct_replay_test, lookahead_test).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dram_test_util.h"
#include "mem/dram/trace_replay.h"

namespace fusim::dram::testing {

struct Replayed {
  ReplayResult result;
  std::vector<std::vector<IssuedCommand>> per_channel;
  Tick final_tick = 0;
  std::vector<Tick> done;  // by request id, with_completions only
};

// Replays `trace` with `driver`; with_completions: through completion events (as a
// machine's DRAM reports to the caches), each request's completion tick kept by id.
inline Replayed replay(const DramSpec& spec, const std::vector<TraceRequest>& trace,
                       ReplayDriver driver, std::uint32_t bytes = 64,
                       WakeMode mode = WakeMode::PerChannel, bool with_completions = false) {
  EventQueue queue;
  DramSystem dram(spec, queue);
  dram.set_wake_mode(mode);
  Replayed out;
  if (with_completions) {
    out.done.assign(trace.size(), -1);
    dram.set_completion([&out](const mem::MemRequest& r, Tick done) { out.done[r.id] = done; });
  }
  out.per_channel.resize(spec.org.logical_channels());
  dram.set_command_observer(
      [&out](const IssuedCommand& c) { out.per_channel[c.channel].push_back(c); });
  out.result = replay_trace(dram, queue, trace, kNoCycle, bytes, driver);
  out.final_tick = queue.now();
  return out;
}

// Each channel's commands and every statistic equal. same_end: the final tick too, and what
// depends on it (refreshes settled at the end, bank open time); the lookahead wake-up
// ends a replay at another tick (its last event is elsewhere), with the same commands.
inline void require_same(const Replayed& a, const Replayed& b, const std::string& label,
                         bool same_end = true) {
  INFO(label);
  REQUIRE(a.per_channel.size() == b.per_channel.size());
  for (std::size_t ch = 0; ch < a.per_channel.size(); ++ch) {
    const auto& x = a.per_channel[ch];
    const auto& y = b.per_channel[ch];
    INFO("channel " << ch);
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("command " << i << " at cycle " << x[i].cycle << " vs " << y[i].cycle);
      REQUIRE(x[i].cycle == y[i].cycle);
      REQUIRE(x[i].command == y[i].command);
      REQUIRE(x[i].rank == y[i].rank);
      REQUIRE(x[i].bankgroup == y[i].bankgroup);
      REQUIRE(x[i].bank == y[i].bank);
      REQUIRE(x[i].row == y[i].row);
    }
  }
  const DramStats& s = a.result.stats;
  const DramStats& t = b.result.stats;
  CHECK(a.result.sent == b.result.sent);
  CHECK(a.done == b.done);
  if (same_end) {
    CHECK(a.final_tick == b.final_tick);
    CHECK(a.result.cycles == b.result.cycles);
    CHECK(s.elapsed == t.elapsed);
    CHECK(s.refreshes == t.refreshes);
    CHECK(s.per_bank_refreshes == t.per_bank_refreshes);
    CHECK(s.bank_open_cycles == t.bank_open_cycles);
  }
  CHECK(s.reads == t.reads);
  CHECK(s.writes == t.writes);
  CHECK(s.row_hits == t.row_hits);
  CHECK(s.row_misses == t.row_misses);
  CHECK(s.row_conflicts == t.row_conflicts);
  CHECK(s.read_latency.count() == t.read_latency.count());
  CHECK(s.read_latency.mean() == t.read_latency.mean());  // sums of integer cycles
  CHECK(s.write_latency.mean() == t.write_latency.mean());
  for (const double q : {0.01, 0.5, 0.9, 0.99, 1.0}) {
    CHECK(s.read_latency.percentile(q) == t.read_latency.percentile(q));
    CHECK(s.write_latency.percentile(q) == t.write_latency.percentile(q));
  }
}

}  // namespace fusim::dram::testing

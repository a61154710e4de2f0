// WakeMode::Lookahead (one wake-up event runs every channel up to a horizon, LookaheadWake)
// against WakeMode::PerChannel (a wake-up event per channel): on every preset, with
// saturating, sparse and write-heavy traces, single atoms and multi-atom blocks, and
// completions delivered by events as the caches receive them, each channel must issue the
// same commands at the same cycles and every request must complete at the same tick.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "replay_compare.h"

using namespace fusim;
using namespace fusim::dram;
using namespace fusim::dram::testing;

TEST_CASE("the lookahead wake-up issues the per-channel wake-ups' commands") {
  struct Case {
    TracePattern pattern;
    Cycle interval;
    std::uint64_t writes;
    std::uint32_t bytes;
  };
  // Saturating (the feeder waits for retries: one-tick windows), sparse (idle channels),
  // strided (one bank group), write-heavy, and blocks spread over channels.
  const Case cases[] = {{TracePattern::Random, 1, 1, 64},   {TracePattern::Stream, 1, 1, 64},
                        {TracePattern::Strided, 2, 1, 64},  {TracePattern::Random, 40, 1, 64},
                        {TracePattern::Random, 1, 3, 64},   {TracePattern::Random, 1, 1, 256},
                        {TracePattern::Random, 8, 1, 4096}, {TracePattern::Stream, 2, 0, 4096}};
  std::size_t compared = 0;
  for (const char* name : kPresets) {
    for (const char* scheduler : {"frfcfs", "stream-aware"}) {
      for (const RowPolicy policy : {RowPolicy::Open, RowPolicy::Closed}) {
        for (const Case& c : cases) {
          DramSpec spec = preset(name);
          spec.ctrl.scheduler = scheduler;
          spec.ctrl.row_policy = policy;
          TraceGenOptions o;
          o.pattern = c.pattern;
          o.reads = 2;
          o.writes = c.writes;
          o.count = c.bytes > 64 ? 200 : 1000;
          o.interval = c.interval;
          o.line = c.bytes;
          o.seed = 11;
          o.stride = 8192 + 64;
          o.footprint = std::uint64_t{1} << 26;
          const auto trace = generate_trace(o);
          const Replayed per_channel = replay(spec, trace, ReplayDriver::Events, c.bytes,
                                              WakeMode::PerChannel, /*with_completions=*/true);
          const Replayed lookahead = replay(spec, trace, ReplayDriver::Events, c.bytes,
                                            WakeMode::Lookahead, /*with_completions=*/true);
          require_same(per_channel, lookahead,
                       fmt::format("{} {} {} pattern {} interval {} writes {} bytes {}", name,
                                   scheduler, to_string(policy), static_cast<int>(c.pattern),
                                   c.interval, c.writes, c.bytes),
                       /*same_end=*/false);
          REQUIRE(lookahead.result.stats.requests() == trace.size());
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 5 * 2 * 2 * 8);
}

namespace {
// A closed loop, as the caches are: `outstanding` requests in flight, each completion sends
// the next one at its completion tick (a refused one waits for the retry). A channel's
// commands then depend on when other channels' data came back: a window that ran past the
// earliest completion would decide without the requests that completion sends.
Replayed closed_loop(const DramSpec& spec, WakeMode mode, int outstanding, std::uint32_t bytes,
                     std::uint64_t total) {
  TraceGenOptions o;
  o.pattern = TracePattern::Random;
  o.reads = 3;
  o.writes = 1;
  o.count = total;
  o.line = bytes;
  o.seed = 5;
  o.footprint = std::uint64_t{1} << 26;
  const auto trace = generate_trace(o);
  EventQueue queue;
  DramSystem dram(spec, queue);
  dram.set_wake_mode(mode);
  Replayed out;
  out.per_channel.resize(spec.org.logical_channels());
  out.done.assign(trace.size(), -1);
  dram.set_command_observer(
      [&out](const IssuedCommand& c) { out.per_channel[c.channel].push_back(c); });
  std::size_t next = 0;
  int wanted = outstanding;
  auto pump = [&] {
    while (wanted > 0 && next < trace.size()) {
      mem::MemRequest r;
      r.addr = trace[next].addr;
      r.bytes = bytes;
      r.is_write = trace[next].is_write;
      r.id = next;
      if (!dram.will_accept(r)) {
        dram.request_retry();  // the retry pumps again
        return;
      }
      dram.send(r);
      ++next;
      --wanted;
    }
  };
  dram.set_retry(pump);
  dram.set_completion([&](const mem::MemRequest& r, Tick done) {
    out.done[r.id] = done;
    ++wanted;
    pump();
  });
  queue.schedule(0, Priority::Compute, pump);
  queue.run();
  out.final_tick = queue.now();
  out.result.stats = dram.stats();
  out.result.sent = next;
  return out;
}
}  // namespace

TEST_CASE("the lookahead wake-up in a closed loop: completions send the next requests") {
  for (const char* name : kPresets) {
    for (const int outstanding : {4, 64}) {
      for (const std::uint32_t bytes : {64u, 512u}) {
        const Replayed per_channel =
            closed_loop(preset(name), WakeMode::PerChannel, outstanding, bytes, 1500);
        const Replayed lookahead =
            closed_loop(preset(name), WakeMode::Lookahead, outstanding, bytes, 1500);
        require_same(per_channel, lookahead,
                     fmt::format("{}, {} outstanding, {} B", name, outstanding, bytes),
                     /*same_end=*/false);
        CHECK(lookahead.result.stats.requests() == 1500);
      }
    }
  }
}

TEST_CASE("a machine's DRAM wakes by lookahead, trace replay per channel") {
  EventQueue queue;
  DramSystem replayed(preset("hbm3"), queue);
  CHECK(replayed.wake_mode() == WakeMode::PerChannel);
  CHECK(replayed.direct_replay_ok());
  replayed.set_wake_mode(WakeMode::Lookahead);
  CHECK_FALSE(replayed.direct_replay_ok());  // the direct driver reproduces per-channel events
}

#pragma once
// Trace replay without an event per step: sends a trace to a fresh DramSystem as
// replay_trace's event-driven feeder does (each request at its arrival cycle or, while a
// queue it needs is full, at the first column command after the refusal) and issues the
// channels' commands in between itself, channel by channel. Every channel issues the same
// commands at the same cycles as under PerChannelWake events and every request completes at
// the same tick; only the interleaving of different channels' same-cycle commands seen by
// an observer may differ. At the end it hands the channels to a PerChannelWake holding
// exactly the wake-up events the event-driven replay holds after its last send, so that
// running the queue finishes the replay identically (same final tick, hence the same
// refreshes settled by finish() and the same bank open time).
#include <cstdint>
#include <utility>
#include <vector>

#include "mem/dram/dram_system.h"
#include "mem/dram/wake_policy.h"

namespace fusim::dram {

struct TraceRequest;

class DirectReplay final : public WakePolicy {
 public:
  // Requires dram.direct_replay_ok().
  DirectReplay(DramSystem& dram, EventQueue& queue);
  // Sends trace[0..count) as `bytes`-byte requests; returns the number sent (all of them).
  // The caller then runs the queue (the channels' last wake-ups) and calls dram.finish().
  std::uint64_t run(const TraceRequest* trace, std::size_t count, std::uint32_t bytes);

  // (WakePolicy) What PerChannelWake would schedule after a send, kept as times only.
  void on_request(int ch, Tick now) override;

 private:
  void touch(int ch);
  void issue(int ch);
  void begin_action(Cycle at);

  DramSystem& dram_;
  EventQueue& queue_;
  Tick now_ = 0;                        // the feeder's tick
  Cycle cycle_ = 0;                     // the same in cycles
  std::uint64_t action_ = 0;            // feeder actions so far
  std::vector<Cycle> next_;             // each channel's next command cycle
  std::vector<std::uint64_t> touched_;  // per channel: the last action that touched it
  // The event-driven replay's wake-up events, as times: each channel's pending one (kNever:
  // none) and those it superseded that are still queued there, (tick, channel) in the
  // order they were scheduled (they bound run-ahead and so set the replay's final tick).
  std::vector<Tick> wake_at_;
  std::vector<std::pair<Tick, int>> superseded_;
};

}  // namespace fusim::dram

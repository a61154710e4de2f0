#pragma once
// When a DramSystem's channels issue their commands on the event queue. A channel never
// ticks: it knows the cycle of its next command (ChannelController::next_cycle), and a wake
// policy schedules the events that issue those commands. Both policies issue the same
// commands at the same cycles (tests/dram/lookahead_test.cpp); they differ in how many
// events that takes.
//  - PerChannelWake (trace replay): each channel has at most one pending wake-up event, at
//    the cycle of its next command, and issues every command it can before the next event
//    of anybody else in the queue (nothing can reach it before that event, so running ahead
//    is exact). With many busy channels their wake-ups stop each other's run-ahead: about
//    one event per command.
//  - LookaheadWake (a machine's DRAM, make_dram_system): one wake-up event for the system.
//    It runs every busy channel, one after the other, up to a horizon: the next event of
//    anybody else, and no later than the earliest data a command at or after now can
//    return (min(tCL, tCWL) + tBL cycles: channels reach the rest of the simulation only
//    through completions, so nothing the window does can reach anybody before the
//    horizon). While a refused sender waits for a retry (due at the next column command)
//    the window is one tick.
#include <memory>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "core/time.h"

namespace fusim::dram {

class DramSystem;

enum class WakeMode { PerChannel, Lookahead };

class WakePolicy {
 public:
  virtual ~WakePolicy() = default;
  // Channel `ch` was sent a request at tick `now`: its next command may be earlier than the
  // one the policy waits for.
  virtual void on_request(int ch, Tick now) = 0;
};

class PerChannelWake final : public WakePolicy {
 public:
  PerChannelWake(DramSystem& dram, EventQueue& queue);
  void on_request(int ch, Tick now) override { ensure(ch, now); }
  // Takes over channels whose commands were issued without events so far (DirectReplay):
  // `wake_at[ch]` is each channel's pending wake-up (kNever: none), `superseded` the
  // wake-ups, (tick, channel), that an earlier wake-up replaced but that the event queue
  // would still hold, in the order they were scheduled. Both become events.
  void resume(const std::vector<Tick>& wake_at,
              const std::vector<std::pair<Tick, int>>& superseded);

 private:
  void ensure(int ch, Tick now);
  void wake(int ch);

  DramSystem& dram_;
  EventQueue& queue_;
  std::vector<Tick> wake_at_;  // the pending wake-up event of each channel, kNever if none
};

class LookaheadWake final : public WakePolicy {
 public:
  LookaheadWake(DramSystem& dram, EventQueue& queue);
  void on_request(int ch, Tick now) override;

 private:
  void run_window();

  DramSystem& dram_;
  EventQueue& queue_;
  Tick lookahead_;           // min(tCL, tCWL) + tBL cycles, in ticks
  Tick window_at_ = kNever;  // the pending wake-up
  std::vector<int> busy_;    // channels with requests queued, once each
  std::vector<bool> in_busy_;
};

std::unique_ptr<WakePolicy> make_wake_policy(WakeMode mode, DramSystem& dram, EventQueue& queue);

}  // namespace fusim::dram

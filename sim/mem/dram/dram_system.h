#pragma once
// The DRAM system as the rest of fusim sees it: a mem::MemoryPort over one controller per
// (pseudo-)channel, driven by the shared EventQueue. No per-cycle ticking; two ways to wake
// the channels (WakeMode), which issue the same commands at the same cycles:
//  - PerChannel (the default, trace replay): each channel has at most one pending wake-up
//    event, at the cycle its next command can issue, and issues every command it can before
//    the next event of anybody else in the queue (nothing can reach it before that event,
//    so running ahead is exact). With many busy channels their wake-ups stop each other's
//    run-ahead: about one event per command.
//  - Lookahead (a machine's DRAM, make_dram_system): one wake-up event for the system. It
//    runs every channel, one after the other, up to a horizon: the next event of anybody
//    else, and no later than the earliest data a command at or after now can return
//    (min(tCL, tCWL) + tBL cycles: channels affect the rest only through completions, so
//    nothing the window does can reach anybody before the horizon). While a refused sender
//    waits for a retry (due at the next column command) the window is one tick.
// Completions are delivered by events (Priority::Response) at the tick the last data beat
// is back.
//
// Requests larger than one access atom (bus bytes x BL: 64 B on DDR4/DDR5, 32 B on HBM
// pseudo-channels) are split into atoms, each mapped on its own; the request completes
// with its last atom. send() must happen at the queue's now() (from an event, or before
// running it).
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "core/json_view.h"
#include "mem/dram/address_mapping.h"
#include "mem/dram/controller.h"
#include "mem/dram/dram_spec.h"
#include "mem/dram/dram_stats.h"
#include "mem/memory_port.h"

namespace fusim::dram {

struct TraceRequest;

enum class WakeMode { PerChannel, Lookahead };

class DramSystem final : public mem::MemoryPort {
 public:
  // `file` names where the spec came from, for scheduler/mapping errors.
  DramSystem(DramSpec spec, EventQueue& queue, const std::string& file = "dram");

  bool will_accept(const mem::MemRequest& request) const override;
  void send(const mem::MemRequest& request) override;
  void set_completion(Completion completion) override { completion_ = std::move(completion); }

  // Called once (from an event at the tick a queue entry frees) after will_accept refused.
  void set_retry(std::function<void()> retry) override { retry_ = std::move(retry); }
  // Before the first send only.
  void set_wake_mode(WakeMode mode);
  WakeMode wake_mode() const { return wake_mode_; }
  // Every issued command, in issue order per channel (protocol checker, command traces).
  void set_command_observer(CommandObserver observer);

  // Settles refreshes and row closes of idle channels up to now() (call before reading
  // final stats; refreshes during idle time are otherwise counted when work arrives).
  void finish();
  // Counters as of the queue's now().
  DramStats stats() const;
  double peak_bandwidth_bytes_per_s() const { return spec_.peak_bandwidth_bytes_per_s(); }
  const DramSpec& spec() const { return spec_; }
  const AddressMapping& mapping() const { return mapping_; }
  std::size_t in_flight() const { return live_; }
  // Tick the latest data transfer so far ends (a request's data may finish after the
  // queue runs dry when nobody waits for completions).
  Tick last_completion() const { return clock_.cycles(last_done_); }

  // Trace replay without an event per step (direct_replay.cpp): sends trace[0..count) as
  // replay_trace's event-driven feeder would, each at its arrival cycle or, while the
  // queue it needs is full, at the first column command after the refusal, and issues the
  // commands in between channel by channel. Leaves the queue holding exactly the events the
  // event-driven replay holds after its last send (channel wake-ups, superseded ones too),
  // so that running it finishes the replay identically. Every channel issues the same
  // commands at the same cycles and every request completes at the same tick; only the
  // interleaving of different channels' same-cycle commands seen by an observer may differ.
  // Requires direct_replay_ok(). Returns the number of requests sent (all of them).
  std::uint64_t replay_direct(const TraceRequest* trace, std::size_t count, std::uint32_t bytes);
  // A fresh system (queue empty at tick 0, nothing in flight) in WakeMode::PerChannel, no
  // completion or retry callback.
  bool direct_replay_ok() const;
  bool observed() const { return static_cast<bool>(observer_); }
  int channel_count() const { return static_cast<int>(channels_.size()); }

 private:
  struct Slot {
    mem::MemRequest request;
    Cycle arrival = 0;
    Cycle done = 0;
    std::uint32_t atoms_left = 0;
    std::uint32_t next_free = 0;
  };
  // The atoms of one multi-atom request, decoded, and how many go to each channel. A
  // block that waits for room is asked about again and again and then sent: the last
  // one's plan is kept so that it is decoded once, not at every ask.
  struct BlockPlan {
    bool valid = false;
    mem::Addr addr = 0;
    std::uint32_t bytes = 0;
    std::vector<DramAddress> atoms;
    std::vector<std::pair<int, std::uint32_t>> per_channel;  // (channel, atoms), first-use order
  };
  const BlockPlan& plan(const mem::MemRequest& r) const;
  std::uint32_t atoms_of(const mem::MemRequest& r) const;
  void run_channel(int channel);
  void wake(int channel);
  void ensure_wake(int channel);
  void ensure_window(int channel);  // Lookahead (lookahead.cpp)
  void run_window();
  void served(const ColumnServed& s);
  void complete(std::uint32_t token);
  Tick now() const { return direct_ ? direct_now_ : queue_.now(); }
  void issue_direct(int channel);
  void touch_direct(int channel);
  void begin_action(Cycle at);

  DramSpec spec_;
  EventQueue& queue_;
  AddressMapping mapping_;
  Clock clock_;
  std::uint32_t atom_bytes_;
  DramStats stats_;
  std::vector<std::unique_ptr<ChannelController>> channels_;
  std::vector<Tick> wake_at_;  // the pending wake-up event of each channel, kNever if none
  WakeMode wake_mode_ = WakeMode::PerChannel;
  // Lookahead: the system's pending wake-up, the channels with requests queued (once each),
  // and the window's length in ticks.
  Tick window_at_ = kNever;
  std::vector<int> busy_;
  std::vector<bool> in_busy_;
  Tick lookahead_ = 0;
  Tick horizon_ = 0;  // of the window being run (served() checks completions against it)
  std::vector<Slot> slots_;
  std::uint32_t free_slot_ = UINT32_MAX;
  std::size_t live_ = 0;
  Cycle last_done_ = 0;
  Completion completion_;
  std::function<void()> retry_;
  mutable bool retry_wanted_ = false;
  mutable BlockPlan plan_;
  mutable std::vector<std::uint32_t> channel_atoms_;  // plan() scratch, zero between calls
  CommandObserver observer_;
  // replay_direct's state: the feeder's tick, each channel's next command cycle, and the
  // times of superseded wake-up events the event-driven replay would still hold.
  bool direct_ = false;
  Tick direct_now_ = 0;
  std::vector<Cycle> direct_next_;
  std::vector<std::pair<Tick, int>> stale_wakes_;  // (tick, channel)
  std::uint64_t direct_action_ = 0;                // feeder actions so far
  Cycle direct_cycle_ = 0;              // the current action's cycle (direct_now_ in cycles)
  std::vector<std::uint64_t> touched_;  // per channel: the last action that touched it
};

// Builds the DRAM of a machine from its "dram" object ({"preset": name-or-path, ...}), in
// WakeMode::Lookahead.
std::unique_ptr<DramSystem> make_dram_system(const JsonView& dram_section, EventQueue& queue);

}  // namespace fusim::dram

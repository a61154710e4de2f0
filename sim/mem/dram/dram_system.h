#pragma once
// The DRAM system as the rest of fusim sees it: a mem::MemoryPort over one controller per
// (pseudo-)channel. No per-cycle ticking: a channel knows the cycle of its next command, and
// a driver issues it: on the event queue, one of the wake policies (wake_policy.h:
// per-channel wake-ups for trace replay, one lookahead wake-up for a machine's DRAM); for a
// whole trace, DirectReplay (direct_replay.h), without events. All of them issue the same
// commands at the same cycles. Completions are delivered by events (Priority::Response) at
// the tick the last data beat is back.
//
// Requests larger than one access atom (bus bytes x BL: 64 B on DDR4/DDR5, 32 B on HBM
// pseudo-channels) are split into atoms, each mapped on its own; the request completes
// with its last atom. send() must happen at the queue's now() (from an event, or before
// running it).
#include <deque>
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
#include "mem/dram/wake_policy.h"
#include "mem/memory_port.h"

namespace fusim::dram {

class DramSystem final : public mem::MemoryPort {
 public:
  // `file` names where the spec came from, for scheduler/mapping errors.
  DramSystem(DramSpec spec, EventQueue& queue, const std::string& file = "dram");
  ~DramSystem() override;

  // Room for every atom of `request` in its channels' queues; no side effect.
  bool will_accept(const mem::MemRequest& request) const override {
    return refused_by(request) < 0;
  }
  // The first of its channels without room for its atoms (-1: none); a channel's count
  // of freed queue entries.
  // A divisible request (MemRequest::part_bytes) is always taken: each part enters its
  // channels' queues at once if its first channel has no part waiting and every channel it
  // needs has room, else it waits in a FIFO of its first channel, as the requests it stands
  // for would wait in their sender's FIFO for that channel (mem/refused_queues.h), and
  // enters when a column command frees room (an event at that tick, as a sender's retry).
  // Another request whose first channel has parts waiting is refused by that channel: it
  // would have queued behind them.
  int refused_by(const mem::MemRequest& request) const override;
  std::uint64_t room_freed(int channel) const override {
    return channels_[channel]->freed() + parts_cleared_[channel];
  }
  void send(const mem::MemRequest& request) override { send_at(request, queue_.now(), *wake_); }
  void set_completion(Completion completion) override { completion_ = std::move(completion); }
  // The retry runs once, from an event at the tick of the next column command (a queue
  // entry frees), after request_retry().
  void set_retry(std::function<void()> retry) override { retry_ = std::move(retry); }
  void request_retry() override { retry_requested_ = true; }
  // A channel per destination: a request waits for the channel of its first atom. (One
  // whose atoms go to several channels may be refused for another one; it then holds up
  // the requests behind it for its first channel only. A 128 B line of HBM's 32 B atoms
  // spans channels under channel-interleaved mappings, so a queue per channel set would
  // leave most requests in one queue, as before.)
  int destinations() const override { return channel_count(); }
  int destination(const mem::MemRequest& request) const override {
    return mapping_.channel_of(request.addr);  // (the first atom's address)
  }
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
  const Clock& clock() const { return clock_; }
  std::size_t in_flight() const { return live_; }
  // Tick the latest data transfer so far ends (a request's data may finish after the
  // queue runs dry when nobody waits for completions).
  Tick last_completion() const { return clock_.cycles(last_done_); }
  // A fresh system (queue empty at tick 0, nothing in flight) in WakeMode::PerChannel, no
  // completion or retry callback: what DirectReplay needs.
  bool direct_replay_ok() const;
  bool observed() const { return static_cast<bool>(observer_); }
  int channel_count() const { return static_cast<int>(channels_.size()); }

  // For the drivers that issue the channels' commands (wake policies, DirectReplay):
  // the cycle of channel `ch`'s next command (kNoCycle while nothing is queued there),
  Cycle next_cycle(int ch) { return channels_[ch]->next_cycle(); }
  // whether it is a request's column command (RD/WR),
  bool next_is_column(int ch) { return channels_[ch]->next_is_column(); }
  // issuing it, with the request it serves accounted for (stats, completion, retry),
  ColumnServed issue_next(int ch);
  // send() at tick `at`, telling `wake` which channels were sent work (DirectReplay sends
  // ahead of the queue's now() and keeps the wake-ups itself),
  void send_at(const mem::MemRequest& request, Tick at, WakePolicy& wake);
  // the channels of a request's atoms, in first-use order,
  void channels_of(const mem::MemRequest& request, std::vector<int>& out) const;
  // the one channel all atoms of `request` go to, with their count in `atoms` (-1 where
  // they go to several: a line of HBM atoms stays in one), and whether it has room for
  // them there (what will_accept answers for such a request),
  int single_channel(const mem::MemRequest& request, std::uint32_t& atoms) const {
    if (request.bytes <= atom_bytes_) {
      atoms = 1;
      return mapping_.channel_of(request.addr);
    }
    const BlockPlan& p = plan(request);
    if (p.per_channel.size() != 1) return -1;
    atoms = p.per_channel[0].second;
    return p.per_channel[0].first;
  }
  // whether `request` is taken in parts (its parts whole atoms),
  bool divisible(const mem::MemRequest& request) const {
    return request.part_bytes != 0 && request.bytes > request.part_bytes &&
           request.part_bytes % atom_bytes_ == 0;
  }
  bool has_room(int ch, bool is_write, std::uint32_t atoms) const {
    const ChannelController& c = *channels_[ch];
    const std::size_t free = c.free_entries(is_write);
    return atoms <= free || free == c.capacity(is_write);
  }
  // whether a refused sender waits for the retry,
  bool retry_requested() const { return retry_requested_; }
  // and the policy that wakes the channels from now on (DirectReplay hands over to one).
  void set_wake_policy(std::unique_ptr<WakePolicy> wake) { wake_ = std::move(wake); }

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
  // one's plan is kept so that it is decoded once, not at every ask (a cache: no effect
  // on any answer).
  struct BlockPlan {
    bool valid = false;
    mem::Addr addr = 0;
    std::uint32_t bytes = 0;
    std::vector<DramAddress> atoms;
    std::vector<std::pair<int, std::uint32_t>> per_channel;  // (channel, atoms), first-use order
  };
  const BlockPlan& plan(const mem::MemRequest& r) const;
  // The atoms of [addr, addr + bytes), in address order (plan's and a sent part's decoding).
  void decode_atoms(mem::Addr addr, std::uint32_t bytes, std::vector<DramAddress>& out) const;
  static constexpr std::uint32_t kFewAtoms = 8;  // will_accept counts these without a plan
  std::uint32_t atoms_of(const mem::MemRequest& r) const;
  // A part of a divisible request waiting for room (its request: slots_[token].request).
  struct Part {
    mem::Addr addr = 0;
    std::uint32_t bytes = 0;
    std::uint32_t token = 0;
  };
  // The first channel the atoms of [addr, addr + bytes) go to that has no room for its
  // atoms of them, -1 where all have (nothing decoded: the sender decodes into
  // part_atoms_).
  int part_refused_by(mem::Addr addr, std::uint32_t bytes, bool is_write) const;
  // Why a FIFO's head part was last refused: the channel without room and its freed()
  // count then (channel -1: not refused since it became the head).
  struct Refusal {
    int channel = -1;
    std::uint64_t freed = 0;
  };
  void enqueue_atoms(const DramAddress* atoms, std::uint32_t count, std::uint32_t token,
                     const mem::MemRequest& request, Cycle arrival, Tick at, WakePolicy& wake);
  void send_parts(const mem::MemRequest& request, std::uint32_t token, Cycle arrival, Tick at,
                  WakePolicy& wake);
  void admit_parts();
  void served(const ColumnServed& s);
  void complete(std::uint32_t token);

  DramSpec spec_;
  EventQueue& queue_;
  AddressMapping mapping_;
  Clock clock_;
  std::uint32_t atom_bytes_;
  int atom_shift_;  // log2(atom_bytes_), -1 where it is no power of two
  DramStats stats_;
  std::vector<std::unique_ptr<ChannelController>> channels_;
  WakeMode wake_mode_ = WakeMode::PerChannel;
  std::unique_ptr<WakePolicy> wake_;
  std::vector<Slot> slots_;
  std::uint32_t free_slot_ = UINT32_MAX;
  std::size_t live_ = 0;
  Cycle last_done_ = 0;
  Completion completion_;
  std::function<void()> retry_;
  bool retry_requested_ = false;
  mutable BlockPlan plan_;
  mutable std::vector<std::uint32_t> channel_atoms_;  // plan() scratch, zero between calls
  CommandObserver observer_;
  // Parts waiting for room: a FIFO per channel (that of a part's first atom), the
  // channels with parts in the order they began to wait, how often each FIFO emptied
  // (room_freed: a request it refused may fit now), and whether an admission is scheduled.
  std::vector<std::deque<Part>> parts_;
  std::vector<int> part_channels_;
  std::vector<std::uint64_t> parts_cleared_;
  std::size_t parts_waiting_ = 0;
  bool admit_pending_ = false;
  mutable std::vector<DramAddress> part_atoms_;    // the atoms of the part being sent
  mutable std::vector<std::uint32_t> part_count_;  // part_refused_by's scratch, per channel
  std::vector<Refusal> head_refused_;              // per parts_ FIFO
};

// Builds the DRAM of a machine from its "dram" object ({"preset": name-or-path, ...}), in
// WakeMode::Lookahead.
std::unique_ptr<DramSystem> make_dram_system(const JsonView& dram_section, EventQueue& queue);

}  // namespace fusim::dram

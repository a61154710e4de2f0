#pragma once
// The discrete-event queue: events run in (time, priority, insertion sequence) order, so
// equal-time events are deterministic. Callbacks are typed closures, never void*.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/time.h"

namespace fusim {

// Named priorities for events at the same tick: lower runs first. Responses are delivered
// before new requests are issued, and stats sampling sees the settled state of the tick.
enum class Priority : std::int8_t {
  Response = 0,  // completions travelling back up (DRAM -> caches -> cores)
  Memory = 10,   // controllers and caches doing their per-cycle work
  Compute = 20,  // cores/SMs issuing new work
  Stats = 30,    // sampling counters and timelines
};

class EventQueue {
 public:
  using Callback = std::function<void()>;

  Tick now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::size_t pending() const { return heap_.size(); }
  std::uint64_t executed() const { return executed_; }
  Tick next_time() const { return heap_.empty() ? kNever : heap_.front().when; }

  // Scheduling in the past is a bug in the caller.
  void schedule(Tick when, Priority priority, Callback callback);
  void schedule_in(Tick delay, Priority priority, Callback callback) {
    schedule(now_ + delay, priority, std::move(callback));
  }

  // Runs one event; false when empty.
  bool step();
  // Runs every event with time <= limit; returns true if events remain after limit.
  bool run_until(Tick limit);
  void run() { run_until(kNever); }

 private:
  // The heap holds small keys only; callbacks live in a slab and never move while queued.
  // A 4-ary heap of 24-byte items: sift paths are half as long as a binary heap's and a
  // node's children are contiguous (profiles showed a binary heap of std::function events
  // at ~30% of a simulate run).
  struct Item {
    Tick when;
    std::uint64_t order;  // priority in the top byte, insertion sequence below
    std::uint32_t slot;
  };
  static bool before(const Item& a, const Item& b) {
    return a.when != b.when ? a.when < b.when : a.order < b.order;
  }
  void sift_up(std::size_t hole, Item item);
  void sift_down(Item item);

  std::vector<Item> heap_;
  std::vector<Callback> slots_;
  std::vector<std::uint32_t> free_slots_;
  Tick now_ = 0;
  std::uint64_t seq_ = 0, executed_ = 0;
};

}  // namespace fusim

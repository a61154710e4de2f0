#pragma once
// The discrete-event queue: events run in (time, priority, insertion sequence) order, so
// equal-time events are deterministic. Callbacks are typed closures, never void*.
#include <cstdint>
#include <functional>
#include <queue>
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
  Tick next_time() const { return heap_.empty() ? kNever : heap_.top().when; }

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
  struct Event {
    Tick when;
    std::int8_t priority;
    std::uint64_t seq;
    Callback callback;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.when != b.when) return a.when > b.when;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  Tick now_ = 0;
  std::uint64_t seq_ = 0, executed_ = 0;
};

}  // namespace fusim

#pragma once
// A clock for a component that has per-cycle work: it schedules one event per cycle while
// the component reports work left, and switches itself off when the component goes idle,
// so idle components cost nothing. wake() turns it back on at the next clock edge.
#include <functional>

#include "core/event_queue.h"
#include "core/time.h"

namespace fusim {

class ClockedTicker {
 public:
  // tick(now) does one cycle of work and returns true while there is more to do.
  using Tick_fn = std::function<bool(Tick now)>;

  ClockedTicker(EventQueue& queue, Clock clock, Priority priority, Tick_fn tick)
      : queue_(queue), clock_(clock), priority_(priority), tick_(std::move(tick)) {}
  ClockedTicker(const ClockedTicker&) = delete;
  ClockedTicker& operator=(const ClockedTicker&) = delete;

  // Called when work arrives; a no-op if the clock is already running. The first tick is
  // at the first edge at or after now (strictly after the last tick already run).
  void wake();
  bool running() const { return scheduled_; }
  std::uint64_t cycles_ticked() const { return cycles_; }
  const Clock& clock() const { return clock_; }

 private:
  void on_edge();

  EventQueue& queue_;
  Clock clock_;
  Priority priority_;
  Tick_fn tick_;
  bool scheduled_ = false;
  Tick last_edge_ = -1;
  std::uint64_t cycles_ = 0;
};

}  // namespace fusim

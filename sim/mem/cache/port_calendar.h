#pragma once
// One cache port's bookings: the stretches of time it is busy serving units, so that a
// unit arriving at `arrival` is served from the earliest free stretch of its occupancy at
// or after its arrival, whatever order the bookings are made in.
//
// Why not one "free at" time: the timed path books a port ahead of the event queue's now
// (a core issues up to a lookahead window ahead, and a unit reaches level k the lookups
// above it later), and the cores' bookings come in event order, not arrival order. With a
// single free-at time, a unit booked later for an earlier arrival waited behind every
// booking made before it, as if the port served in booking order: on the 40-core Xeon
// 8380's shared last level, 58% of the misses of a streaming op waited ~1.1 ns there at
// 6% utilisation, the same with 4000 ports as with 40, and each core's misses took 3.5%
// longer than at 8 cores (the line model 5% slower than the tensor one). Booked in arrival
// order, a calendar is exactly the single server it replaces: start = max(arrival, end of
// the last booking).
//
// Bookings that end at or before `now` are forgotten (no later arrival is earlier than
// now), so a calendar holds the stretches between now and the furthest booking.
#include <cstddef>
#include <vector>

#include "core/time.h"

namespace fusim::cache {

class PortCalendar {
 public:
  // Books `occupancy` (>= 0) ps at the earliest time >= arrival where the port is free for
  // that long; returns that start. `now` <= arrival: the queue's time.
  Tick book(Tick arrival, Tick occupancy, Tick now);
  // End of the furthest booking (0 before any): when a unit booked in order would start.
  Tick free_at() const { return last_end_; }

 private:
  struct Busy {
    Tick start, end;
  };
  void forget_before(Tick now);

  std::vector<Busy> busy_;  // disjoint, in time order, from head_ on
  std::size_t head_ = 0;
  Tick last_end_ = 0;
};

}  // namespace fusim::cache

#include "mem/cache/port_calendar.h"

#include <algorithm>

namespace fusim::cache {

void PortCalendar::forget_before(Tick now) {
  while (head_ < busy_.size() && busy_[head_].end <= now) ++head_;
  // Compact once the forgotten part is most of the vector (amortised O(1) per booking).
  if (head_ > 32 && head_ * 2 > busy_.size()) {
    busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

Tick PortCalendar::book(Tick arrival, Tick occupancy, Tick now) {
  forget_before(now);
  if (arrival >= last_end_) {
    // In arrival order (the usual case): after everything booked.
    if (occupancy <= 0) return arrival;
    if (head_ < busy_.size() && busy_.back().end == arrival)
      busy_.back().end = arrival + occupancy;
    else
      busy_.push_back({arrival, arrival + occupancy});
    last_end_ = arrival + occupancy;
    return arrival;
  }
  // Earlier than the furthest booking: the first gap at or after `arrival` long enough.
  // (Stretches are disjoint and ordered, so their ends are too: binary search by end.)
  auto it = std::upper_bound(busy_.begin() + static_cast<std::ptrdiff_t>(head_), busy_.end(),
                             arrival, [](Tick t, const Busy& b) { return t < b.end; });
  Tick start = arrival;
  for (; it != busy_.end(); ++it) {
    if (it->start >= start + occupancy) break;  // fits before this stretch
    start = std::max(start, it->end);
  }
  const Tick end = start + occupancy;
  if (occupancy <= 0) return start;
  // Insert [start, end) before `it`, merged with the stretches it touches.
  const bool joins_previous =
      it != busy_.begin() + static_cast<std::ptrdiff_t>(head_) && std::prev(it)->end == start;
  const bool joins_next = it != busy_.end() && it->start == end;
  if (joins_previous && joins_next) {
    std::prev(it)->end = it->end;
    busy_.erase(it);
  } else if (joins_previous) {
    std::prev(it)->end = end;
  } else if (joins_next) {
    it->start = start;
  } else {
    busy_.insert(it, {start, end});
  }
  last_end_ = std::max(last_end_, end);
  return start;
}

}  // namespace fusim::cache

#include "core/clocked.h"

namespace fusim {

void ClockedTicker::wake() {
  if (scheduled_) return;
  Tick edge = clock_.next_edge(queue_.now());
  // Never tick the same edge twice (wake() from inside the tick that just switched off).
  if (edge <= last_edge_) edge = last_edge_ + clock_.period();
  scheduled_ = true;
  queue_.schedule(edge, priority_, [this] { on_edge(); });
}

void ClockedTicker::on_edge() {
  last_edge_ = queue_.now();
  ++cycles_;
  if (tick_(last_edge_)) {
    queue_.schedule(last_edge_ + clock_.period(), priority_, [this] { on_edge(); });
  } else {
    scheduled_ = false;  // idle: the clock stops until the next wake()
  }
}

}  // namespace fusim

// DramSystem in WakeMode::Lookahead (see dram_system.h): one wake-up event runs every busy
// channel up to a horizon no event can come before, instead of an event per channel per
// command. The channels are independent between events (each has its own queues, banks and
// bus); they reach the rest of the simulation only through completions, due at least
// min(tCL, tCWL) + tBL cycles after their column command, and through a refused sender's
// retry, due at the column command itself. So within [now, horizon) the order in which
// channels are run does not change any channel's commands.
#include <algorithm>

#include "core/error.h"
#include "mem/dram/dram_system.h"

namespace fusim::dram {

void DramSystem::set_wake_mode(WakeMode mode) {
  FUSIM_ASSERT(live_ == 0 && queue_.empty() && queue_.now() == 0,
               "DramSystem::set_wake_mode on a system in use");
  wake_mode_ = mode;
  const Timing& t = spec_.t;
  lookahead_ = clock_.cycles(std::min(t.tCL, t.tCWL) + t.tBL);
  FUSIM_ASSERT(lookahead_ > 0, "DRAM timing without a column latency");
  in_busy_.assign(channels_.size(), false);
}

void DramSystem::ensure_window(int ch) {
  if (!in_busy_[ch]) {
    in_busy_[ch] = true;
    busy_.push_back(ch);
  }
  const Cycle next = channels_[ch]->next_cycle();
  if (next == kNoCycle) return;
  const Tick at = std::max(clock_.cycles(next), queue_.now());
  if (at >= window_at_) return;
  window_at_ = at;  // supersedes the pending wake-up (run_window skips a stale one)
  queue_.schedule(at, Priority::Memory, [this] { run_window(); });
}

void DramSystem::run_window() {
  const Tick now = queue_.now();
  if (window_at_ != now) return;  // superseded by an earlier wake-up
  window_at_ = kNever;
  // Commands at now always issue (as a per-channel wake-up at now would issue them).
  horizon_ =
      std::max(now + 1, std::min(queue_.next_time(), now + (retry_wanted_ ? 1 : lookahead_)));
  Tick first = kNever;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < busy_.size(); ++i) {
    const int ch = busy_[i];
    ChannelController& c = *channels_[ch];
    Cycle next;
    while ((next = c.next_cycle()) != kNoCycle && clock_.cycles(next) < horizon_) {
      FUSIM_ASSERT(clock_.cycles(next) >= now, "DRAM command before now");
      const ColumnServed s = c.issue();
      if (s.valid) served(s);
    }
    if (next == kNoCycle) {
      in_busy_[ch] = false;  // idle: nothing to wake for until a send
      continue;
    }
    busy_[kept++] = ch;
    first = std::min(first, clock_.cycles(next));
  }
  busy_.resize(kept);
  if (first == kNever) return;
  window_at_ = first;
  queue_.schedule(first, Priority::Memory, [this] { run_window(); });
}

}  // namespace fusim::dram

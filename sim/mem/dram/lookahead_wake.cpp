// LookaheadWake (wake_policy.h): one wake-up event runs every busy channel up to a horizon
// no event can come before, instead of an event per channel per command. The channels are
// independent between events (each has its own queues, banks and bus); they reach the rest
// of the simulation only through completions, due at least min(tCL, tCWL) + tBL cycles
// after their column command, and through a refused sender's retry, due at the column
// command itself. So within [now, horizon) the order in which channels are run does not
// change any channel's commands.
#include <algorithm>

#include "core/error.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/wake_policy.h"

namespace fusim::dram {

LookaheadWake::LookaheadWake(DramSystem& dram, EventQueue& queue)
    : dram_(dram), queue_(queue), in_busy_(dram.channel_count(), false) {
  const Timing& t = dram.spec().t;
  lookahead_ = dram.clock().cycles(std::min(t.tCL, t.tCWL) + t.tBL);
  FUSIM_ASSERT(lookahead_ > 0, "DRAM timing without a column latency");
}

void LookaheadWake::on_request(int ch, Tick now) {
  if (!in_busy_[ch]) {
    in_busy_[ch] = true;
    busy_.push_back(ch);
  }
  const Cycle next = dram_.next_cycle(ch);
  if (next == kNoCycle) return;
  const Tick at = std::max(dram_.clock().cycles(next), now);
  if (at >= window_at_) return;
  window_at_ = at;  // supersedes the pending wake-up (run_window skips a stale one)
  queue_.schedule(at, Priority::Memory, [this] { run_window(); });
}

void LookaheadWake::run_window() {
  const Tick now = queue_.now();
  if (window_at_ != now) return;  // superseded by an earlier wake-up
  window_at_ = kNever;
  // Commands at now always issue (as a per-channel wake-up at now would issue them).
  const Tick horizon = std::max(
      now + 1, std::min(queue_.next_time(), now + (dram_.retry_requested() ? 1 : lookahead_)));
  const Clock& clock = dram_.clock();
  Tick first = kNever;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < busy_.size(); ++i) {
    const int ch = busy_[i];
    Cycle next;
    while ((next = dram_.next_cycle(ch)) != kNoCycle && clock.cycles(next) < horizon) {
      FUSIM_ASSERT(clock.cycles(next) >= now, "DRAM command before now");
      const ColumnServed s = dram_.issue_next(ch);
      FUSIM_ASSERT(!s.valid || clock.cycles(s.done) >= horizon,
                   "DRAM lookahead window longer than the earliest completion");
    }
    if (next == kNoCycle) {
      in_busy_[ch] = false;  // idle: nothing to wake for until a send
      continue;
    }
    busy_[kept++] = ch;
    first = std::min(first, clock.cycles(next));
  }
  busy_.resize(kept);
  if (first == kNever) return;
  window_at_ = first;
  queue_.schedule(first, Priority::Memory, [this] { run_window(); });
}

}  // namespace fusim::dram

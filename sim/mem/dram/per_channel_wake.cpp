// PerChannelWake (wake_policy.h): a wake-up event per channel, at its next command's cycle.
#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/wake_policy.h"

namespace fusim::dram {

PerChannelWake::PerChannelWake(DramSystem& dram, EventQueue& queue)
    : dram_(dram), queue_(queue), wake_at_(dram.channel_count(), kNever) {}

void PerChannelWake::ensure(int ch, Tick now) {
  const Cycle next = dram_.next_cycle(ch);
  if (next == kNoCycle) return;
  const Tick at = std::max(dram_.clock().cycles(next), now);
  if (at >= wake_at_[ch]) return;
  // The wake-up it supersedes stays queued: it finds wake_at_ moved and does nothing (unless
  // the channel's wake-up is at that very tick again by then).
  wake_at_[ch] = at;
  queue_.schedule(at, Priority::Memory, [this, ch] { wake(ch); });
}

void PerChannelWake::wake(int ch) {
  const Tick now = queue_.now();
  if (wake_at_[ch] != now) return;  // superseded by an earlier wake-up
  wake_at_[ch] = kNever;
  for (;;) {
    const Cycle next = dram_.next_cycle(ch);
    if (next == kNoCycle) return;
    const Tick at = dram_.clock().cycles(next);
    // Run ahead only while nothing else in the queue could act first.
    if (at > now && at >= queue_.next_time()) {
      ensure(ch, now);
      return;
    }
    FUSIM_ASSERT(at >= now,
                 fmt::format("DRAM channel {} command at {} ps, before now ({} ps)", ch, at, now));
    dram_.issue_next(ch);
  }
}

void PerChannelWake::resume(const std::vector<Tick>& wake_at,
                            const std::vector<std::pair<Tick, int>>& superseded) {
  FUSIM_ASSERT(wake_at.size() == wake_at_.size(), "resume with another channel count");
  for (const auto& [at, ch] : superseded)
    queue_.schedule(at, Priority::Memory, [this, c = ch] { wake(c); });
  wake_at_ = wake_at;
  for (std::size_t ch = 0; ch < wake_at_.size(); ++ch) {
    if (wake_at_[ch] != kNever)
      queue_.schedule(wake_at_[ch], Priority::Memory,
                      [this, c = static_cast<int>(ch)] { wake(c); });
  }
}

std::unique_ptr<WakePolicy> make_wake_policy(WakeMode mode, DramSystem& dram, EventQueue& queue) {
  if (mode == WakeMode::Lookahead) return std::make_unique<LookaheadWake>(dram, queue);
  return std::make_unique<PerChannelWake>(dram, queue);
}

}  // namespace fusim::dram

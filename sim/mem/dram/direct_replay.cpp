// DramSystem::replay_direct: trace replay without an event per step. The event-driven
// replay (trace_replay.cpp's TraceFeeder on the EventQueue) spends most of its events on
// two things: a feed at each arrival, or, while a queue is full, a retry after every column
// command; and a wake-up per channel each time its run-ahead stops at another event. In a
// replay nothing but the feeder reaches the channels, so the event order boils down to:
//
//  - the feeder acts at a tick T (an arrival, or the retry that a column command at cycle
//    c schedules at c); before it acts, every channel has issued every command it had
//    decided for a cycle <= T (wake-ups at T run at Priority::Memory, before the feeder's
//    Priority::Compute) and none for a later cycle (run-ahead stops at the next event,
//    and the feeder's pending event is one);
//  - the feeder sends requests in trace order while they have arrived and fit (the same
//    will_accept/send calls here, so the same decisions);
//  - after a refusal, it retries after every column command of any channel, but only one
//    that frees an entry of a channel the refused request needs can change the answer:
//    the retries before it send nothing and change nothing.
//
// Between two feeder actions that reach a channel nothing else does, so each channel is
// brought up to the feeder's cycle only when the feeder asks about it or sends to it
// (touch_direct), and a refused request waits for the first column command among the
// channels it needs. The event-driven replay's final tick (the queue's now() once it runs
// dry, which finish() and stats() read) depends on the wake-up events it still holds after
// the last send, superseded ones included (they bound run-ahead, and one runs the channel
// when its wake-up is at that tick again); so their times are kept as the events would have
// been scheduled (ensure_wake in direct mode), and after the last send they go into the
// real queue, which then finishes exactly as the event-driven replay does.
// tests/dram/direct_replay_test.cpp compares both replays command by command.
#include "core/error.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/trace_replay.h"

namespace fusim::dram {

bool DramSystem::direct_replay_ok() const {
  return queue_.empty() && queue_.now() == 0 && live_ == 0 && !completion_ && !retry_ &&
         wake_mode_ == WakeMode::PerChannel;
}

void DramSystem::issue_direct(int ch) {
  ChannelController& c = *channels_[ch];
  const ColumnServed s = c.issue();
  if (s.valid) served(s);
  direct_next_[ch] = c.next_cycle();
}

// Brings `ch` to the current feeder action, once per action, before the feeder asks about
// it or sends to it: the commands it had decided for a cycle <= now issue first (the
// event-driven replay's wake-ups at or before now run before the feeder's Compute event);
// those it decides after a send of this action wait for the next action (their wake-ups
// run after the feeder). Then its pending wake-up as the event-driven replay has it: one
// due by now has run and left the channel's next decided command as its wake-up. Between
// two actions that touch a channel nothing reaches it, so its commands and decisions are
// the same whenever they are worked out: touching only the channels the feeder needs gives
// what bringing every channel along at every action would.
void DramSystem::touch_direct(int ch) {
  if (touched_[ch] == direct_action_) return;
  touched_[ch] = direct_action_;
  while (direct_next_[ch] <= direct_cycle_) issue_direct(ch);
  if (wake_at_[ch] <= direct_now_)
    wake_at_[ch] = direct_next_[ch] == kNoCycle ? kNever : clock_.cycles(direct_next_[ch]);
}

void DramSystem::begin_action(Cycle at) {
  ++direct_action_;
  direct_cycle_ = at;
  direct_now_ = clock_.cycles(at);
}

std::uint64_t DramSystem::replay_direct(const TraceRequest* trace, std::size_t count,
                                        std::uint32_t bytes) {
  FUSIM_ASSERT(direct_replay_ok(), "replay_direct on a system that is not fresh");
  const int n = static_cast<int>(channels_.size());
  direct_ = true;
  direct_next_.assign(n, kNoCycle);
  touched_.assign(n, 0);
  direct_action_ = 0;
  stale_wakes_.clear();
  begin_action(0);          // replay_trace's first feed, at tick 0
  std::vector<int> needed;  // the channels a request's atoms go to
  std::size_t sent = 0;
  while (sent < count) {
    const TraceRequest& t = trace[sent];
    if (t.arrival > direct_cycle_) begin_action(t.arrival);  // its feed event
    mem::MemRequest r;
    r.addr = t.addr;
    r.bytes = bytes;
    r.is_write = t.is_write;
    r.id = sent;
    needed.clear();
    if (atoms_of(r) == 1) {
      needed.push_back(mapping_.channel_of(r.addr));
    } else {
      for (const auto& pc : plan(r).per_channel) needed.push_back(pc.first);
    }
    for (const int ch : needed) touch_direct(ch);
    while (!will_accept(r)) {
      // Refused: the event-driven feeder retries after every column command of any channel,
      // and only one that frees an entry of a needed channel can change the answer; the
      // retries before it send nothing. So the next action is at the first column command
      // of the needed channels (taken in cycle order among them).
      Cycle column = kNoCycle;
      while (column == kNoCycle) {
        int first = -1;
        for (const int ch : needed) {
          if (direct_next_[ch] != kNoCycle &&
              (first < 0 || direct_next_[ch] < direct_next_[first])) {
            first = ch;
          }
        }
        FUSIM_ASSERT(first >= 0, "replay refused with the needed DRAM channels idle");
        if (channels_[first]->next_is_column())
          column = direct_next_[first];
        else
          issue_direct(first);
      }
      begin_action(column);  // the retry that gets through
      for (const int ch : needed) touch_direct(ch);
    }
    send(r);  // updates its channels' next commands and wake-ups (ensure_wake, direct mode)
    ++sent;
  }
  // After the last send: every channel as the event-driven replay has it then, and that
  // replay's pending events into the real queue.
  for (int ch = 0; ch < n; ++ch) touch_direct(ch);
  direct_ = false;
  retry_wanted_ = false;  // (its last refusal was answered by a column command's retry)
  // (Superseded ones first, as they were scheduled first.)
  for (const auto& [at, ch] : stale_wakes_) {
    if (at > direct_now_) queue_.schedule(at, Priority::Memory, [this, c = ch] { wake(c); });
  }
  for (int ch = 0; ch < n; ++ch) {
    if (wake_at_[ch] != kNever)
      queue_.schedule(wake_at_[ch], Priority::Memory, [this, ch] { wake(ch); });
  }
  stale_wakes_.clear();
  return sent;
}

}  // namespace fusim::dram

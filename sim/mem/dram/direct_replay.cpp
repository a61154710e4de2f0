// DirectReplay (direct_replay.h). The event-driven replay (trace_replay.cpp's TraceFeeder on
// the EventQueue, channels woken by PerChannelWake) spends most of its events on two things:
// a feed at each arrival, or, while a queue is full, a retry after every column command;
// and a wake-up per channel each time its run-ahead stops at another event. In a replay
// nothing but the feeder reaches the channels, so the event order boils down to:
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
// (touch), and a refused request waits for the first column command among the channels it
// needs. The event-driven replay's final tick (the queue's now() once it runs dry, which
// finish() and stats() read) depends on the wake-up events it still holds after the last
// send, superseded ones included (they bound run-ahead, and one runs the channel when its
// wake-up is at that tick again); so their times are kept as PerChannelWake would have
// scheduled them (on_request), and after the last send they become real events, and the
// queue finishes exactly as the event-driven replay does.
// tests/dram/direct_replay_test.cpp compares both replays command by command.
#include "mem/dram/direct_replay.h"

#include "core/error.h"
#include "mem/dram/trace_replay.h"

namespace fusim::dram {

DirectReplay::DirectReplay(DramSystem& dram, EventQueue& queue)
    : dram_(dram),
      queue_(queue),
      next_(dram.channel_count(), kNoCycle),
      touched_(dram.channel_count(), 0),
      wake_at_(dram.channel_count(), kNever) {
  FUSIM_ASSERT(dram.direct_replay_ok(), "direct replay on a system that is not fresh");
}

// PerChannelWake::ensure, with the event kept as its time. The one it supersedes stays due
// in the event-driven replay: it is a no-op unless the channel's wake-up is at that very
// tick again when it runs, and it bounds run-ahead.
void DirectReplay::on_request(int ch, Tick now) {
  const Cycle next = dram_.next_cycle(ch);
  next_[ch] = next;
  if (next == kNoCycle) return;
  const Tick at = std::max(dram_.clock().cycles(next), now);
  if (at >= wake_at_[ch]) return;
  if (wake_at_[ch] != kNever) {
    if (superseded_.size() >= 4096) {  // forget those that are past: only later ones count
      std::size_t keep = 0;
      for (const auto& w : superseded_)
        if (w.first > now_) superseded_[keep++] = w;
      superseded_.resize(keep);
    }
    superseded_.emplace_back(wake_at_[ch], ch);
  }
  wake_at_[ch] = at;
}

void DirectReplay::issue(int ch) {
  dram_.issue_next(ch);
  next_[ch] = dram_.next_cycle(ch);
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
void DirectReplay::touch(int ch) {
  if (touched_[ch] == action_) return;
  touched_[ch] = action_;
  while (next_[ch] <= cycle_) issue(ch);
  if (wake_at_[ch] <= now_)
    wake_at_[ch] = next_[ch] == kNoCycle ? kNever : dram_.clock().cycles(next_[ch]);
}

void DirectReplay::begin_action(Cycle at) {
  ++action_;
  cycle_ = at;
  now_ = dram_.clock().cycles(at);
}

std::uint64_t DirectReplay::run(const TraceRequest* trace, std::size_t count, std::uint32_t bytes) {
  const int n = dram_.channel_count();
  begin_action(0);          // replay_trace's first feed, at tick 0
  std::vector<int> needed;  // the channels a request's atoms go to
  std::size_t sent = 0;
  while (sent < count) {
    const TraceRequest& t = trace[sent];
    if (t.arrival > cycle_) begin_action(t.arrival);  // its feed event
    mem::MemRequest r;
    r.addr = t.addr;
    r.bytes = bytes;
    r.is_write = t.is_write;
    r.requester = t.requester;
    r.id = sent;
    std::uint32_t atoms = 0;
    const int one = dram_.single_channel(r, atoms);
    if (one >= 0) {
      // A request for one channel (every line of a trace of lines): the loop below with
      // `needed` holding that one channel, without building the list or mapping it again.
      touch(one);
      while (!dram_.has_room(one, r.is_write, atoms)) {
        Cycle column = kNoCycle;
        while (column == kNoCycle) {
          FUSIM_ASSERT(next_[one] != kNoCycle, "replay refused with the needed DRAM channel idle");
          if (dram_.next_is_column(one))
            column = next_[one];
          else
            issue(one);
        }
        begin_action(column);
        touch(one);
      }
      dram_.send_at(r, now_, *this);
      ++sent;
      continue;
    }
    dram_.channels_of(r, needed);
    for (const int ch : needed) touch(ch);
    while (!dram_.will_accept(r)) {
      // Refused: the event-driven feeder retries after every column command of any channel,
      // and only one that frees an entry of a needed channel can change the answer; the
      // retries before it send nothing. So the next action is at the first column command
      // of the needed channels (taken in cycle order among them).
      Cycle column = kNoCycle;
      while (column == kNoCycle) {
        int first = -1;
        for (const int ch : needed) {
          if (next_[ch] != kNoCycle && (first < 0 || next_[ch] < next_[first])) first = ch;
        }
        FUSIM_ASSERT(first >= 0, "replay refused with the needed DRAM channels idle");
        if (dram_.next_is_column(first))
          column = next_[first];
        else
          issue(first);
      }
      begin_action(column);  // the retry that gets through
      for (const int ch : needed) touch(ch);
    }
    dram_.send_at(r, now_, *this);  // updates its channels' next commands (on_request)
    ++sent;
  }
  // After the last send: every channel as the event-driven replay has it then, and that
  // replay's pending events (superseded ones first, as they were scheduled first) handed to
  // per-channel wake-ups on the real queue.
  for (int ch = 0; ch < n; ++ch) touch(ch);
  std::vector<std::pair<Tick, int>> later;
  for (const auto& w : superseded_)
    if (w.first > now_) later.push_back(w);
  auto wake = std::make_unique<PerChannelWake>(dram_, queue_);
  wake->resume(wake_at_, later);
  dram_.set_wake_policy(std::move(wake));
  return sent;
}

}  // namespace fusim::dram

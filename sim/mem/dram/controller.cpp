#include "mem/dram/controller.h"

#include <algorithm>

#include "core/error.h"

namespace fusim::dram {

ChannelController::ChannelController(const DramSpec& spec, int channel,
                                     std::unique_ptr<Scheduler> scheduler, DramStats& stats)
    : spec_(spec),
      t_(spec.t),
      channel_(channel),
      banks_per_rank_(spec.org.banks_per_rank()),
      banks_per_group_(spec.org.banks_per_group),
      read_cap_(static_cast<std::size_t>(spec.ctrl.read_queue)),
      write_cap_(static_cast<std::size_t>(spec.ctrl.write_queue)),
      write_low_(static_cast<std::size_t>(spec.ctrl.write_low_watermark)),
      write_high_(static_cast<std::size_t>(spec.ctrl.write_high_watermark)),
      // Per-bank refresh visits every bank of a rank once per tREFI (JESD235 REFpb,
      // JESD79-5 REFsb), so one command per tREFI / banks unless the preset says otherwise.
      refresh_interval_(spec.ctrl.refresh == RefreshMode::AllBank ? spec.t.tREFI
                        : spec.t.tREFIpb > 0                      ? spec.t.tREFIpb
                                             : spec.t.tREFI / spec.org.banks_per_rank()),
      scheduler_(std::move(scheduler)),
      order_(scheduler_->order()),
      stats_(stats),
      timing_(spec.org, spec.t),
      banks_(spec.org.banks_per_channel()),
      open_cycles_at_(static_cast<std::size_t>(channel) * banks_.size()),
      open_in_rank_(spec.org.ranks, 0),
      refresh_due_(spec.org.ranks),
      refresh_bank_(spec.org.ranks, 0),
      words_((banks_.size() + 63) / 64),
      committed_(2 * words_, 0),
      block_at_(FirstReadyChoice::lanes(spec.org.banks_per_channel()), kNoCycle),
      queues_(spec.ctrl, spec.org.banks_per_channel(), scheduler_->row_hit_cap(), banks_),
      first_ready_(spec, order_, queues_, banks_, timing_, block_at_) {
  for (int b = 0; b < spec.org.banks_per_channel(); ++b) {
    bank_rank_.push_back(static_cast<std::uint8_t>(b / banks_per_rank_));
    bank_group_.push_back(static_cast<std::uint8_t>((b % banks_per_rank_) / banks_per_group_));
  }
  scheduler_->set_stats(&stats_);
  // Ranks refresh staggered over the interval so they are not all busy at once.
  for (int r = 0; r < spec.org.ranks; ++r) {
    refresh_due_[r] = refresh_interval_ + r * refresh_interval_ / spec.org.ranks;
    update_block_at(r);
  }
}

void ChannelController::update_block_at(int r) {
  next_refresh_ = *std::min_element(refresh_due_.begin(), refresh_due_.end());
  const bool all_bank = spec_.ctrl.refresh == RefreshMode::AllBank;
  for (int b = r * banks_per_rank_; b < (r + 1) * banks_per_rank_; ++b) {
    block_at_[b] =
        all_bank || b == r * banks_per_rank_ + refresh_bank_[r] ? refresh_due_[r] : kNoCycle;
  }
}

void ChannelController::enqueue(const QueueEntry& e, bool whole_block) {
  FUSIM_ASSERT(whole_block || has_room(e.is_write),
               "enqueue into a full DRAM queue (will_accept not asked)");
  if (idle()) catch_up(e.arrival);
  // Decisions are made from the moment a request arrives: one that was possible earlier
  // (a write that becomes eligible when writes reach the watermark) issues now, not then.
  floor_ = std::max(floor_, e.arrival);
  scheduler_->on_arrival(e.requester, e.arrival);
  const int q = e.is_write ? 1 : 0;
  bool changed = false;
  queues_.add(e, changed);
  if (changed) first_ready_.invalidate(q, e.flat_bank);
  if (decided_ && !update_decision(q, e.flat_bank)) decided_ = false;
}

// After enqueue() added a request to `bank` of queue `q`, with decision_ made before it:
// brings decision_ up to date and returns true where the new request alone can be weighed
// (first-ready order), false where decide() has to run again. The earlier decision stays
// valid when the new arrival does not lift the decision floor past it (every candidate's
// ready cycle stays the same), the write mode does not turn, and the request either joins
// the other queue or leaves its bank's candidate as it was; otherwise only its bank's
// candidate is new, and it wins or not against the earlier best request.
bool ChannelController::update_decision(int q, int bank) {
  if (order_ != Scheduler::Order::FirstReady || decision_->cycle == kNoCycle) return false;
  const Cycle base = std::max(last_command_ + 1, floor_);
  if (base > decision_->cycle) return false;
  const std::size_t reads = queues_.size(0), writes = queues_.size(1);
  if (turns(reads, writes)) return false;
  if (q != (write_mode_ ? 1 : 0)) return true;
  if (!first_ready_.stale(q, bank)) return true;
  // The policy closes read the summaries too; the best request's own bank changed.
  if (!closable_.empty() || (request_.cycle != kNoCycle && request_.bank == bank)) return false;
  first_ready_.weigh(q, bank, base, request_);
  decision_ = earliest();
  return true;
}

void ChannelController::catch_up(Cycle until) {
  FUSIM_ASSERT(idle(), "catch_up with requests queued");
  // An idle channel's only commands are policy closes and refreshes, and a refresh (or the
  // precharge before it) never issues before its due cycle: with no close pending and every
  // rank due at or after `until`, decide() would find nothing before it and only leave the
  // write mode, so that is all there is to do (the usual case for a channel that idles
  // between requests, e.g. an HBM pseudo-channel at moderate load).
  if (closable_.empty()) {
    Cycle due = kNoCycle;
    for (const Cycle d : refresh_due_) due = std::min(due, d);
    if (due >= until) {
      write_mode_ = false;
      decided_ = false;
      return;
    }
  }
  for (;;) {
    decide();
    if (decision_->cycle >= until) break;
    execute(*decision_);
  }
  decided_ = false;
}

ColumnServed ChannelController::issue() {
  if (!decided_) decide();
  decided_ = false;
  const Decision& d = *decision_;  // (a part of the last decide(): execute() leaves it be)
  FUSIM_ASSERT(d.cycle != kNoCycle, "issue() with nothing to issue");
  execute(d);
  ColumnServed served;
  if (d.cmd != Command::RD && d.cmd != Command::WR) return served;
  // (A column command always serves a request: execute() set its outcome.)
  const QueueEntry& e = queues_.queue(d.queue)[d.entry];
  served.valid = true;
  served.is_write = e.is_write;
  served.row_hit = e.outcome == kHit;
  served.token = e.token;
  served.requester = e.requester;
  // Data is complete at the end of the burst: RL + BL/2 after a read, WL + BL/2 after a
  // write (JESD79-4 §4.21/§4.22).
  served.issued = d.cycle;
  served.done = d.cycle + (e.is_write ? t_.tCWL : t_.tCL) + t_.tBL;
  queues_.remove(d.queue, d.entry);  // (its candidate: execute() marked the bank's stale)
  ++freed_;
  return served;
}

void ChannelController::decide() {
  decided_ = true;
  // One command per cycle on the command bus, and never before the latest arrival.
  const Cycle base = std::max(last_command_ + 1, floor_);
  if (turns(queues_.size(0), queues_.size(1))) write_mode_ = !write_mode_;
  const int q = write_mode_ ? 1 : 0;

  // Requests of the active queue. (The four parts are worked out in place, where
  // update_decision finds them; a part with nothing to offer only has its cycle reset.)
  request_.cycle = kNoCycle;
  if (order_ == Scheduler::Order::Generic) {
    queues_.set_hit_cap(scheduler_->row_hit_cap());
    choose_generic(q, base, request_);
  } else if (!queues_.queue(q).empty()) {
    first_ready_.choose(q, base, request_);
  }
  committed_column_.cycle = kNoCycle;
  if (committed_count_[1 - q] != 0) choose_committed(q, base);
  close_.cycle = kNoCycle;
  if (!closable_.empty()) choose_close(q, base);

  // Refresh: due commands of every rank (precharges first, then the refresh itself). A
  // refresh command never issues before its due cycle, so a rank due after the request or
  // close found above cannot win (it would lose even a tie) and is not looked at.
  const Cycle bound = std::min({request_.cycle, committed_column_.cycle, close_.cycle});
  refresh_.cycle = kNoCycle;
  if (std::max(base, next_refresh_) <= bound) choose_refresh(base, bound);

  decision_ = earliest();
}

// Row-policy precharges (closed, open-timeout, open-cap): the earliest.
void ChannelController::choose_close(int q, Cycle base) {
  Decision& close = close_;
  for (int bank : closable_) {
    const BankRow& b = banks_[bank];
    if (b.open_row < 0) continue;
    if (b.commit_queue >= 0 && b.commit_queue != q) continue;  // its request first
    const BankQueues::Summary& s = queues_.summary(q, bank);
    if (s.hit_seq != BankQueues::kNone && !queues_.capped(bank, s)) continue;
    const int r = bank_rank_[bank];
    const int g = bank_group_[bank];
    Cycle ready = std::max(base, timing_.earliest(Command::PRE, r, g, bank));
    if (spec_.ctrl.row_policy == RowPolicy::OpenTimeout) {
      ready = std::max(ready, b.last_column + spec_.ctrl.row_timeout);
    }
    if (ready < close.cycle) {
      close.cycle = ready, close.cmd = Command::PRE, close.rank = r, close.group = g;
      close.bank = bank, close.entry = -1;
    }
  }
}

// The due refresh commands of every rank that could issue by `bound`: the earliest.
void ChannelController::choose_refresh(Cycle base, Cycle bound) {
  const bool all_bank = spec_.ctrl.refresh == RefreshMode::AllBank;
  Decision& refresh = refresh_;
  const int ranks = static_cast<int>(refresh_due_.size());
  for (int r = 0; r < ranks; ++r) {
    const Cycle low = std::max(base, refresh_due_[r]);
    if (low > bound || low >= refresh.cycle) continue;
    Decision d;
    d.rank = r;
    if (all_bank) {
      if (open_in_rank_[r] > 0) {
        for (int b = r * banks_per_rank_; b < (r + 1) * banks_per_rank_; ++b) {
          if (banks_[b].open_row < 0) continue;
          const int g = bank_group_[b];
          const Cycle e = std::max(low, timing_.earliest(Command::PRE, r, g, b));
          if (e < d.cycle) d.cycle = e, d.cmd = Command::PRE, d.group = g, d.bank = b;
        }
      } else {
        d.cmd = Command::REFab;
        d.cycle = std::max(low, timing_.earliest(Command::REFab, r, 0, 0));
      }
    } else {
      const int b = r * banks_per_rank_ + refresh_bank_[r];
      d.bank = b;
      d.group = bank_group_[b];
      d.cmd = banks_[b].open_row >= 0 ? Command::PRE : Command::REFpb;
      d.cycle = std::max(low, timing_.earliest(d.cmd, r, d.group, b));
    }
    if (d.cycle < refresh.cycle) refresh = d;
  }
}

// Schedulers that weigh more than first-ready order (stream-aware) see every request of
// the active queue, in age order, with the cycle its next command could issue.
void ChannelController::choose_generic(int q, Cycle base, Decision& request) {
  const RequestQueue& queue = queues_.queue(q);
  candidates_.clear();
  candidate_entry_.clear();
  candidate_cmd_.clear();
  for (int i = queue.first(); i != RequestQueue::kEnd; i = queue.next(i)) {
    const QueueEntry& e = queue[i];
    const BankRow& b = banks_[e.flat_bank];
    const BankQueues::Summary& s = queues_.summary(q, e.flat_bank);
    Command cmd;
    bool hit = false;
    if (b.open_row < 0) {
      cmd = Command::ACT;
    } else if (b.open_row == e.row && !queues_.capped(e.flat_bank, s)) {
      cmd = e.is_write ? Command::WR : Command::RD;
      hit = true;
    } else {
      // Never close a row that a queued request still hits (unless its hits are capped),
      // nor one opened for a request of the other queue (choose_committed serves it).
      if (s.hit_seq != BankQueues::kNone && !queues_.capped(e.flat_bank, s)) continue;
      if (b.commit_queue >= 0 && b.commit_queue != q) continue;
      cmd = Command::PRE;
    }
    const Cycle ready =
        std::max({base, e.arrival, timing_.earliest(cmd, e.rank, e.bankgroup, e.flat_bank)});
    if (ready >= block_at_[e.flat_bank]) continue;  // blocked by a due refresh
    candidates_.push_back(Candidate{ready, e.arrival, e.requester, hit});
    candidate_entry_.push_back(i);
    candidate_cmd_.push_back(cmd);
  }
  if (candidates_.empty()) return;
  const std::size_t k = scheduler_->pick(candidates_.data(), candidates_.size());
  const QueueEntry& e = queue[candidate_entry_[k]];
  request.cycle = candidates_[k].ready;
  request.cmd = candidate_cmd_[k];
  request.rank = e.rank;
  request.group = e.bankgroup;
  request.bank = e.flat_bank;
  request.row = e.row;
  request.entry = candidate_entry_[k];
  request.queue = q;
}

// The column commands of requests of the other queue (not `q`) whose rows were activated
// for them: the earliest, the oldest among equals. Such a row is closed by no command of
// queue q (FirstReadyChoice and choose_generic leave its precharge out), so the request
// is served while the controller drains the other queue, as DRAMsim3's per-bank command
// queues serve a command already queued for a bank whatever the transaction queue it came
// from (controller.cc ScheduleTransaction / command_queue.cc GetFirstReadyInQueue). In its
// own queue it is a row hit like any other (and a hit is not closed for a conflict).
void ChannelController::choose_committed(int q, Cycle base) {
  Decision& best = committed_column_;
  std::uint64_t best_seq = BankQueues::kNone;
  const std::uint64_t* const committed = &committed_[(1 - q) * words_];
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = committed[w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      const BankRow& b = banks_[bank];
      const QueueEntry& e = queues_.queue(b.commit_queue)[b.commit_slot];
      const Command cmd = b.commit_queue ? Command::WR : Command::RD;
      const Cycle ready = std::max(base, timing_.earliest(cmd, e.rank, e.bankgroup, bank));
      if (ready >= block_at_[bank]) continue;  // the due refresh first (and it closes the row)
      // (The earliest, the oldest among equals: ages are unique, so the order in which the
      // banks are looked at never matters.)
      if (ready < best.cycle || (ready == best.cycle && e.seq < best_seq)) {
        best.cycle = ready, best.cmd = cmd, best.rank = e.rank, best.group = e.bankgroup;
        best.bank = bank, best.row = e.row, best.entry = b.commit_slot, best.queue = b.commit_queue;
        best_seq = e.seq;
      }
    }
  }
}

void ChannelController::clear_commit(int flat_bank) {
  BankRow& b = banks_[flat_bank];
  committed_[b.commit_queue * words_ + flat_bank / 64] &= ~(std::uint64_t{1} << (flat_bank % 64));
  --committed_count_[b.commit_queue];
  b.commit_queue = b.commit_slot = -1;
}

void ChannelController::close_bank(int flat_bank, Cycle at) {
  BankRow& b = banks_[flat_bank];
  stats_.bank_open_cycles[open_cycles_at_ + flat_bank] +=
      static_cast<std::uint64_t>(at - b.opened_at);
  b.open_row = -1;
  b.accesses = 0;
  if (b.commit_queue >= 0) clear_commit(flat_bank);  // (a refresh's precharge)
  row_changed(flat_bank);
  --open_in_rank_[bank_rank_[flat_bank]];
  if (b.close_flag) {
    b.close_flag = false;
    closable_.erase(std::find(closable_.begin(), closable_.end(), flat_bank));
  }
}

void ChannelController::notify(const Decision& d) const {
  IssuedCommand c;
  c.cycle = d.cycle;
  c.command = d.cmd;
  c.channel = channel_;
  c.rank = d.rank;
  c.bankgroup = d.group;
  c.bank = (d.bank % banks_per_rank_) % banks_per_group_;
  c.row = d.cmd == Command::ACT                          ? d.row
          : d.cmd == Command::RD || d.cmd == Command::WR ? banks_[d.bank].open_row
                                                         : -1;
  (*observer_)(c);
}

void ChannelController::execute(const Decision& d) {
  timing_.issue(d.cmd, d.rank, d.group, d.bank, d.cycle);
  last_command_ = d.cycle;
  if (observer_) notify(d);
  BankRow& b = banks_[d.bank];
  // (A command moves only timing, which FirstReadyChoice reads live: a bank's candidates
  // are worked out again where its row, requests, column count or commit change.)
  switch (d.cmd) {
    case Command::ACT:
      b.open_row = d.row;
      b.opened_at = d.cycle;
      b.accesses = 0;
      ++open_in_rank_[d.rank];
      row_changed(d.bank);
      ++stats_.activates;
      if (d.entry >= 0) {
        QueueEntry& e = queues_.queue(d.queue)[d.entry];
        if (e.outcome == 0) e.outcome = kMiss;
        b.commit_queue = d.queue, b.commit_slot = d.entry;
        committed_[d.queue * words_ + d.bank / 64] |= std::uint64_t{1} << (d.bank % 64);
        ++committed_count_[d.queue];
      }
      break;
    case Command::PRE:
      close_bank(d.bank, d.cycle);
      ++stats_.precharges;
      if (d.entry >= 0) {
        QueueEntry& e = queues_.queue(d.queue)[d.entry];
        if (e.outcome == 0) e.outcome = kConflict;
      }
      break;
    case Command::RD:
    case Command::WR: {
      // The bank's column count (the caps) and maybe its commit move: both queues' candidates.
      first_ready_.invalidate(d.bank);
      QueueEntry& e = queues_.queue(d.queue)[d.entry];
      if (e.outcome == 0) e.outcome = kHit;
      if (b.commit_queue == d.queue && b.commit_slot == d.entry) clear_commit(d.bank);
      stats_.row_hits += e.outcome == kHit;
      stats_.row_misses += e.outcome == kMiss;
      stats_.row_conflicts += e.outcome == kConflict;
      ++(d.cmd == Command::RD ? stats_.column_reads : stats_.column_writes);
      ++b.accesses;
      b.last_column = d.cycle;
      scheduler_->on_column(e.requester, e.outcome == kHit, e.arrival, d.cycle);
      const RowPolicy p = spec_.ctrl.row_policy;
      const bool want_close = p == RowPolicy::Closed || p == RowPolicy::OpenTimeout ||
                              (p == RowPolicy::OpenCap && b.accesses >= spec_.ctrl.row_cap);
      if (want_close && !b.close_flag) {
        b.close_flag = true;
        closable_.push_back(d.bank);
      }
      break;
    }
    case Command::REFab:
      ++stats_.refreshes;
      refresh_due_[d.rank] += refresh_interval_;
      update_block_at(d.rank);
      break;
    case Command::REFpb:
      ++stats_.per_bank_refreshes;
      refresh_bank_[d.rank] = (refresh_bank_[d.rank] + 1) % banks_per_rank_;
      refresh_due_[d.rank] += refresh_interval_;
      update_block_at(d.rank);
      break;
  }
}

void ChannelController::add_open_cycles(Cycle now, std::vector<std::uint64_t>& out,
                                        std::size_t offset) const {
  for (std::size_t b = 0; b < banks_.size(); ++b) {
    if (banks_[b].open_row >= 0 && now > banks_[b].opened_at) {
      out[offset + b] += static_cast<std::uint64_t>(now - banks_[b].opened_at);
    }
  }
}

}  // namespace fusim::dram

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
      bankgroups_(spec.org.bankgroups),
      read_cap_(static_cast<std::size_t>(spec.ctrl.read_queue)),
      write_cap_(static_cast<std::size_t>(spec.ctrl.write_queue)),
      // Per-bank refresh visits every bank of a rank once per tREFI (JESD235 REFpb,
      // JESD79-5 REFsb), so one command per tREFI / banks unless the preset says otherwise.
      refresh_interval_(spec.ctrl.refresh == RefreshMode::AllBank ? spec.t.tREFI
                        : spec.t.tREFIpb > 0                      ? spec.t.tREFIpb
                                             : spec.t.tREFI / spec.org.banks_per_rank()),
      scheduler_(std::move(scheduler)),
      hit_cap_(scheduler_->row_hit_cap()),
      stats_(stats),
      timing_(spec.org, spec.t),
      banks_(spec.org.banks_per_channel()),
      open_in_rank_(spec.org.ranks, 0),
      refresh_due_(spec.org.ranks),
      refresh_bank_(spec.org.ranks, 0),
      block_at_(spec.org.banks_per_channel(), kNoCycle),
      reads_(read_cap_, spec.org.banks_per_channel()),
      writes_(write_cap_, spec.org.banks_per_channel()),
      order_(scheduler_->order()),
      bank_queues_(2 * static_cast<std::size_t>(spec.org.banks_per_channel())),
      words_((static_cast<std::size_t>(spec.org.banks_per_channel()) + 63) / 64) {
  occupied_.assign(2 * words_, 0);
  for (int b = 0; b < spec.org.banks_per_channel(); ++b) {
    bank_rank_.push_back(static_cast<std::uint8_t>(b / banks_per_rank_));
    bank_group_.push_back(static_cast<std::uint8_t>((b % banks_per_rank_) / banks_per_group_));
    bank_group_slot_.push_back(
        static_cast<std::uint16_t>(bank_rank_.back() * bankgroups_ + bank_group_.back()));
  }
  // Ranks refresh staggered over the interval so they are not all busy at once.
  for (int r = 0; r < spec.org.ranks; ++r) {
    refresh_due_[r] = refresh_interval_ + r * refresh_interval_ / spec.org.ranks;
    update_block_at(r);
  }
}

void ChannelController::update_block_at(int r) {
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
  const int q = e.is_write ? 1 : 0;
  RequestQueue& queue = q ? writes_ : reads_;
  const int slot = queue.push_back(e);
  QueueEntry& added = queue[slot];
  added.seq = next_seq_++;
  // The newest request: it changes a clean summary only where the bank had none of its kind.
  BankQueue& bq = bank_queues_[q * banks_.size() + e.flat_bank];
  if (!bq.dirty) {
    if (banks_[e.flat_bank].open_row >= 0 && banks_[e.flat_bank].open_row == e.row) {
      if (bq.hit_seq == kNone) bq.hit_seq = added.seq, bq.hit_slot = slot, bq.stale = true;
    } else if (bq.other_seq == kNone) {
      bq.other_seq = added.seq, bq.other_slot = slot, bq.stale = true;
    }
  }
  ++bq.count;
  occupied_[q * words_ + e.flat_bank / 64] |= std::uint64_t{1} << (e.flat_bank % 64);
  if (decided_ && !update_decision(q, e.flat_bank)) decided_ = false;
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
    if (decision_.cycle >= until) break;
    execute(decision_);
  }
  decided_ = false;
}

ColumnServed ChannelController::issue() {
  if (!decided_) decide();
  const Decision d = decision_;
  FUSIM_ASSERT(d.cycle != kNoCycle, "issue() with nothing to issue");
  ColumnServed served;
  if (d.entry >= 0 && (d.cmd == Command::RD || d.cmd == Command::WR)) {
    auto& q = write_mode_ ? writes_ : reads_;
    const QueueEntry e = q[d.entry];
    execute(d);
    const int younger = q.bank_next(d.entry);
    q.erase(d.entry);
    const int qi = e.is_write ? 1 : 0;
    BankQueue& bq = bank_queues_[qi * banks_.size() + e.flat_bank];
    if (--bq.count == 0) {
      bq = BankQueue{};
      occupied_[qi * words_ + e.flat_bank / 64] &= ~(std::uint64_t{1} << (e.flat_bank % 64));
    } else if (e.seq == bq.hit_seq && !bq.dirty) {
      // The bank's oldest hit left and its row stays open: the oldest other request is
      // the same, and the next hit is among the younger requests (in a stream, the next).
      bq.hit_seq = kNone, bq.hit_slot = -1;
      const std::int64_t open = banks_[e.flat_bank].open_row;
      for (int s = younger; s != RequestQueue::kEnd; s = q.bank_next(s)) {
        if (q[s].row == open) {
          bq.hit_seq = q[s].seq, bq.hit_slot = s;
          break;
        }
      }
      bq.stale = true;
    } else if (e.seq == bq.hit_seq || e.seq == bq.other_seq) {
      bq.dirty = bq.stale = true;
    }
    served.valid = true;
    served.is_write = e.is_write;
    served.row_hit = e.outcome == kHit || e.outcome == 0;
    served.token = e.token;
    served.requester = e.requester;
    // Data is complete at the end of the burst: RL + BL/2 after a read, WL + BL/2 after a
    // write (JESD79-4 §4.21/§4.22).
    served.issued = d.cycle;
    served.done = d.cycle + (e.is_write ? t_.tCWL : t_.tCL) + t_.tBL;
  } else {
    execute(d);
  }
  decided_ = false;
  return served;
}

void ChannelController::decide() {
  decided_ = true;
  // One command per cycle on the command bus, and never before the latest arrival.
  const Cycle base = std::max(last_command_ + 1, floor_);
  // Write draining with watermarks: switch to writes when they pile up (or nothing else
  // waits), back to reads once they are drained to the low watermark.
  if (write_mode_) {
    if (writes_.empty() ||
        (!reads_.empty() &&
         writes_.size() <= static_cast<std::size_t>(spec_.ctrl.write_low_watermark))) {
      write_mode_ = false;
    }
  } else if (writes_.size() >= static_cast<std::size_t>(spec_.ctrl.write_high_watermark) ||
             (reads_.empty() && !writes_.empty())) {
    write_mode_ = true;
  }

  const bool all_bank = spec_.ctrl.refresh == RefreshMode::AllBank;
  // Requests of the active queue.
  // (The three parts are worked out in place, where update_decision finds them.)
  Decision& request = request_;
  request = Decision{};
  if (order_ == Scheduler::Order::Generic)
    decide_requests_generic(base, all_bank, request);
  else
    decide_requests(base, all_bank, request);
  const int q = write_mode_ ? 1 : 0;

  // Row-policy precharges (closed, open-timeout, open-cap).
  Decision& close = close_;
  close = Decision{};
  for (int bank : closable_) {
    const BankState& b = banks_[bank];
    if (b.open_row < 0) continue;
    const BankQueue& bq = bank_queue(q, bank);
    if (bq.hit_seq != kNone && !capped(bank, bq)) continue;
    const int r = bank_rank_[bank];
    const int g = bank_group_[bank];
    Cycle ready = std::max(base, timing_.earliest(Command::PRE, r, g, bank));
    if (spec_.ctrl.row_policy == RowPolicy::OpenTimeout) {
      ready = std::max(ready, b.last_column + spec_.ctrl.row_timeout);
    }
    if (ready < close.cycle) {
      close.cycle = ready, close.cmd = Command::PRE, close.rank = r, close.group = g;
      close.bank = bank;
    }
  }

  // Refresh: due commands of every rank (precharges first, then the refresh itself). A
  // refresh command never issues before its due cycle, so a rank due after the request or
  // close found above cannot win (it would lose even a tie) and is not looked at.
  const Cycle bound = std::min(request.cycle, close.cycle);
  Decision& refresh = refresh_;
  refresh = Decision{};
  for (int r = 0; r < static_cast<int>(refresh_due_.size()); ++r) {
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
    consider(refresh, d);
  }

  // Refresh wins ties, then requests, then policy closes.
  const Decision* chosen = &refresh;
  if (request.cycle < chosen->cycle) chosen = &request;
  if (close.cycle < chosen->cycle) chosen = &close;
  decision_ = *chosen;
}

ChannelController::BankQueue& ChannelController::bank_queue(int q, int bank) {
  BankQueue& bq = bank_queues_[q * banks_.size() + bank];
  if (bq.dirty) rescan(q, bank);
  return bq;
}

void ChannelController::rescan(int q, int bank) {
  BankQueue& bq = bank_queues_[q * banks_.size() + bank];
  const std::int64_t open = banks_[bank].open_row;
  bq.hit_seq = bq.other_seq = kNone;
  bq.hit_slot = bq.other_slot = -1;
  bq.dirty = false;
  bq.stale = true;
  const RequestQueue& queue = q ? writes_ : reads_;
  if (open < 0) {  // a closed bank: no hits, the oldest is the oldest other
    const int s = queue.bank_first(bank);
    if (s != RequestQueue::kEnd) bq.other_seq = queue[s].seq, bq.other_slot = s;
    return;
  }
  for (int s = queue.bank_first(bank); s != RequestQueue::kEnd; s = queue.bank_next(s)) {
    const QueueEntry& e = queue[s];
    if (open >= 0 && e.row == open) {
      if (bq.hit_seq == kNone) bq.hit_seq = e.seq, bq.hit_slot = s;
    } else if (bq.other_seq == kNone) {
      bq.other_seq = e.seq, bq.other_slot = s;
    }
    if (bq.hit_seq != kNone && bq.other_seq != kNone) return;
  }
}

void ChannelController::close_bank(int flat_bank, Cycle at) {
  BankState& b = banks_[flat_bank];
  stats_.bank_open_cycles[static_cast<std::size_t>(channel_) * banks_.size() + flat_bank] +=
      static_cast<std::uint64_t>(at - b.opened_at);
  b.open_row = -1;
  b.accesses = 0;
  mark_row_changed(flat_bank);
  --open_in_rank_[bank_rank_[flat_bank]];
  if (b.close_flag) {
    b.close_flag = false;
    closable_.erase(std::find(closable_.begin(), closable_.end(), flat_bank));
  }
}

void ChannelController::execute(const Decision& d) {
  timing_.issue(d.cmd, d.rank, d.group, d.bank, d.cycle);
  // A command to a bank moves its bank-level timing (and a column its hit-cap count).
  if (d.cmd != Command::REFab) mark_stale(d.bank);
  last_command_ = d.cycle;
  if (observer_ && *observer_) {
    IssuedCommand c;
    c.cycle = d.cycle;
    c.command = d.cmd;
    c.channel = channel_;
    c.rank = d.rank;
    c.bankgroup = d.group;
    c.bank = (d.bank % banks_per_rank_) % banks_per_group_;
    c.row = d.cmd == Command::ACT || d.cmd == Command::RD || d.cmd == Command::WR
                ? banks_[d.bank].open_row
                : -1;
    if (d.cmd == Command::ACT) c.row = d.row;
    (*observer_)(c);
  }
  QueueEntry* e = nullptr;
  if (d.entry >= 0) e = &(write_mode_ ? writes_ : reads_)[d.entry];
  BankState& b = banks_[d.bank];
  switch (d.cmd) {
    case Command::ACT:
      b.open_row = d.row;
      b.opened_at = d.cycle;
      b.accesses = 0;
      ++open_in_rank_[d.rank];
      mark_row_changed(d.bank);
      ++stats_.activates;
      if (e && e->outcome == 0) e->outcome = kMiss;
      break;
    case Command::PRE:
      close_bank(d.bank, d.cycle);
      ++stats_.precharges;
      if (e && e->outcome == 0) e->outcome = kConflict;
      break;
    case Command::RD:
    case Command::WR: {
      if (e->outcome == 0) e->outcome = kHit;
      switch (e->outcome) {
        case kHit:
          ++stats_.row_hits;
          break;
        case kMiss:
          ++stats_.row_misses;
          break;
        default:
          ++stats_.row_conflicts;
          break;
      }
      ++(d.cmd == Command::RD ? stats_.column_reads : stats_.column_writes);
      ++b.accesses;
      b.last_column = d.cycle;
      scheduler_->on_column(e->requester, e->outcome == kHit, d.cycle);
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

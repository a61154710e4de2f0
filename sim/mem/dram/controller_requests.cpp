// The request half of ChannelController::decide(): which queued request's next command
// issues first. Two ways to the same answer. First-ready schedulers (FCFS, FR-FCFS and its
// capped form) look only at each occupied bank's oldest row hit and oldest other request
// (the BankQueue summaries): within one bank and class every request has the same next
// command and so the same ready cycle (arrivals never exceed the decision floor), hence
// the oldest of them is the only one such a scheduler could pick. That makes a decision
// O(occupied banks) instead of O(queue). Generic schedulers get every request, in age
// order, as before. tests/dram/command_stream_test.cpp pins that both give the command
// stream of the original queue-scanning controller.
#include <algorithm>

#include "core/error.h"
#include "mem/dram/controller.h"

namespace fusim::dram {

void ChannelController::refresh_candidate(BankQueue& bq, int q, int bank) {
  if (bq.dirty) rescan(q, bank);
  bq.stale = false;
  const BankState& b = banks_[bank];
  bq.hit = false;
  if (b.open_row < 0) {
    // A closed bank: every request activates.
    bq.cmd = Command::ACT, bq.seq = bq.other_seq, bq.slot = bq.other_slot;
  } else if (capped(bank, bq)) {
    // Capped hits lose their status: every request of the bank wants the precharge.
    bq.cmd = Command::PRE;
    const bool hit_older = bq.hit_seq < bq.other_seq;
    bq.seq = hit_older ? bq.hit_seq : bq.other_seq;
    bq.slot = hit_older ? bq.hit_slot : bq.other_slot;
  } else if (bq.hit_seq != kNone) {
    // (its conflicts wait: never close a hit)
    bq.cmd = q ? Command::WR : Command::RD, bq.hit = true, bq.seq = bq.hit_seq;
    bq.slot = bq.hit_slot;
  } else {
    bq.cmd = Command::PRE, bq.seq = bq.other_seq, bq.slot = bq.other_slot;
  }
  const int k = static_cast<int>(bq.cmd);
  bq.bank_ready = timing_.bank_level(bq.cmd, bank);
  bq.group_level = timing_.group_levels() + bank_group_slot_[bank] * kCommandKinds + k;
  bq.rank_level = timing_.rank_levels() + bank_rank_[bank] * kCommandKinds + k;
  bq.key_low = static_cast<std::uint64_t>(!bq.hit) << kHitShift | static_cast<std::uint64_t>(bank);
}

// First-ready choice as one branch-free pass: each occupied bank's candidate becomes the
// key (ready - base, not a hit, age, bank) packed into 64 bits, and the smallest key wins:
// the same lexicographic order as decide_requests_scan (ages are unique, so the bank in
// the lowest bits never decides, it only names the winner). A field that would not fit
// (a ready cycle 2^24 cycles ahead, 2^32 requests between the oldest queued and the
// newest, more than 128 banks) falls back to that scan.
void ChannelController::decide_requests(Cycle base, bool /*all_bank*/, Decision& request) {
  const int qi = write_mode_ ? 1 : 0;
  const RequestQueue& q = write_mode_ ? writes_ : reads_;
  if (order_ != Scheduler::Order::FirstReady || q.empty() ||
      next_seq_ - q.front().seq >= (std::uint64_t{1} << kAgeBits) ||
      banks_.size() > (std::size_t{1} << kBankBits)) {
    decide_requests_scan(base, spec_.ctrl.refresh == RefreshMode::AllBank, request);
    return;
  }
  const std::uint64_t seq0 = q.front().seq;  // the oldest queued: the age origin
  BankQueue* const queues = &bank_queues_[qi * banks_.size()];
  const Cycle* const block_at = block_at_.data();
  std::uint64_t best = UINT64_MAX, far = 0;
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = occupied_[qi * words_ + w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      BankQueue& bq = queues[bank];
      if (bq.stale) refresh_candidate(bq, qi, bank);
      const Cycle e = std::max(bq.bank_ready, std::max(*bq.group_level, *bq.rank_level));
      const Cycle ready = std::max(base, e);
      const auto delta = static_cast<std::uint64_t>(ready - base);
      far |= delta >> 24;
      // A due refresh blocks its rank (all-bank) or its bank (per-bank) from then on.
      const std::uint64_t blocked =
          std::uint64_t{0} - static_cast<std::uint64_t>(ready >= block_at[bank]);
      const std::uint64_t key =
          (delta << kDeltaShift | (bq.seq - seq0) << kBankBits | bq.key_low) | blocked;
      best = std::min(best, key);
    }
  }
  if (far != 0) {
    decide_requests_scan(base, spec_.ctrl.refresh == RefreshMode::AllBank, request);
    return;
  }
  if (best == UINT64_MAX) return;
  fill_request(base + static_cast<Cycle>(best >> kDeltaShift),
               static_cast<int>(best & ((std::uint64_t{1} << kBankBits) - 1)), request);
}

// The request of `bank`'s candidate (its BankQueue, fresh) of the active queue, at `cycle`.
void ChannelController::fill_request(Cycle cycle, int bank, Decision& request) {
  const BankQueue& bq = bank_queues_[(write_mode_ ? banks_.size() : 0) + bank];
  request_hit_ = bq.hit;
  request_seq_ = bq.seq;
  const QueueEntry& e = (write_mode_ ? writes_ : reads_)[bq.slot];
  FUSIM_ASSERT(e.seq == bq.seq && e.flat_bank == bank, "decided request not queued");
  request.cycle = cycle;
  request.cmd = bq.cmd;
  request.rank = e.rank;
  request.group = e.bankgroup;
  request.bank = e.flat_bank;
  request.row = e.row;
  request.entry = bq.slot;
}

void ChannelController::decide_requests_scan(Cycle base, bool all_bank, Decision& request) {
  const int qi = write_mode_ ? 1 : 0;
  const bool oldest_only = order_ == Scheduler::Order::Oldest;
  Cycle best_ready = kNoCycle;
  bool best_hit = false;
  std::uint64_t best_seq = kNone;
  int best_bank = -1;
  BankQueue* const queues = &bank_queues_[qi * banks_.size()];
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = occupied_[qi * words_ + w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      BankQueue& bq = queues[bank];
      if (bq.stale) refresh_candidate(bq, qi, bank);
      const Command cmd = bq.cmd;
      const bool hit = bq.hit;
      const std::uint64_t seq = bq.seq;
      if (oldest_only
              ? seq > best_seq
              : !(seq < best_seq || hit > best_hit) && best_bank >= 0 && base >= best_ready) {
        continue;  // cannot beat the best so far whatever its ready cycle
      }
      const int rank = bank_rank_[bank];
      const int group = bank_group_[bank];
      const Cycle ready = std::max(base, timing_.earliest(cmd, rank, group, bank));
      // A due refresh blocks its rank (all-bank) or its bank (per-bank) from then on.
      if (ready >= refresh_due_[rank] &&
          (all_bank || bank == rank * banks_per_rank_ + refresh_bank_[rank])) {
        continue;
      }
      const bool better =
          oldest_only
              ? seq < best_seq
              : ready < best_ready || (ready == best_ready &&
                                       (hit > best_hit || (hit == best_hit && seq < best_seq)));
      if (better) {
        best_ready = ready, best_hit = hit, best_seq = seq, best_bank = bank;
      }
    }
  }
  if (best_bank < 0) return;
  fill_request(best_ready, best_bank, request);
}

void ChannelController::decide_requests_generic(Cycle base, bool all_bank, Decision& request) {
  const int qi = write_mode_ ? 1 : 0;
  const RequestQueue& q = write_mode_ ? writes_ : reads_;
  candidates_.clear();
  candidate_entry_.clear();
  candidate_cmd_.clear();
  for (int i = q.first(); i != RequestQueue::kEnd; i = q.next(i)) {
    const QueueEntry& e = q[i];
    const BankState& b = banks_[e.flat_bank];
    const BankQueue& bq = bank_queue(qi, e.flat_bank);
    Command cmd;
    bool hit = false;
    if (b.open_row < 0) {
      cmd = Command::ACT;
    } else if (b.open_row == e.row && !capped(e.flat_bank, bq)) {
      cmd = e.is_write ? Command::WR : Command::RD;
      hit = true;
    } else {
      // Never close a row that a queued request still hits (unless its hits are capped).
      if (bq.hit_seq != kNone && !capped(e.flat_bank, bq)) continue;
      cmd = Command::PRE;
    }
    const Cycle ready =
        std::max({base, e.arrival, timing_.earliest(cmd, e.rank, e.bankgroup, e.flat_bank)});
    const Cycle due = refresh_due_[e.rank];
    if (ready >= due &&
        (all_bank || e.flat_bank == e.rank * banks_per_rank_ + refresh_bank_[e.rank])) {
      continue;
    }
    candidates_.push_back(Candidate{ready, e.arrival, e.requester, hit});
    candidate_entry_.push_back(i);
    candidate_cmd_.push_back(cmd);
  }
  if (candidates_.empty()) return;
  const std::size_t k = scheduler_->pick(candidates_.data(), candidates_.size());
  const QueueEntry& e = q[candidate_entry_[k]];
  request.cycle = candidates_[k].ready;
  request.cmd = candidate_cmd_[k];
  request.rank = e.rank;
  request.group = e.bankgroup;
  request.bank = e.flat_bank;
  request.row = e.row;
  request.entry = candidate_entry_[k];
}

// After enqueue() added a request to `bank` of queue `q`, with decision_ made before it:
// brings decision_ up to date and returns true where the new request alone can be weighed
// (first-ready order), false where decide() has to run again. The earlier decision stays
// valid when the new arrival does not lift the decision floor past it (every candidate's
// ready cycle stays the same), the write mode does not turn, and the request either joins
// the other queue or leaves its bank's summary as it was; otherwise only its bank's
// candidate is new, and it wins or not against the earlier best request.
bool ChannelController::update_decision(int q, int bank) {
  if (order_ != Scheduler::Order::FirstReady || decision_.cycle == kNoCycle) return false;
  const Cycle base = std::max(last_command_ + 1, floor_);
  if (base > decision_.cycle) return false;
  const std::size_t reads = reads_.size(), writes = writes_.size();
  const bool turn =
      write_mode_
          ? writes == 0 ||
                (reads != 0 && writes <= static_cast<std::size_t>(spec_.ctrl.write_low_watermark))
          : writes >= static_cast<std::size_t>(spec_.ctrl.write_high_watermark) ||
                (reads == 0 && writes != 0);
  if (turn) return false;
  if (q != (write_mode_ ? 1 : 0)) return true;
  BankQueue& bq = bank_queues_[q * banks_.size() + bank];
  if (!bq.stale) return true;
  // The policy closes read the summaries too; the best request's own bank changed.
  if (!closable_.empty() || (request_.cycle != kNoCycle && request_.bank == bank)) return false;
  refresh_candidate(bq, q, bank);
  const int k = static_cast<int>(bq.cmd);
  const int rank = bank_rank_[bank];
  const Cycle ready = std::max(
      base, std::max(bq.bank_ready,
                     std::max(timing_.group_levels()[bank_group_slot_[bank] * kCommandKinds + k],
                              timing_.rank_levels()[rank * kCommandKinds + k])));
  if (ready >= refresh_due_[rank] && (spec_.ctrl.refresh == RefreshMode::AllBank ||
                                      bank == rank * banks_per_rank_ + refresh_bank_[rank])) {
    return true;  // blocked by a due refresh, as in decide_requests
  }
  if (request_.cycle != kNoCycle &&
      !(ready < request_.cycle ||
        (ready == request_.cycle &&
         (bq.hit > request_hit_ || (bq.hit == request_hit_ && bq.seq < request_seq_))))) {
    return true;
  }
  fill_request(ready, bank, request_);
  decision_ = refresh_;
  if (request_.cycle < decision_.cycle) decision_ = request_;
  if (close_.cycle < decision_.cycle) decision_ = close_;
  return true;
}

}  // namespace fusim::dram

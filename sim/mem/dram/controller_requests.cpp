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
    bq.cmd = Command::ACT, bq.seq = bq.other_seq;  // a closed bank: every request activates
  } else if (capped(bank, bq)) {
    // Capped hits lose their status: every request of the bank wants the precharge.
    bq.cmd = Command::PRE, bq.seq = std::min(bq.hit_seq, bq.other_seq);
  } else if (bq.hit_seq != kNone) {
    // (its conflicts wait: never close a hit)
    bq.cmd = q ? Command::WR : Command::RD, bq.hit = true, bq.seq = bq.hit_seq;
  } else {
    bq.cmd = Command::PRE, bq.seq = bq.other_seq;
  }
  bq.bank_ready = timing_.bank_level(bq.cmd, bank);
}

// First-ready choice as one branch-free pass: each occupied bank's candidate becomes the
// key (ready - base, not a hit, age) packed into 64 bits, and the smallest key wins: the
// same lexicographic order as decide_requests_scan. A field that would not fit (a ready
// cycle 2^24 cycles ahead, 2^39 requests in flight) falls back to that scan.
void ChannelController::decide_requests(Cycle base, bool all_bank, Decision& request) {
  const int qi = write_mode_ ? 1 : 0;
  const auto& q = write_mode_ ? writes_ : reads_;
  if (order_ != Scheduler::Order::FirstReady || q.empty() ||
      next_seq_ - q.front().seq >= (std::uint64_t{1} << 39)) {
    decide_requests_scan(base, all_bank, request);
    return;
  }
  const std::uint64_t seq0 = q.front().seq;  // the oldest queued: queues stay in age order
  const Cycle* const group_level = timing_.group_levels();
  const Cycle* const rank_level = timing_.rank_levels();
  BankQueue* const queues = &bank_queues_[qi * banks_.size()];
  std::uint64_t best = UINT64_MAX, far = 0;
  for (std::size_t w = 0; w < words_; ++w) {
    for (std::uint64_t bits = occupied_[qi * words_ + w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      BankQueue& bq = queues[bank];
      if (bq.stale) refresh_candidate(bq, qi, bank);
      const int k = static_cast<int>(bq.cmd);
      const int rank = bank_rank_[bank];
      const Cycle e =
          std::max(bq.bank_ready, std::max(group_level[bank_group_slot_[bank] * kCommandKinds + k],
                                           rank_level[rank * kCommandKinds + k]));
      const Cycle ready = std::max(base, e);
      const auto delta = static_cast<std::uint64_t>(ready - base);
      far |= delta >> 24;
      // A due refresh blocks its rank (all-bank) or its bank (per-bank) from then on.
      const bool blocked = ready >= refresh_due_[rank] &&
                           (all_bank || bank == rank * banks_per_rank_ + refresh_bank_[rank]);
      const std::uint64_t key =
          blocked ? UINT64_MAX
                  : delta << 40 | static_cast<std::uint64_t>(!bq.hit) << 39 | (bq.seq - seq0);
      best = std::min(best, key);  // (no bank kept: its age finds the entry, branch-free)
    }
  }
  if (far != 0) {
    decide_requests_scan(base, all_bank, request);
    return;
  }
  if (best == UINT64_MAX) return;
  Decision chosen;
  chosen.cycle = base + static_cast<Cycle>(best >> 40);
  chosen.cmd = Command::ACT;  // fill_request takes it from the entry's bank
  fill_request(chosen, seq0 + (best & ((std::uint64_t{1} << 39) - 1)), ((best >> 39) & 1) == 0,
               request);
  request.cmd = queues[request.bank].cmd;
}

// `chosen` (cycle and command) for the queued request `seq` of the active queue.
void ChannelController::fill_request(const Decision& chosen, std::uint64_t seq, bool hit,
                                     Decision& request) {
  request_hit_ = hit;
  request_seq_ = seq;
  const auto& q = write_mode_ ? writes_ : reads_;
  // The queue is in age order: a binary search for the entry of age `seq`, its step taken
  // through a mask (the ternary form compiled to a branch that mispredicts half the time).
  const QueueEntry* first = q.data();
  for (std::size_t n = first->seq == seq ? 0 : q.size(); n > 1;) {  // (often the oldest)
    const std::size_t half = n / 2;
    first += half & (std::size_t{0} - static_cast<std::size_t>(first[half - 1].seq < seq));
    n -= half;
  }
  first += static_cast<std::size_t>(first->seq < seq);
  const QueueEntry& e = *first;
  FUSIM_ASSERT(first < q.data() + q.size() && e.seq == seq, "decided request not queued");
  request.cycle = chosen.cycle;
  request.cmd = chosen.cmd;
  request.rank = e.rank;
  request.group = e.bankgroup;
  request.bank = e.flat_bank;
  request.row = e.row;
  request.entry = static_cast<int>(first - q.data());
}

void ChannelController::decide_requests_scan(Cycle base, bool all_bank, Decision& request) {
  const int qi = write_mode_ ? 1 : 0;
  const bool oldest_only = order_ == Scheduler::Order::Oldest;
  Cycle best_ready = kNoCycle;
  bool best_hit = false;
  std::uint64_t best_seq = kNone;
  Command best_cmd = Command::ACT;
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
        best_ready = ready, best_hit = hit, best_seq = seq, best_cmd = cmd, best_bank = bank;
      }
    }
  }
  if (best_bank < 0) return;
  Decision chosen;
  chosen.cycle = best_ready;
  chosen.cmd = best_cmd;
  fill_request(chosen, best_seq, best_hit, request);
}

void ChannelController::decide_requests_generic(Cycle base, bool all_bank, Decision& request) {
  const int qi = write_mode_ ? 1 : 0;
  const auto& q = write_mode_ ? writes_ : reads_;
  candidates_.clear();
  candidate_entry_.clear();
  candidate_cmd_.clear();
  for (std::size_t i = 0; i < q.size(); ++i) {
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
    candidate_entry_.push_back(static_cast<int>(i));
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
  Decision chosen;
  chosen.cycle = ready;
  chosen.cmd = bq.cmd;
  fill_request(chosen, bq.seq, bq.hit, request_);
  decision_ = refresh_;
  if (request_.cycle < decision_.cycle) decision_ = request_;
  if (close_.cycle < decision_.cycle) decision_ = close_;
  return true;
}

}  // namespace fusim::dram

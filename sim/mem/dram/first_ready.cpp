#include "mem/dram/first_ready.h"

#include <algorithm>

#include "core/error.h"

namespace fusim::dram {

FirstReadyChoice::FirstReadyChoice(const DramSpec& spec, Scheduler::Order order, BankQueues& queues,
                                   const std::vector<BankRow>& rows, const BankTiming& timing,
                                   const std::vector<Cycle>& block_at)
    : order_(order),
      banks_(static_cast<std::size_t>(spec.org.banks_per_channel())),
      queues_(queues),
      rows_(rows),
      timing_(timing),
      block_at_(block_at),
      candidates_(2 * banks_) {
  const int per_rank = spec.org.banks_per_rank();
  for (int b = 0; b < spec.org.banks_per_channel(); ++b) {
    const int rank = b / per_rank;
    const int group = (b % per_rank) / spec.org.banks_per_group;
    bank_rank_.push_back(static_cast<std::uint8_t>(rank));
    bank_group_slot_.push_back(static_cast<std::uint16_t>(rank * spec.org.bankgroups + group));
  }
}

void FirstReadyChoice::refresh(Candidate& c, int q, int bank) {
  const BankQueues::Summary& s = queues_.summary(q, bank);
  c.stale = false;
  c.hit = false;
  if (rows_[bank].open_row < 0) {
    // A closed bank: every request activates.
    c.cmd = Command::ACT, c.seq = s.other_seq, c.slot = s.other_slot;
  } else if (queues_.capped(bank, s)) {
    // Capped hits lose their status: every request of the bank wants the precharge.
    c.cmd = Command::PRE;
    const bool hit_older = s.hit_seq < s.other_seq;
    c.seq = hit_older ? s.hit_seq : s.other_seq;
    c.slot = hit_older ? s.hit_slot : s.other_slot;
  } else if (s.hit_seq != BankQueues::kNone) {
    // (its conflicts wait: never close a hit)
    c.cmd = q ? Command::WR : Command::RD, c.hit = true, c.seq = s.hit_seq, c.slot = s.hit_slot;
  } else {
    c.cmd = Command::PRE, c.seq = s.other_seq, c.slot = s.other_slot;
  }
  const int k = static_cast<int>(c.cmd);
  c.bank_ready = timing_.bank_level(c.cmd, bank);
  c.group_level = timing_.group_levels() + bank_group_slot_[bank] * kCommandKinds + k;
  c.rank_level = timing_.rank_levels() + bank_rank_[bank] * kCommandKinds + k;
  c.key_low = static_cast<std::uint64_t>(!c.hit) << kHitShift | static_cast<std::uint64_t>(bank);
}

// First-ready choice as one branch-free pass: each occupied bank's candidate becomes the
// key (ready - base, not a hit, age, bank) packed into 64 bits, and the smallest key wins:
// the same lexicographic order as scan() (ages are unique, so the bank in the lowest bits
// never decides, it only names the winner). A field that would not fit (a ready cycle 2^24
// cycles ahead, 2^32 requests between the oldest queued and the newest, more than 128
// banks) falls back to that scan, as does FCFS (the oldest, whatever its ready cycle).
void FirstReadyChoice::choose(int q, Cycle base, Decision& request) {
  const RequestQueue& queue = queues_.queue(q);
  if (order_ != Scheduler::Order::FirstReady || queue.empty() ||
      queues_.next_seq() - queue.front().seq >= (std::uint64_t{1} << kAgeBits) ||
      banks_ > (std::size_t{1} << kBankBits)) {
    scan(q, base, request);
    return;
  }
  const std::uint64_t seq0 = queue.front().seq;  // the oldest queued: the age origin
  Candidate* const candidates = &candidates_[q * banks_];
  const Cycle* const block_at = block_at_.data();
  const std::uint64_t* const occupied = queues_.occupied(q);
  std::uint64_t best = UINT64_MAX, far = 0;
  for (std::size_t w = 0; w < queues_.words(); ++w) {
    for (std::uint64_t bits = occupied[w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      Candidate& c = candidates[bank];
      if (c.stale) refresh(c, q, bank);
      const Cycle ready = std::max(base, earliest(c));
      const auto delta = static_cast<std::uint64_t>(ready - base);
      far |= delta >> 24;
      // A due refresh blocks its rank (all-bank) or its bank (per-bank) from then on.
      const std::uint64_t blocked =
          std::uint64_t{0} - static_cast<std::uint64_t>(ready >= block_at[bank]);
      const std::uint64_t key =
          (delta << kDeltaShift | (c.seq - seq0) << kBankBits | c.key_low) | blocked;
      best = std::min(best, key);
    }
  }
  if (far != 0) {
    scan(q, base, request);
    return;
  }
  if (best == UINT64_MAX) return;
  fill(q, base + static_cast<Cycle>(best >> kDeltaShift),
       static_cast<int>(best & ((std::uint64_t{1} << kBankBits) - 1)), request);
}

void FirstReadyChoice::scan(int q, Cycle base, Decision& request) {
  const bool oldest_only = order_ == Scheduler::Order::Oldest;
  Cycle best_ready = kNoCycle;
  bool best_hit = false;
  std::uint64_t best_seq = BankQueues::kNone;
  int best_bank = -1;
  Candidate* const candidates = &candidates_[q * banks_];
  const std::uint64_t* const occupied = queues_.occupied(q);
  for (std::size_t w = 0; w < queues_.words(); ++w) {
    for (std::uint64_t bits = occupied[w]; bits != 0; bits &= bits - 1) {
      const int bank = static_cast<int>(w * 64 + __builtin_ctzll(bits));
      Candidate& c = candidates[bank];
      if (c.stale) refresh(c, q, bank);
      if (oldest_only
              ? c.seq > best_seq
              : !(c.seq < best_seq || c.hit > best_hit) && best_bank >= 0 && base >= best_ready) {
        continue;  // cannot beat the best so far whatever its ready cycle
      }
      const Cycle ready = std::max(base, earliest(c));
      if (ready >= block_at_[bank]) continue;  // blocked by a due refresh
      const bool better = oldest_only
                              ? c.seq < best_seq
                              : ready < best_ready ||
                                    (ready == best_ready &&
                                     (c.hit > best_hit || (c.hit == best_hit && c.seq < best_seq)));
      if (better) best_ready = ready, best_hit = c.hit, best_seq = c.seq, best_bank = bank;
    }
  }
  if (best_bank < 0) return;
  fill(q, best_ready, best_bank, request);
}

// The request of `bank`'s candidate (fresh) of queue `q`, at `cycle`.
void FirstReadyChoice::fill(int q, Cycle cycle, int bank, Decision& request) {
  const Candidate& c = candidates_[q * banks_ + bank];
  chosen_hit_ = c.hit;
  chosen_seq_ = c.seq;
  const QueueEntry& e = queues_.queue(q)[c.slot];
  FUSIM_ASSERT(e.seq == c.seq && e.flat_bank == bank, "decided request not queued");
  request.cycle = cycle;
  request.cmd = c.cmd;
  request.rank = e.rank;
  request.group = e.bankgroup;
  request.bank = e.flat_bank;
  request.row = e.row;
  request.entry = c.slot;
}

void FirstReadyChoice::weigh(int q, int bank, Cycle base, Decision& request) {
  Candidate& c = candidates_[q * banks_ + bank];
  refresh(c, q, bank);
  const Cycle ready = std::max(base, earliest(c));
  if (ready >= block_at_[bank]) return;  // blocked by a due refresh, as in choose()
  if (request.cycle != kNoCycle &&
      !(ready < request.cycle ||
        (ready == request.cycle &&
         (c.hit > chosen_hit_ || (c.hit == chosen_hit_ && c.seq < chosen_seq_))))) {
    return;
  }
  fill(q, ready, bank, request);
}

}  // namespace fusim::dram

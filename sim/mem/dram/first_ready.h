#pragma once
// The request part of a channel's decision for the first-ready schedulers (FCFS, FR-FCFS
// and its capped form): which queued request's next command issues first. Such a scheduler
// looks only at each occupied bank's oldest row hit and oldest other request (BankQueues'
// summaries): within one bank and class every request has the same next command and so
// the same ready cycle (arrivals never exceed the decision floor), hence the oldest of
// them is the only one it could pick. Each bank's candidate (its next command, whether
// that is a hit, its age, where its earliest cycle lives in BankTiming) is kept between
// decisions and worked out again only when the bank's requests or row change (its earliest
// cycle is read live from BankTiming's merged levels), so a decision is one pass over the
// occupied banks instead of one over the queue.
// Why not an incremental choice (a ready-now set ordered by hit and age, a future set by
// earliest cycle, moved as time passes): the pass it would replace is ~19% of a DDR4 random
// replay (perf, AVX-512 form; all of this class ~46%, of an HBM3 random one ~30%), and the
// sets would still change at every command (its bank's candidate, its bank group's levels),
// so even a free choice would not double the replay rate. Deferring the stale candidates'
// stores until after the vector pass (so that its loads never wait on them) was 20% slower.
// tests/dram/fast_path_test.cpp and command_stream_test.cpp pin that this gives the command
// stream of the controller that handed every request to the scheduler.
#include <cstdint>
#include <vector>

#include "mem/dram/bank_queues.h"
#include "mem/dram/bank_timing.h"
#include "mem/dram/command.h"
#include "mem/dram/scheduler.h"

namespace fusim::dram {

// What the first-ready pass reads (first_ready.cpp), one queue's arrays as FirstReadyChoice
// lays them out.
struct KeyPass {
  const std::uint64_t* occupied;  // banks with requests in the queue, a bit each
  std::size_t lanes;
  const std::int32_t* near_at;  // per bank: where its candidate's levels are in BankTiming
  const std::int32_t* rank_at;
  const std::uint64_t* seq;      // its age
  const std::uint64_t* key_low;  // not a hit, bank (all ones: no candidate)
  const Cycle* near_levels;
  const Cycle* rank_levels;
  const Cycle* block_at;  // a due refresh blocks the bank from this cycle on
  // For the AVX-512 form: the candidates whose command is ACT / PRE (the others' is the
  // queue's column command `column`), and each 8-bank block's rank (-1: mixed ranks).
  const std::uint64_t* act;
  const std::uint64_t* pre;
  int column;
  const std::int8_t* block_rank;
};

// A command a channel could issue next.
struct Decision {
  Cycle cycle = kNoCycle;
  Command cmd = Command::ACT;
  int rank = 0, group = 0, bank = 0;  // bank: flat index in the channel
  std::int64_t row = -1;
  int entry = -1;  // slot in queue `queue`, or -1 (refresh, policy close)
  int queue = 0;   // 0 reads, 1 writes
};

class FirstReadyChoice {
 public:
  // `block_at[bank]`: the cycle from which a due refresh blocks the bank's commands (its
  // rank's due cycle under all-bank refresh, that of the bank the rank refreshes next under
  // per-bank refresh; kNoCycle: none), lanes(banks) entries. All references are the
  // controller's state.
  FirstReadyChoice(const DramSpec& spec, Scheduler::Order order, BankQueues& queues,
                   const std::vector<BankRow>& rows, const BankTiming& timing,
                   const std::vector<Cycle>& block_at);
  // Banks rounded up to whole vectors of 8 (the per-bank arrays' length).
  static std::size_t lanes(int banks) { return BankTiming::lanes(banks); }

  // The candidate of `bank` in queue `q` (or in both) must be worked out again: its
  // requests, its row, its column count (the caps) or its commit changed. (Timing alone
  // changes no candidate: its earliest cycle is read live.)
  void invalidate(int q, int bank) { stale_[q * words_ + bank / 64] |= bit(bank); }
  void invalidate(int bank) {
    stale_[bank / 64] |= bit(bank);
    stale_[words_ + bank / 64] |= bit(bank);
  }
  bool stale(int q, int bank) const { return (stale_[q * words_ + bank / 64] & bit(bank)) != 0; }

  // The first-ready choice among queue `q`'s requests at or after `base`: `request` gets its
  // command (cycle kNoCycle where every candidate is blocked by a refresh).
  void choose(int q, Cycle base, Decision& request);
  // After a request arrived at `bank` of queue `q`, the active one, with `request` chosen
  // before it (at the same base): weighs the bank's new candidate against it and updates
  // `request` where it wins.
  void weigh(int q, int bank, Cycle base, Decision& request);

 private:
  // The first-ready key: ready - base << kDeltaShift | not a hit << kHitShift | age
  // (relative to the oldest queued, < 2^kAgeBits) << kBankBits | bank.
  static constexpr int kBankBits = 7, kAgeBits = 32, kHitShift = kBankBits + kAgeBits,
                       kDeltaShift = kHitShift + 1;
  static std::uint64_t bit(int bank) { return std::uint64_t{1} << (bank % 64); }
  // What choose() needs of a bank's candidate beyond its key.
  struct Chosen {
    int slot = -1;  // the request's queue slot
    Command cmd = Command::ACT;
    bool hit = false;
  };

  void refresh(int q, int bank);
  void scan(int q, Cycle base, Decision& request);
  void fill(int q, Cycle cycle, int bank, Decision& request);
  // The candidate's earliest cycle by timing alone: the max of its command's merged bank
  // and bank-group level and its rank level in BankTiming.
  Cycle earliest(std::size_t i) const {
    return std::max(near_levels_[near_at_[i]], rank_levels_[rank_at_[i]]);
  }

  const Scheduler::Order order_;
  const std::size_t banks_;
  // First-ready order over at most 2^kBankBits banks: the keyed pass applies (FCFS and
  // more banks always scan).
  const bool keyed_;
  const std::size_t lanes_, words_;
  BankQueues& queues_;
  const std::vector<BankRow>& rows_;
  const Cycle* const near_levels_;
  const Cycle* const rank_levels_;
  const std::vector<Cycle>& block_at_;
  std::vector<std::uint8_t> bank_rank_;
  // Where every 8 banks (one vector) lie in one rank: its rank, else -1 (the pass then
  // gathers the rank levels).
  std::vector<std::int8_t> block_rank_;
  // Each bank's candidate, per queue, [queue * lanes + bank], laid out for one pass over
  // the banks in vectors of 8: where its command's merged bank/bank-group level and its
  // rank level are (indices into BankTiming's tables, which move without the candidate
  // changing), its age and the low part of its key (not a hit, bank).
  std::vector<std::int32_t> near_at_, rank_at_;
  std::vector<std::uint64_t> seq_, key_low_;
  // Candidates whose command is ACT, PRE (the others' is the queue's column command), one
  // bit per bank, [queue * words + word]: the vector pass selects the levels by them.
  std::vector<std::uint64_t> act_bits_, pre_bits_;
  std::vector<Chosen> chosen_;
  std::vector<std::uint64_t> stale_;  // [queue * words + word]: candidates to work out again
  const int vector_pass_;  // lanes of the pass's vector form here: 8 (AVX-512), 4 (AVX2), 0
  // Each queue's arrays as the pass reads them (fixed once built: no array ever grows).
  KeyPass passes_[2];
  // What the last choice chose, for weigh().
  bool chosen_hit_ = false;
  std::uint64_t chosen_seq_ = BankQueues::kNone;
};

}  // namespace fusim::dram

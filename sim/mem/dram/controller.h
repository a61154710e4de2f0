#pragma once
// One (pseudo-)channel's controller: read and write queues with watermark write draining,
// per-bank row state, refresh, the row policy and a scheduler. Event-driven: it never
// ticks; next_cycle() says when its next command can issue (every JEDEC constraint and the
// one-command-per-cycle bus taken into account) and issue() issues exactly that command.
#include <functional>
#include <memory>
#include <vector>

#include "mem/dram/bank_timing.h"
#include "mem/dram/command.h"
#include "mem/dram/dram_spec.h"
#include "mem/dram/dram_stats.h"
#include "mem/dram/request_queue.h"
#include "mem/dram/scheduler.h"

namespace fusim::dram {

// A column command the controller just issued: the atom `token` is done at `done`.
struct ColumnServed {
  bool valid = false;
  bool is_write = false;
  bool row_hit = false;
  std::uint32_t token = 0;
  int requester = 0;
  Cycle issued = 0;  // the column command's cycle (its queue entry is free from then)
  Cycle done = 0;
};

using CommandObserver = std::function<void(const IssuedCommand&)>;

class ChannelController {
 public:
  ChannelController(const DramSpec& spec, int channel, std::unique_ptr<Scheduler> scheduler,
                    DramStats& stats);

  bool has_room(bool is_write) const {
    return is_write ? writes_.size() < write_cap_ : reads_.size() < read_cap_;
  }
  std::size_t free_entries(bool is_write) const {
    const std::size_t used = is_write ? writes_.size() : reads_.size();
    const std::size_t cap = capacity(is_write);
    return used >= cap ? 0 : cap - used;
  }
  std::size_t capacity(bool is_write) const { return is_write ? write_cap_ : read_cap_; }
  bool idle() const { return reads_.empty() && writes_.empty(); }
  std::size_t queued() const { return reads_.size() + writes_.size(); }
  // Adds a request arriving at e.arrival; an idle channel first catches up on the refreshes
  // and row closes that fell due while it had nothing to do.
  // `whole_block`: an atom of a block request admitted whole into an empty queue (a block
  // larger than the queue may fill it past its capacity; see DramSystem::will_accept).
  void enqueue(const QueueEntry& e, bool whole_block = false);
  // Cycle of the next command, kNoCycle while no request waits (idle channels need no
  // events; catch_up settles their refreshes later).
  Cycle next_cycle() {
    if (idle()) return kNoCycle;
    if (!decided_) decide();
    return decision_.cycle;
  }
  // Whether the command next_cycle() announced is a request's column command (RD/WR).
  bool next_is_column() {
    if (!decided_) decide();
    return decision_.entry >= 0 && (decision_.cmd == Command::RD || decision_.cmd == Command::WR);
  }
  // Issues the command next_cycle() announced.
  ColumnServed issue();
  // Issues the refreshes and policy precharges due before `until` (only while idle).
  void catch_up(Cycle until);
  void set_observer(const CommandObserver* observer) { observer_ = observer; }
  // Adds the cycles rows have been open so far, up to `now`, into out[offset + bank].
  void add_open_cycles(Cycle now, std::vector<std::uint64_t>& out, std::size_t offset) const;

  static constexpr std::uint8_t kHit = 1, kMiss = 2, kConflict = 3;

 private:
  struct BankState {
    std::int64_t open_row = -1;
    Cycle opened_at = 0;
    Cycle last_column = 0;
    int accesses = 0;  // column commands since the activate
    bool close_flag = false;
  };
  struct Decision {
    Cycle cycle = kNoCycle;
    Command cmd = Command::ACT;
    int rank = 0, group = 0, bank = 0;  // bank: flat index in the channel
    std::int64_t row = -1;
    int entry = -1;  // slot in the active queue, or -1 (refresh, policy close)
  };

  // What one bank's queued requests (of one queue) need, kept between decisions and
  // recomputed only when the bank's requests or its open row change: the oldest request
  // that hits the open row and the oldest other one. All requests of one bank and class
  // have the same next command and ready cycle, so they are all a first-ready scheduler
  // needs to see of that bank.
  // `cmd`/`hit`/`seq` cache what a first-ready scheduler sees of the bank (its next command,
  // whether that is a row hit, the request's age); `stale` until derived again from the
  // summary, the open row and the hit cap (dirty implies stale).
  // `group_level`/`rank_level` point at the bank group and rank levels of `cmd`'s earliest
  // cycle in BankTiming (which move without the bank's candidate changing) and `key_low` is
  // the low part of the candidate's first-ready key (not a hit, bank), so that the
  // first-ready pass reads no per-rank or per-group tables of its own.
  struct BankQueue {
    std::uint64_t hit_seq = kNone, other_seq = kNone;
    std::uint64_t seq = kNone;
    Cycle bank_ready = 0;  // the bank level of `cmd`'s earliest cycle (BankTiming::bank_level)
    const Cycle* group_level = nullptr;
    const Cycle* rank_level = nullptr;
    std::uint64_t key_low = 0;
    int hit_slot = -1, other_slot = -1, slot = -1;  // queue slots of the requests above
    std::uint16_t count = 0;
    bool dirty = false;
    bool stale = true;
    bool hit = false;
    Command cmd = Command::ACT;
  };
  static constexpr std::uint64_t kNone = UINT64_MAX;
  // The first-ready key (decide_requests): ready - base << kDeltaShift | not a hit <<
  // kHitShift | age (relative to the oldest queued, < 2^kAgeBits) << kBankBits | bank.
  static constexpr int kBankBits = 7, kAgeBits = 32, kHitShift = kBankBits + kAgeBits,
                       kDeltaShift = kHitShift + 1;

  void decide();
  void decide_requests(Cycle base, bool all_bank, Decision& request);
  void decide_requests_scan(Cycle base, bool all_bank, Decision& request);
  void fill_request(Cycle cycle, int bank, Decision& request);
  bool update_decision(int q, int bank);
  void decide_requests_generic(Cycle base, bool all_bank, Decision& request);
  BankQueue& bank_queue(int q, int bank);
  void rescan(int q, int bank);
  void refresh_candidate(BankQueue& bq, int q, int bank);
  void mark_stale(int bank) {
    bank_queues_[bank].stale = bank_queues_[banks_.size() + bank].stale = true;
  }
  void mark_row_changed(int bank) {
    bank_queues_[bank].dirty = bank_queues_[bank].stale = true;
    bank_queues_[banks_.size() + bank].dirty = bank_queues_[banks_.size() + bank].stale = true;
  }
  bool capped(int bank, const BankQueue& bq) const {
    const BankState& b = banks_[bank];
    if (spec_.ctrl.row_policy == RowPolicy::OpenCap && b.accesses >= spec_.ctrl.row_cap)
      return true;
    return hit_cap_ > 0 && b.accesses >= hit_cap_ && bq.other_seq != kNone;
  }
  void execute(const Decision& d);
  void close_bank(int flat_bank, Cycle at);
  void consider(Decision& best, const Decision& d) const {
    if (d.cycle < best.cycle) best = d;
  }

  const DramSpec& spec_;
  const Timing t_;
  const int channel_;
  const int banks_per_rank_, banks_per_group_, bankgroups_;
  const std::size_t read_cap_, write_cap_;
  const Cycle refresh_interval_;
  std::unique_ptr<Scheduler> scheduler_;
  const int hit_cap_;
  DramStats& stats_;
  const CommandObserver* observer_ = nullptr;

  BankTiming timing_;
  std::vector<BankState> banks_;
  // Rank and bank group (within its rank) of each flat bank, so that the decision loops
  // need no integer division.
  std::vector<std::uint8_t> bank_rank_, bank_group_;
  std::vector<std::uint16_t> bank_group_slot_;  // rank * bankgroups + group
  std::vector<int> open_in_rank_;
  std::vector<Cycle> refresh_due_;
  std::vector<int> refresh_bank_;  // per-bank refresh: next bank of each rank
  std::vector<int> closable_;      // banks whose row policy wants them closed
  // A due refresh blocks a request's command from this cycle on, per bank: its rank's due
  // cycle (all-bank refresh) or, per-bank, that of the bank the rank refreshes next.
  std::vector<Cycle> block_at_;
  void update_block_at(int rank);
  RequestQueue reads_, writes_;
  bool write_mode_ = false;
  Cycle last_command_ = -1;
  Cycle floor_ = 0;  // latest arrival seen: nothing is decided for earlier cycles

  bool decided_ = false;
  Decision decision_;
  // The three parts of the last decide(), so that a request arriving afterwards can often
  // be weighed against them alone (update_decision) instead of deciding anew.
  Decision refresh_, request_, close_;
  bool request_hit_ = false;
  std::uint64_t request_seq_ = kNone;
  const Scheduler::Order order_;
  std::uint64_t next_seq_ = 0;
  // [queue * banks + bank], queue 0 reads, 1 writes; occupied_: banks with requests queued,
  // one bit per bank, [queue * words + word].
  std::vector<BankQueue> bank_queues_;
  std::vector<std::uint64_t> occupied_;
  std::size_t words_;
  std::vector<Candidate> candidates_;
  std::vector<int> candidate_entry_;
  std::vector<Command> candidate_cmd_;
};

}  // namespace fusim::dram

#pragma once
// One (pseudo-)channel's controller: read and write queues with watermark write draining,
// per-bank row state, refresh, the row policy and a scheduler. Event-driven: it never
// ticks; next_cycle() says when its next command can issue (every JEDEC constraint and the
// one-command-per-cycle bus taken into account) and issue() issues exactly that command.
// A decision has four parts: the request command the scheduler chooses (first-ready
// schedulers through FirstReadyChoice, others over every queued request), the column
// commands of the other queue's requests whose rows were activated for them (a row is not
// closed before the request it was opened for is served), the row policy's precharges and
// the refresh commands; refresh wins ties, then those committed columns, then requests,
// then closes.
#include <functional>
#include <memory>
#include <vector>

#include "mem/dram/bank_queues.h"
#include "mem/dram/bank_timing.h"
#include "mem/dram/command.h"
#include "mem/dram/dram_spec.h"
#include "mem/dram/dram_stats.h"
#include "mem/dram/first_ready.h"
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

  bool has_room(bool is_write) const { return queues_.size(is_write) < capacity(is_write); }
  std::size_t free_entries(bool is_write) const {
    const std::size_t used = queues_.size(is_write);
    const std::size_t cap = capacity(is_write);
    return used >= cap ? 0 : cap - used;
  }
  std::size_t capacity(bool is_write) const { return is_write ? write_cap_ : read_cap_; }
  bool idle() const { return queues_.idle(); }
  std::uint64_t freed() const { return freed_; }  // queue entries freed so far (issue())
  std::size_t queued() const { return queues_.size(0) + queues_.size(1); }
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
    return decision_->cycle;
  }
  // Whether the command next_cycle() announced is a request's column command (RD/WR).
  bool next_is_column() {
    if (!decided_) decide();
    return decision_->entry >= 0 &&
           (decision_->cmd == Command::RD || decision_->cmd == Command::WR);
  }
  // Issues the command next_cycle() announced.
  ColumnServed issue();
  // Issues the refreshes and policy precharges due before `until` (only while idle).
  void catch_up(Cycle until);
  void set_observer(const CommandObserver* observer) {
    observer_ = observer && *observer ? observer : nullptr;
  }
  // Adds the cycles rows have been open so far, up to `now`, into out[offset + bank].
  void add_open_cycles(Cycle now, std::vector<std::uint64_t>& out, std::size_t offset) const;

  static constexpr std::uint8_t kHit = 1, kMiss = 2, kConflict = 3;

 private:
  void decide();
  // The earliest of the four parts: refresh wins ties, then committed columns, then
  // requests, then policy closes.
  const Decision* earliest() const {
    const Decision* d = &refresh_;
    if (committed_column_.cycle < d->cycle) d = &committed_column_;
    if (request_.cycle < d->cycle) d = &request_;
    if (close_.cycle < d->cycle) d = &close_;
    return d;
  }
  void choose_generic(int q, Cycle base, Decision& request);
  bool update_decision(int q, int bank);
  void execute(const Decision& d);
  void notify(const Decision& d) const;  // the observer
  void close_bank(int flat_bank, Cycle at);
  void choose_committed(int q, Cycle base);
  void choose_close(int q, Cycle base);
  void choose_refresh(Cycle base, Cycle bound);
  void clear_commit(int flat_bank);
  void row_changed(int bank) {
    queues_.row_changed(bank);
    first_ready_.invalidate(bank);
  }
  void update_block_at(int rank);
  // Write draining with watermarks: the controller turns to writes when they pile up (or
  // nothing else waits), back to reads once they are drained to the low watermark.
  bool turns(std::size_t reads, std::size_t writes) const {
    return write_mode_ ? writes == 0 || (reads != 0 && writes <= write_low_)
                       : writes >= write_high_ || (reads == 0 && writes != 0);
  }

  const DramSpec& spec_;
  const Timing t_;
  const int channel_;
  const int banks_per_rank_, banks_per_group_;
  const std::size_t read_cap_, write_cap_;
  const std::size_t write_low_, write_high_;  // the write-drain watermarks
  const Cycle refresh_interval_;
  std::unique_ptr<Scheduler> scheduler_;
  const Scheduler::Order order_;
  DramStats& stats_;
  const CommandObserver* observer_ = nullptr;

  BankTiming timing_;
  std::vector<BankRow> banks_;
  // Rank and bank group (within its rank) of each flat bank, so that the decision loops
  // need no integer division.
  std::vector<std::uint8_t> bank_rank_, bank_group_;
  std::size_t open_cycles_at_;  // this channel's first bank in DramStats::bank_open_cycles
  std::vector<int> open_in_rank_;
  std::vector<Cycle> refresh_due_;
  Cycle next_refresh_ = 0;         // the earliest of refresh_due_
  std::vector<int> refresh_bank_;  // per-bank refresh: next bank of each rank
  std::vector<int> closable_;      // banks whose row policy wants them closed
  // Banks whose row waits for its request (BankRow::commit_*), by the request's queue: a
  // decision looks only at the other queue's (in random traffic nearly every open bank
  // waits for its own queue's request, and those need no look).
  const std::size_t words_;               // 64-bit words of one bit per bank
  std::vector<std::uint64_t> committed_;  // [queue * words + word]
  int committed_count_[2] = {0, 0};
  // A due refresh blocks a request's command from this cycle on, per bank: its rank's due
  // cycle (all-bank refresh) or, per-bank, that of the bank the rank refreshes next.
  std::vector<Cycle> block_at_;
  BankQueues queues_;
  FirstReadyChoice first_ready_;
  bool write_mode_ = false;
  Cycle last_command_ = -1;
  Cycle floor_ = 0;  // latest arrival seen: nothing is decided for earlier cycles
  std::uint64_t freed_ = 0;

  bool decided_ = false;
  // The four parts of the last decide(), so that a request arriving afterwards can often
  // be weighed against them alone (update_decision) instead of deciding anew.
  Decision refresh_, committed_column_, request_, close_;
  // The part that wins (earliest()): pointed at, not copied. A copy of a Decision just
  // written field by field reads it back in 16-byte loads that cannot be forwarded from
  // those stores (a stall per decision: a third of decide()'s samples under perf).
  const Decision* decision_ = &refresh_;
  // Generic schedulers' candidate list, reused between decisions.
  std::vector<Candidate> candidates_;
  std::vector<int> candidate_entry_;
  std::vector<Command> candidate_cmd_;
};

}  // namespace fusim::dram

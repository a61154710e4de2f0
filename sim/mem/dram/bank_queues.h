#pragma once
// One channel's read and write queues seen bank by bank: for each queue and bank, the
// oldest request that hits the bank's open row and the oldest other one, kept between
// decisions and worked out again only when the bank's requests or its open row change.
// All requests of one bank and queue that are hits (or all that are not) have the same next
// command and the same ready cycle, so these two are all a first-ready scheduler needs to
// see of a bank, and what every scheduler needs to know to never close a row that a queued
// request still hits.
#include <cstdint>
#include <vector>

#include "mem/dram/dram_spec.h"
#include "mem/dram/request_queue.h"

namespace fusim::dram {

// A bank's row state (the controller's), against which queued requests are hits or not.
struct BankRow {
  std::int64_t open_row = -1;
  Cycle opened_at = 0;
  Cycle last_column = 0;
  int accesses = 0;  // column commands since the activate
  bool close_flag = false;
  // The request this row was activated for (its queue and slot; -1: none), until its column
  // command or the row closes. The row is not precharged for the other queue's requests
  // before it is served: a write-drain turn would otherwise close rows opened for reads
  // (and the reverse) and activate them again later.
  int commit_queue = -1, commit_slot = -1;
};

class BankQueues {
 public:
  static constexpr std::uint64_t kNone = UINT64_MAX;
  struct Summary {
    std::uint64_t hit_seq = kNone, other_seq = kNone;  // ages (QueueEntry::seq)
    int hit_slot = -1, other_slot = -1;                // their queue slots
    std::uint16_t count = 0;                           // requests of the bank in the queue
    bool dirty = false;                                // hit/other to be worked out again
  };

  // `rows` is the controller's row state, read to classify requests. `hit_cap`: row hits a
  // bank may serve after its activate while an older request waits for another row (the
  // scheduler's; 0: unlimited).
  BankQueues(const ControllerConfig& ctrl, int banks, int hit_cap,
             const std::vector<BankRow>& rows);

  // Queue 0 holds reads, 1 writes.
  RequestQueue& queue(int q) { return q ? writes_ : reads_; }
  const RequestQueue& queue(int q) const { return q ? writes_ : reads_; }
  std::size_t size(int q) const { return queue(q).size(); }
  bool idle() const { return reads_.empty() && writes_.empty(); }
  // The age the next request gets (ages grow by one per request, across both queues).
  std::uint64_t next_seq() const { return next_seq_; }

  // Queues `e` (its seq set here) as the youngest of its queue; returns its slot.
  // `summary_changed` tells whether the bank's summary moved.
  int add(const QueueEntry& e, bool& summary_changed);
  // Removes the request in `slot` of queue `q` (served by a column command).
  void remove(int q, int slot);
  // The bank's open row changed: both queues' summaries of it are worked out again.
  void row_changed(int bank) {
    summaries_[bank].dirty = true;
    summaries_[banks_ + bank].dirty = true;
  }
  // The bank's summary in queue `q`, worked out where it is dirty.
  const Summary& summary(int q, int bank) {
    Summary& s = summaries_[q * banks_ + bank];
    if (s.dirty) rescan(q, bank);
    return s;
  }
  // Capped hits lose their status (frfcfs-cap, open-cap): every request of the bank then
  // wants the precharge.
  bool capped(int bank, const Summary& s) const {
    const BankRow& b = rows_[bank];
    if (open_cap_ && b.accesses >= row_cap_) return true;
    return hit_cap_ > 0 && b.accesses >= hit_cap_ && s.other_seq != kNone;
  }
  // A scheduler that changes its hit cap between decisions (cads). Only Generic schedulers
  // do, and their choice reads capped() afresh each decision: nothing cached to redo.
  void set_hit_cap(int hit_cap) { hit_cap_ = hit_cap; }
  // Banks with requests in queue `q`, one bit per bank, `words()` 64-bit words.
  const std::uint64_t* occupied(int q) const { return &occupied_[q * words_]; }
  std::size_t words() const { return words_; }
  // How many banks have requests in queue `q` (the bits set in occupied(q)).
  int busy(int q) const { return busy_[q]; }

 private:
  void rescan(int q, int bank);

  const std::vector<BankRow>& rows_;
  const std::size_t banks_;
  const bool open_cap_;  // the open-cap row policy: closes after row_cap_ column accesses
  const int row_cap_;
  int hit_cap_;
  RequestQueue reads_, writes_;
  std::uint64_t next_seq_ = 0;
  std::vector<Summary> summaries_;  // [queue * banks + bank]
  std::vector<std::uint64_t> occupied_;
  std::size_t words_;
  int busy_[2] = {0, 0};
};

}  // namespace fusim::dram

#include "mem/dram/bank_queues.h"

namespace fusim::dram {

BankQueues::BankQueues(const ControllerConfig& ctrl, int banks, int hit_cap,
                       const std::vector<BankRow>& rows)
    : rows_(rows),
      banks_(static_cast<std::size_t>(banks)),
      open_cap_(ctrl.row_policy == RowPolicy::OpenCap),
      row_cap_(ctrl.row_cap),
      hit_cap_(hit_cap),
      reads_(static_cast<std::size_t>(ctrl.read_queue), banks),
      writes_(static_cast<std::size_t>(ctrl.write_queue), banks),
      summaries_(2 * banks_),
      words_((banks_ + 63) / 64) {
  occupied_.assign(2 * words_, 0);
}

int BankQueues::add(const QueueEntry& e, bool& summary_changed) {
  const int q = e.is_write ? 1 : 0;
  RequestQueue& queue = q ? writes_ : reads_;
  const int slot = queue.push_back(e);
  QueueEntry& added = queue[slot];
  added.seq = next_seq_++;
  // The newest request: it changes a clean summary only where the bank had none of its kind.
  Summary& s = summaries_[q * banks_ + e.flat_bank];
  summary_changed = false;
  if (!s.dirty) {
    const std::int64_t open = rows_[e.flat_bank].open_row;
    if (open >= 0 && open == e.row) {
      if (s.hit_seq == kNone) s.hit_seq = added.seq, s.hit_slot = slot, summary_changed = true;
    } else if (s.other_seq == kNone) {
      s.other_seq = added.seq, s.other_slot = slot, summary_changed = true;
    }
  }
  if (s.count++ == 0) {
    occupied_[q * words_ + e.flat_bank / 64] |= std::uint64_t{1} << (e.flat_bank % 64);
    ++busy_[q];
  }
  return slot;
}

void BankQueues::remove(int q, int slot) {
  RequestQueue& queue = q ? writes_ : reads_;
  const std::uint64_t seq = queue[slot].seq;
  const int bank = queue[slot].flat_bank;
  const int younger = queue.bank_next(slot);
  queue.erase(slot);
  Summary& s = summaries_[q * banks_ + bank];
  if (--s.count == 0) {
    s = Summary{};
    occupied_[q * words_ + bank / 64] &= ~(std::uint64_t{1} << (bank % 64));
    --busy_[q];
  } else if (seq == s.hit_seq && !s.dirty) {
    // The bank's oldest hit left and its row stays open: the oldest other request is the
    // same, and the next hit is among the younger requests (in a stream, the next).
    s.hit_seq = kNone, s.hit_slot = -1;
    const std::int64_t open = rows_[bank].open_row;
    for (int i = younger; i != RequestQueue::kEnd; i = queue.bank_next(i)) {
      if (queue[i].row == open) {
        s.hit_seq = queue[i].seq, s.hit_slot = i;
        break;
      }
    }
  } else if (seq == s.hit_seq || seq == s.other_seq) {
    s.dirty = true;
  }
}

void BankQueues::rescan(int q, int bank) {
  Summary& s = summaries_[q * banks_ + bank];
  const std::int64_t open = rows_[bank].open_row;
  s.hit_seq = s.other_seq = kNone;
  s.hit_slot = s.other_slot = -1;
  s.dirty = false;
  const RequestQueue& queue = q ? writes_ : reads_;
  if (open < 0) {  // a closed bank: no hits, the oldest is the oldest other
    const int i = queue.bank_first(bank);
    if (i != RequestQueue::kEnd) s.other_seq = queue[i].seq, s.other_slot = i;
    return;
  }
  for (int i = queue.bank_first(bank); i != RequestQueue::kEnd; i = queue.bank_next(i)) {
    const QueueEntry& e = queue[i];
    if (e.row == open) {
      if (s.hit_seq == kNone) s.hit_seq = e.seq, s.hit_slot = i;
    } else if (s.other_seq == kNone) {
      s.other_seq = e.seq, s.other_slot = i;
    }
    if (s.hit_seq != kNone && s.other_seq != kNone) return;
  }
}

}  // namespace fusim::dram

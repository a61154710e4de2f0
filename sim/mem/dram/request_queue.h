#pragma once
// A controller's read or write queue. Entries sit in slots that stay put while they are
// queued, so that a decision names its request by slot (no search for it, no shifting of
// the younger entries when one leaves), and are linked in arrival (= age) order twice: all
// of them, for the schedulers that look at the whole queue, and those of each bank, so
// that the controller reads a bank's few requests where it needs them. One node is one
// 64-byte cache line, and everything lives in one allocation per queue.
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "mem/dram/dram_spec.h"

namespace fusim::dram {

struct QueueEntry {
  std::int64_t row = 0;
  std::uint32_t token = 0;  // the DramSystem's request slot
  int requester = 0;
  Cycle arrival = 0;
  std::uint16_t flat_bank = 0;
  std::uint8_t rank = 0, bankgroup = 0, bank = 0;
  std::uint8_t outcome = 0;  // 0 undecided, then kHit / kMiss / kConflict
  bool is_write = false;
  std::uint64_t seq = 0;  // set by enqueue: age order within the channel
};

class RequestQueue {
 public:
  static constexpr int kEnd = -1;

  RequestQueue(std::size_t capacity, int banks) : bank_ends_(banks) { nodes_.reserve(capacity); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The oldest entry (queue not empty).
  const QueueEntry& front() const { return nodes_[head_].entry; }
  QueueEntry& operator[](int slot) { return nodes_[slot].entry; }
  const QueueEntry& operator[](int slot) const { return nodes_[slot].entry; }
  // Age-order walk: for (int s = first(); s != kEnd; s = next(s)).
  int first() const { return head_; }
  int next(int slot) const { return nodes_[slot].next; }
  // The same walk over the entries of one (flat) bank.
  int bank_first(int bank) const { return bank_ends_[bank].head; }
  int bank_next(int slot) const { return nodes_[slot].bank_next; }

  // Appends `e` as the youngest entry; returns its slot.
  int push_back(const QueueEntry& e) {
    int slot = free_;
    if (slot != kEnd) {
      free_ = nodes_[slot].next;
    } else {
      slot = static_cast<int>(nodes_.size());
      nodes_.emplace_back();
    }
    Node& n = nodes_[slot];
    n.entry = e;
    n.prev = tail_;
    n.next = kEnd;
    (tail_ == kEnd ? head_ : nodes_[tail_].next) = slot;
    tail_ = slot;
    Ends& b = bank_ends_[e.flat_bank];
    n.bank_prev = b.tail;
    n.bank_next = kEnd;
    (b.tail == kEnd ? b.head : nodes_[b.tail].bank_next) = slot;
    b.tail = slot;
    ++size_;
    return slot;
  }
  void erase(int slot) {
    FUSIM_ASSERT(size_ > 0, "erase from an empty DRAM queue");
    Node& n = nodes_[slot];
    (n.prev == kEnd ? head_ : nodes_[n.prev].next) = n.next;
    (n.next == kEnd ? tail_ : nodes_[n.next].prev) = n.prev;
    Ends& b = bank_ends_[n.entry.flat_bank];
    (n.bank_prev == kEnd ? b.head : nodes_[n.bank_prev].bank_next) = n.bank_next;
    (n.bank_next == kEnd ? b.tail : nodes_[n.bank_next].bank_prev) = n.bank_prev;
    n.next = free_;
    free_ = slot;
    --size_;
  }

 private:
  struct Node {
    QueueEntry entry;
    int prev = kEnd, next = kEnd;
    int bank_prev = kEnd, bank_next = kEnd;
  };
  struct Ends {
    int head = kEnd, tail = kEnd;
  };
  std::vector<Node> nodes_;
  std::vector<Ends> bank_ends_;
  int head_ = kEnd, tail_ = kEnd, free_ = kEnd;
  std::size_t size_ = 0;
};

}  // namespace fusim::dram

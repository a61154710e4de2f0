#pragma once
// Requests a MemoryPort refused, waiting to be sent: a FIFO per queue (one per
// MemoryPort::destination, plus any a sender adds, such as the hierarchy's block pieces),
// so that a full DRAM channel holds up only the requests that wait for it. A request
// joins behind its queue's others even when the memory would now accept it (arrival
// order within a queue); the queues are served in the order they began to wait.
// One rule for every sender: the hierarchy's outgoing misses (mem/cache/timed_path.h)
// and the DRAM curve probe (mem/residency/dram_probe.cpp), so that the curve the tensor
// fidelity reads is measured under the same queueing as the line path it stands for.
#include <cstddef>
#include <deque>
#include <vector>

#include "core/error.h"
#include "mem/memory_port.h"

namespace fusim::mem {

class RefusedQueues {
 public:
  void reset(std::size_t queues) {
    fifo_.assign(queues, {});
    refused_.assign(queues, Refusal{});
    waiting_queues_.clear();
    count_ = 0;
  }
  std::size_t queues() const { return fifo_.size(); }
  bool empty(std::size_t q) const { return fifo_[q].empty(); }
  std::size_t size() const { return count_; }  // requests waiting, all queues

  void push(std::size_t q, const MemRequest& r) {
    FUSIM_ASSERT(q < fifo_.size(), "refused-request queue out of range");
    if (fifo_[q].empty()) {
      waiting_queues_.push_back(q);
      refused_[q] = Refusal{};  // a new head: ask about it
    }
    fifo_[q].push_back(r);
    ++count_;
  }

  // Sends each waiting queue's head while `port` accepts it, by `send(request)` (which
  // must hand it to `port`); a refused head holds up only its own queue. The caller asks
  // for the port's retry while size() != 0. A head refused by a port queue that has freed
  // no entry since is not asked about again (MemoryPort::refused_by): the answer would be
  // the same.
  template <class Send>
  void drain(const MemoryPort& port, Send&& send) {
    std::size_t keep = 0;
    for (const std::size_t q : waiting_queues_) {
      std::deque<MemRequest>& f = fifo_[q];
      Refusal& why = refused_[q];
      if (why.by >= 0 && why.freed != MemoryPort::kUntracked &&
          port.room_freed(why.by) == why.freed) {
        waiting_queues_[keep++] = q;
        continue;
      }
      while (!f.empty()) {
        const int by = port.refused_by(f.front());
        if (by >= 0) {
          why = Refusal{by, port.room_freed(by)};
          break;
        }
        const MemRequest r = f.front();
        f.pop_front();
        --count_;
        send(r);
      }
      if (!f.empty()) waiting_queues_[keep++] = q;
    }
    waiting_queues_.resize(keep);
  }

 private:
  // Why a queue's head was last refused: the port's queue and its freed count then.
  struct Refusal {
    int by = -1;
    std::uint64_t freed = 0;
  };
  std::vector<std::deque<MemRequest>> fifo_;
  std::vector<Refusal> refused_;
  std::vector<std::size_t>
      waiting_queues_;  // queues with requests, in the order they began to wait
  std::size_t count_ = 0;
};

}  // namespace fusim::mem

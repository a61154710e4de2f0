#pragma once
// The boundary between the cache hierarchy and main memory, in DRAMsim3's shape:
// ask will_accept, then send; completion arrives through the callback at the tick the data
// is back. A sender that was refused says so (request_retry) and waits for the retry
// callback instead of polling: the
// memory knows the tick room frees, and a sender polling on its own clock would both miss
// that tick and keep the memory from running ahead (an event every clock while it is full).
// Both the DRAM controller and the fixed-latency stub implement it.
#include <cstdint>
#include <functional>

#include "core/time.h"

namespace fusim::mem {

using Addr = std::uint64_t;

struct MemRequest {
  Addr addr = 0;  // byte address of the line/block
  std::uint32_t bytes = 64;
  // 0: one request. Else it stands for bytes / part_bytes requests of part_bytes each (a
  // block-fidelity piece standing for lines): a memory that keeps a queue per channel may
  // take it at once and let each part enter its channel's queue when that has room, as
  // the separate requests would (DramSystem does; others take it whole).
  std::uint32_t part_bytes = 0;
  bool is_write = false;
  int requester = 0;  // core/stream id, for per-requester stats and stream-aware scheduling
  std::uint64_t id = 0;
};

class MemoryPort {
 public:
  using Completion = std::function<void(const MemRequest&, Tick done)>;
  virtual ~MemoryPort() = default;
  // Whether `request` fits now; asking changes nothing.
  virtual bool will_accept(const MemRequest& request) const = 0;
  virtual void send(const MemRequest& request) = 0;  // at the event queue's now()
  virtual void set_completion(Completion completion) = 0;
  // Called once, from an event at the first tick a refused request may fit (an entry of
  // the memory's queues freed), after request_retry(); a sender whose request still does
  // not fit asks again.
  virtual void set_retry(std::function<void()> retry) = 0;
  // A sender that will_accept refused waits for the retry callback.
  virtual void request_retry() = 0;
  // Which of the memory's independent queues `request` waits in while refused (a DRAM
  // channel: that of its first atom), 0 .. destinations() - 1. A sender keeps its refused
  // requests in a FIFO per destination, so that a full channel holds up only what waits
  // for it (a GPU's L2 slices queue per memory partition, a CPU's mesh per memory
  // controller), not every request behind it. Default: one queue.
  virtual int destinations() const { return 1; }
  virtual int destination(const MemRequest& /*request*/) const { return 0; }
  // For a sender holding many refused requests (mem/refused_queues.h): which of the
  // memory's queues refuses `request` now (-1: it fits, as will_accept says), and
  // room_freed(that queue), a count that grows whenever the queue frees an entry. While
  // the count stays where it was at the refusal, the request is still refused (sending
  // only takes room), and the sender need not ask again: at every retry it would ask the
  // head of every destination's FIFO (the H100's 80 pseudo-channels, at every column
  // command). Default: will_accept's answer, and kUntracked (ask again every time).
  static constexpr std::uint64_t kUntracked = ~std::uint64_t{0};
  virtual int refused_by(const MemRequest& request) const { return will_accept(request) ? -1 : 0; }
  virtual std::uint64_t room_freed(int /*queue*/) const { return kUntracked; }
};

}  // namespace fusim::mem

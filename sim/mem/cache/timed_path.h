#pragma once
// The timed path of a cache hierarchy (its contract is (b) in hierarchy.h): ranges in
// flight, MSHRs, ports, and the queue of requests waiting for the memory port. It runs on
// top of the Hierarchy's contents through the Hierarchy's public interface (the lookups of
// access_captured(), MSHR and port sizes of level_config()); the Hierarchy owns one and
// forwards attach_memory / start_range / busy / describe_state to it.
#include <deque>
#include <unordered_map>
#include <vector>

#include "mem/cache/hierarchy.h"
#include "mem/cache/port_calendar.h"
#include "mem/refused_queues.h"

namespace fusim::cache {

class TimedPath {
 public:
  using Done = Hierarchy::Done;
  explicit TimedPath(Hierarchy& h);

  void attach(EventQueue& queue, mem::MemoryPort& port);
  bool attached() const { return queue_ != nullptr; }
  // A request not waited for (writebacks, sync-path misses): sent when the port accepts.
  void post(const mem::MemRequest& request);
  // Units [first, end); whole_first / whole_last: the range covers that end unit entirely.
  void start(int core, std::uint64_t first, std::uint64_t end, bool whole_first, bool whole_last,
             AccessKind kind, Done done);
  bool busy() const;
  std::string describe() const;

 private:
  struct Transfer {
    int core = 0;
    std::uint64_t first = 0, next = 0, end = 0;
    bool whole_first = true, whole_last = true;
    AccessKind kind = AccessKind::Read;
    Tick cursor = 0, finish = 0;
    std::uint32_t outstanding = 0;
    // blocked: its last missing unit still has lines waiting for MSHRs (issue is in order,
    // so nothing after that unit issues before they are sent).
    bool active = false, parked = false, completing = false, blocked = false;
    // The unit it parked at and Hierarchy::fills() then: that unit is known to miss
    // everywhere while no fill since was of it (Hierarchy::maybe_filled_since).
    std::uint64_t parked_unit = 0, parked_fills = UINT64_MAX;
    Done done;
  };
  static constexpr std::uint32_t kNoUnit = UINT32_MAX;
  // The read of a unit that missed every level. MSHRs count lines: a block-fidelity unit
  // of k lines needs k of them, like the k line misses it stands for, so it is sent to
  // memory in pieces of at most the free MSHR lines (in line fidelity k = 1, one piece).
  // The dirty victims the unit evicted to memory go with it: each line filled evicts one
  // line, so a piece of n lines writes back n lines of each victim (see send_piece).
  struct UnitMiss {
    std::uint32_t slot = 0;
    int core = 0;
    mem::MemRequest request;  // the whole unit; pieces are sent from `sent_lines` on
    std::uint32_t lines = 0, sent_lines = 0, pieces_in_flight = 0;
    std::array<mem::MemRequest, kMaxLevels> writebacks;  // whole victim units
    int writeback_count = 0;
  };
  // A request in flight: a piece of a UnitMiss (holding `lines` MSHR lines), or a direct
  // write of a range (unit == kNoUnit, lines == 0).
  struct Miss {
    std::uint32_t slot;
    int core;
    std::uint32_t lines;
    std::uint32_t unit;
  };

  void advance(std::uint32_t slot);
  void maybe_complete(std::uint32_t slot);
  void on_memory_done(const mem::MemRequest& request, Tick done);
  // Sends `r` now if its destination's queue is empty and the memory accepts it, else
  // queues it there.
  void enqueue(const mem::MemRequest& r);
  void send(const mem::MemRequest& r);
  void pump();
  // MSHR lines free for a new miss of `core`: the least over the levels on its path.
  std::uint32_t free_mshr_lines(int core) const;
  void take_mshrs(int core, int delta);
  bool unsent_lines_of(int core) const;
  // Issues the next piece of unit miss `u` at `issue` if an MSHR line is free: its lines
  // queue at the ports of the levels below the first, and it is sent to memory a
  // miss-issue latency plus that queueing later (*sent_at, if given). True when every line
  // of the unit has been sent.
  bool send_piece(std::uint32_t u, Tick issue, Tick* sent_at = nullptr);
  void resume_after_free();
  std::uint32_t& mshrs_used(int level, int core);
  PortCalendar& port(int level, int core);
  // Queues at level k's port for a unit arriving at `arrival`; returns when it gets in.
  Tick through_port(int level, int core, Tick arrival);
  // The same for `lines` lines of a unit (a piece of a block miss).
  Tick through_port(int level, int core, Tick arrival, std::uint32_t lines);

  Hierarchy& h_;
  EventQueue* queue_ = nullptr;
  mem::MemoryPort* port_ = nullptr;
  // Requests the memory refused, a FIFO per destination (MemoryPort::destination) and one
  // for block pieces (the last).
  mem::RefusedQueues outgoing_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> parked_;
  std::vector<std::vector<std::uint32_t>> mshrs_used_;  // [level][instance]
  std::vector<std::vector<PortCalendar>> ports_;        // [level][instance]
  std::unordered_map<std::uint64_t, Miss> waiting_;     // request id -> range waiting for it
  std::vector<UnitMiss> unit_misses_;
  std::vector<std::uint32_t> free_unit_misses_;
  std::deque<std::uint32_t> unsent_;            // unit misses with lines not yet sent, oldest first
  std::vector<std::uint32_t> unsent_per_core_;  // how many of unsent_ are each core's
  std::vector<std::uint32_t> resume_;           // resume_after_free's scratch
  std::vector<char> out_of_mshrs_;              // resume_after_free's scratch, per core
  // MSHR lines free (take_mshrs keeps them): per core the least over its private levels,
  // and the least over the shared levels (UINT32_MAX: no such level).
  std::vector<std::uint32_t> private_free_;
  std::uint32_t shared_free_ = UINT32_MAX;
  std::uint32_t line_bytes_ = 64;
  std::uint64_t next_id_ = 1;
  std::uint64_t posted_in_flight_ = 0;
};

}  // namespace fusim::cache

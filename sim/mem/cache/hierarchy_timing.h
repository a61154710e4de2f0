#pragma once
// Private to the hierarchy: the timed path (ranges in flight, MSHRs, ports, the queue of
// requests waiting for the memory port). Only hierarchy*.cpp include this.
#include <deque>
#include <unordered_map>
#include <vector>

#include "mem/cache/hierarchy.h"

namespace fusim::cache {

class Hierarchy::Timing {
 public:
  explicit Timing(Hierarchy& h);

  void attach(EventQueue& queue, mem::MemoryPort& port);
  bool attached() const { return queue_ != nullptr; }
  // A request not waited for (writebacks, sync-path misses): sent when the port accepts.
  void post(const mem::MemRequest& request);
  void start(int core, std::uint64_t first, std::uint64_t end, AccessKind kind, Done done);
  bool busy() const;
  std::string describe() const;

 private:
  struct Transfer {
    int core = 0;
    std::uint64_t next = 0, end = 0;
    AccessKind kind = AccessKind::Read;
    Tick cursor = 0, finish = 0;
    std::uint32_t outstanding = 0;
    bool active = false, parked = false, completing = false;
    Done done;
  };
  struct Miss {
    std::uint32_t slot;
    int core;
    bool holds_mshrs;
  };

  void advance(std::uint32_t slot);
  void maybe_complete(std::uint32_t slot);
  void on_memory_done(const mem::MemRequest& request, Tick done);
  void pump();
  bool mshrs_free(int core) const;
  void take_mshrs(int core, int delta);
  std::uint32_t& mshrs_used(int level, int core);
  // Queues at level k's port for a unit arriving at `arrival`; returns when it gets in.
  Tick through_port(int level, int core, Tick arrival);

  Hierarchy& h_;
  EventQueue* queue_ = nullptr;
  mem::MemoryPort* port_ = nullptr;
  std::deque<mem::MemRequest> outgoing_;
  bool retry_scheduled_ = false;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> parked_;
  std::vector<std::vector<std::uint32_t>> mshrs_used_;  // [level][instance]
  std::vector<std::vector<Tick>> port_free_;            // [level][instance]
  std::unordered_map<std::uint64_t, Miss> waiting_;     // request id -> range waiting for it
  std::uint64_t next_id_ = 1;
  std::uint64_t posted_in_flight_ = 0;
};

}  // namespace fusim::cache

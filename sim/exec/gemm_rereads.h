#pragma once
// Private to sim/exec: the analytic GEMM re-reads of the simulated executor. The first
// read of a GEMM operand streams through the cache hierarchy (so contents and DRAM traffic
// are simulated); its repeats - 1 re-reads (compute/access_program.h) are served by the
// level that holds it, timed and counted in the stats as the hierarchy would count them:
// streaming them again would only find the operand there again, at 10-100x the events.
#include <cstdint>
#include <vector>

#include "core/event_queue.h"
#include "exec/memory_tap.h"
#include "mem/cache/hierarchy.h"

namespace fusim::exec {

// What the re-reads need to know of the memory side that runs: cache::Hierarchy (line and
// block fidelity) or TensorSide (tensor fidelity, tensor_side.h); both give the line
// model's numbers.
struct RereadTiming {
  std::uint64_t unit_bytes = 64;
  std::vector<Tick> hit_latency;  // per level: issue to data for a unit found there
  Tick first_port = 0;            // port occupancy of a unit at the first level
  Tick miss_issue = 0;            // issue to the request reaching memory
  template <class Memory>
  static RereadTiming of(const Memory& m) {
    RereadTiming t;
    t.unit_bytes = m.unit_bytes();
    for (int l = 0; l < m.levels(); ++l) t.hit_latency.push_back(m.hit_latency(l));
    t.first_port = m.port_occupancy(0);
    t.miss_issue = m.miss_issue_latency();
    return t;
  }
};

class GemmRereads {
 public:
  // `memory_bytes_per_ps`: what long streams sustain on main memory (0 = unlimited).
  GemmRereads(const EventQueue& queue, RereadTiming timing, const cache::HierarchyConfig& config,
              MemoryTap& tap, double memory_bytes_per_ps);

  // Level that serves the re-reads of an operand of `bytes` (levels() = main memory).
  int level_for(std::int64_t bytes) const;
  // The cache levels (levels() is main memory, levels() - 1 the last cache level).
  int levels() const { return static_cast<int>(level_bytes_.size()); }
  // Accounts `bytes` of re-reads served at `level` for an op on `units` (cores/SMs);
  // returns the tick they are in.
  Tick serve(int level, std::int64_t bytes, const std::vector<int>& units);
  // The hierarchy's `stats` with the re-reads served so far added.
  cache::HierarchyStats add_to(cache::HierarchyStats stats) const;

 private:
  const EventQueue& queue_;
  RereadTiming timing_;
  MemoryTap& tap_;
  std::vector<std::int64_t> level_bytes_;
  std::vector<cache::CacheStats> stats_;  // per level
  cache::MemoryTraffic memory_;
  double memory_bytes_per_ps_;
  Tick memory_pipe_free_ = 0;  // main memory re-reads queue on one bandwidth pipe
};

}  // namespace fusim::exec

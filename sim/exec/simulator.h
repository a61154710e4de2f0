#pragma once
// Private to sim/exec: the event-driven engine behind simulate() (simulate.h documents the
// model). One Simulator runs one schedule once.
#include <memory>
#include <vector>

#include "compute/access_program.h"
#include "core/event_queue.h"
#include "exec/machine_memory.h"
#include "exec/memory_tap.h"
#include "exec/simulate.h"
#include "mem/cache/hierarchy.h"

namespace fusim::exec {

class Simulator {
 public:
  Simulator(const workload::Trace& trace, const schedule::Schedule& schedule,
            const Machine& machine, const SimOptions& options);
  ~Simulator();
  SimulationDetail run();

 private:
  struct OpState {
    int remaining_deps = 0;
    bool started = false, done = false;
    Tick start = 0, end = 0;
    Tick earliest_start = 0, earliest_end = 0;  // GPU: asynchronous launch times
    int lane = 0;
    std::vector<int> cores;
    std::int64_t dram_at_start = 0, dram_bytes = 0;
    compute::AccessProgram program;
    // Progress through the current pass.
    std::size_t pass = 0;
    int chunks = 0, next_mem = 0, mem_done_prefix = 0, comp_done = 0;
    bool computing = false;
    std::vector<int> outstanding;  // per chunk: ranges in flight
  };
  struct Snapshot {
    Tick time = 0;
    std::int64_t dram = 0;
    cache::HierarchyStats cache;
  };

  void try_start();
  void start(int op);
  void begin_work(int op);
  void advance(int op);
  void issue_chunk(int op, int chunk);
  void finish(int op);
  int pass_cores(const OpState& s) const;
  Tick compute_time(const OpState& s, std::int64_t flops) const;
  int ready_lanes_waiting(int except_lane) const;
  Snapshot snapshot() const;
  void fill_result(SimulationDetail& out);
  // The hierarchy's stats plus the analytically served re-reads.
  cache::HierarchyStats cache_stats() const;
  // Level that serves the re-reads of an operand of `bytes` (levels() = main memory).
  int reread_level(std::int64_t bytes) const;
  // Accounts `bytes` of re-reads served at `level` for op `id`; returns when they are in.
  Tick serve_rereads(int id, int level, std::int64_t bytes);

  const workload::Trace& trace_;
  const schedule::Schedule& schedule_;
  const Machine& machine_;
  SimOptions options_;
  bool gpu_;
  EventQueue queue_;
  std::unique_ptr<cache::Hierarchy> caches_;
  std::unique_ptr<mem::MemoryPort> memory_;
  std::unique_ptr<MemoryTap> tap_;

  std::vector<OpState> ops_;
  std::vector<std::vector<int>> dependents_;
  std::vector<std::vector<int>> lanes_;  // op ids per lane, issue order
  std::vector<std::size_t> lane_head_;   // next op of each lane not yet started
  std::vector<bool> lane_busy_;
  std::vector<bool> sm_free_;  // GPU
  int free_sms_ = 0, running_kernels_ = 0;
  std::vector<int> first_forward_;    // op that opens each step
  std::vector<Snapshot> boundaries_;  // per step, taken when first_forward_ starts
  std::vector<bool> boundary_taken_;
  // Analytic GEMM re-reads (see issue_chunk): per-level sizes, extra stats, and the
  // bandwidth pipe of main memory they queue on.
  std::vector<std::int64_t> level_bytes_;
  std::vector<cache::CacheStats> reread_stats_;
  cache::MemoryTraffic reread_memory_;
  double memory_bytes_per_ps_ = 0;  // 0: unlimited
  Tick memory_pipe_free_ = 0;
  std::size_t finished_ = 0, progress_every_ = 1;
  Tick wake_pending_ = kNever;
};

}  // namespace fusim::exec

#pragma once
// Private to sim/exec: the event-driven engine behind simulate() (simulate.h documents the
// model). One Simulator runs one schedule once and records what happened; the compute units
// (compute/units.h), the cache hierarchy, main memory and the analytic GEMM re-reads
// (gemm_rereads.h) are its parts, and steady_state() (steady_state.h) turns the record into
// the RunResult. What it does itself: dependencies, an op's passes and chunks (double
// buffered memory and compute), step-boundary snapshots, and the stall check.
#include <memory>
#include <vector>

#include "compute/access_program.h"
#include "compute/units.h"
#include "core/event_queue.h"
#include "exec/gemm_rereads.h"
#include "exec/machine_memory.h"
#include "exec/memory_tap.h"
#include "exec/simulate.h"
#include "exec/steady_state.h"
#include "mem/cache/hierarchy.h"

namespace fusim::exec {

class TensorSide;

class Simulator {
 public:
  Simulator(const workload::Trace& trace, const schedule::Schedule& schedule,
            const Machine& machine, const SimOptions& options);
  ~Simulator();
  SimulationRecord run();

 private:
  struct OpState {
    int remaining_deps = 0;
    bool started = false, done = false;
    Tick start = 0, end = 0;
    std::vector<int> cores;  // the units it runs on
    std::int64_t dram_at_start = 0, dram_bytes = 0;
    compute::AccessProgram program;
    // Progress through the current pass.
    std::size_t pass = 0;
    int chunks = 0, next_mem = 0, mem_done_prefix = 0, comp_done = 0;
    bool computing = false;
    Tick compute = 0;              // compute time given to its chunks so far
    std::vector<int> outstanding;  // per chunk: ranges in flight
    // Posted writes (compute_config.h SerialReads): per chunk, write ranges in flight,
    // and the chunks whose writes are all in.
    std::vector<int> writes;
    int writes_done_prefix = 0;
  };

  void try_start();
  void start(int op);
  void begin_work(int op);
  void advance(int op);
  void issue_chunk(int op, int chunk);
  void finish(int op);
  // The op's units that work on its current pass (ComputeUnits::working_units).
  int working_units(const OpState& s) const;
  // Lanes other than `except` whose next op could start now (GPU SM sharing).
  int ready_lanes_waiting(int except_lane) const;
  Snapshot snapshot() const;
  std::vector<DramRequesterReads> dram_requesters() const;  // so far (MainMemory::requesters)
  std::string describe_ops() const;

  const workload::Trace& trace_;
  const schedule::Schedule& schedule_;
  const Machine& machine_;
  SimOptions options_;
  EventQueue queue_;
  compute::ComputeUnits units_;
  std::unique_ptr<cache::Hierarchy> caches_;  // line and block fidelity
  std::unique_ptr<TensorSide> tensor_;        // tensor fidelity (tensor_side.h)
  MainMemory memory_;
  std::unique_ptr<MemoryTap> tap_;
  std::unique_ptr<GemmRereads> rereads_;

  std::vector<OpState> ops_;
  std::vector<std::vector<int>> dependents_;
  std::vector<int> first_forward_;                   // op that opens each step
  std::vector<std::optional<Snapshot>> boundaries_;  // per step, when first_forward_ starts
  std::size_t finished_ = 0, progress_every_ = 1;
  Tick wake_pending_ = kNever;
  // The model context term (compute/model_context.h): per op its family's index (-1: none), per
  // family when its last op started (-1: never). Empty without the term.
  std::vector<int> context_family_;
  std::vector<Tick> family_last_start_;
};

}  // namespace fusim::exec

#pragma once
// A machine's compute units as the simulated executor drives them (sim/exec/simulate.h
// states the model; this is its compute half):
//  - Lanes run ops in issue order, one at a time. CPU: the cores form cores/threads_per_op
//    groups and stream s runs on group s mod groups (one PyTorch thread dispatching to its
//    intra-op pool). GPU: one lane per stream; kernels of different streams run at once on
//    disjoint SMs (a kernel takes min(its grid blocks, free SMs) SMs, half of them when
//    another lane has a kernel ready too; at most max_concurrent_kernels at once).
//  - Launch model. CPU: an op's kernels x dispatch_overhead run on the host before its
//    work. GPU: one host thread launches every kernel in issue order without waiting, one
//    per dispatch_overhead; an op starts no earlier than its first launch + launch_latency
//    and ends no earlier than its last launch + launch_latency.
//  - Compute time: FLOPs at the op class's achieved rate on the op's units.
// It knows nothing of dependencies, memory or events: the executor asks it which op a lane
// runs next, whether it can be placed now, and tells it when ops start and finish.
#include <cstdint>
#include <string>
#include <vector>

#include "compute/compute_config.h"
#include "core/time.h"
#include "schedule/schedule.h"

namespace fusim::compute {

class ComputeUnits {
 public:
  ComputeUnits(const ComputeConfig& config, const schedule::Schedule& schedule);

  int lanes() const { return static_cast<int>(lanes_.size()); }
  int lane_of(int op) const { return lane_of_[static_cast<std::size_t>(op)]; }
  // The next op of `lane` (op id), or -1 when the lane is running one or has none left.
  int next(int lane) const;
  // GPU launch model: the earliest an op may start and end (0 on CPUs and for views).
  Tick earliest_start(int op) const { return earliest_start_[static_cast<std::size_t>(op)]; }
  Tick earliest_end(int op) const { return earliest_end_[static_cast<std::size_t>(op)]; }
  // Room for a kernel of `op` now (GPU: a free SM, fewer than max_concurrent_kernels
  // running); always true on CPUs and for views.
  bool can_place(const schedule::Op& op) const;

  // `op` (the next of its lane) starts: the lane is taken until finish().
  void start(const schedule::Op& op);
  // The units (core or SM indices) its kernel runs on; `contended`: another lane has a
  // kernel ready now (a GPU kernel then leaves half the free SMs to it).
  std::vector<int> take_units(const schedule::Op& op, std::int64_t grid_blocks, bool contended);
  void finish(const schedule::Op& op, const std::vector<int>& units);

  // Host time an op's dispatches take before its work (CPU); 0 on GPUs (paid by the
  // launching thread, see earliest_start).
  Tick dispatch_time(const schedule::Op& op) const;
  // Units of the `held` ones that work on a pass: all of them, or on a CPU at most
  // `max_threads` where the kernel's grain leaves cores idle (a small tensor's elementwise
  // op runs on one thread: schedule::MemoryPass::max_threads; 0 = no limit). GPUs: every SM
  // the op holds.
  int working_units(int held, int max_threads) const;
  // Time of `flops` of an op class and dtype on `units` units.
  Tick compute_time(OpClass op_class, workload::DType dtype, int units, std::int64_t flops) const;

  // Ops running or waiting in a lane.
  bool busy() const;
  // One line per lane (its units, the op it runs, ops left) and the SM pool: the
  // watchdog's dump.
  std::string describe() const;

 private:
  const ComputeConfig& config_;
  bool gpu_;
  std::vector<std::vector<int>> lanes_;  // op ids per lane, issue order
  std::vector<std::size_t> head_;        // next op of each lane not yet started
  std::vector<int> running_;             // op each lane runs, -1 if none
  std::vector<int> lane_of_;             // per op
  std::vector<Tick> earliest_start_, earliest_end_;
  std::vector<bool> sm_free_;  // GPU
  int free_sms_ = 0, running_kernels_ = 0;
};

}  // namespace fusim::compute

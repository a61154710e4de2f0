#pragma once
// Private to sim/exec: the memory side of the `tensor` fidelity as the Simulator drives it
// (simulate.h). A chunk of an op is one call: its slice of every range of the pass goes
// through range residency and the bandwidth pipes (sim/mem/residency/tensor_memory.h) and
// completes once, instead of one transfer per range per core through cache::Hierarchy.
// Main memory is the DRAM controller's own bandwidth-latency curves (dram_curve.h), taken
// from SimOptions::dram_curves (shared by the simulations of a command or sweep) or
// measured / read from the curve cache folder on first use; the fixed-latency stand-in is
// its latency and bandwidth.
//
// Private levels: on a CPU each lane's core group (threads_per_op cores, the cores an op
// of that lane runs on) is one bin of private stacks; on a GPU each set of SMs a kernel
// ran on is a bin of its own (a kernel takes whichever SMs are free: an op on 8 SMs holds
// 8 L1s' worth), aged by what the other sets fill into its SMs (shared_cores.h); a byte
// hits only for the same SM set and slice (Owner, range_stack.h).
//
// The bytes a chunk sends to main memory are counted on the MemoryTap when it is issued
// (split evenly over the op's cores), so per-op DRAM bytes, snapshots and the timeline's
// DRAM track work as in the other fidelities; the track shows them at issue, not at
// completion.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "exec/machine.h"
#include "exec/memory_tap.h"
#include "exec/simulate.h"
#include "mem/residency/dram_curve.h"
#include "mem/residency/memory_curve.h"
#include "mem/residency/tensor_memory.h"

namespace fusim::exec {

class TensorSide {
 public:
  TensorSide(EventQueue& queue, const Machine& machine, const SimOptions& options);

  // Issues one chunk of an op on `cores`: `ranges` are the chunk's slices. `done` runs as
  // an event when all of it is in; bytes to memory are counted on `tap`.
  void issue(const std::vector<int>& cores, const std::vector<residency::TensorRange>& ranges,
             MemoryTap& tap, residency::TensorMemory::Done done);

  int levels() const { return memory_->levels(); }
  std::uint64_t unit_bytes() const { return memory_->unit_bytes(); }
  Tick hit_latency(int level) const { return memory_->hit_latency(level); }
  Tick miss_issue_latency() const { return memory_->miss_issue_latency(); }
  Tick port_occupancy(int level) const { return memory_->port_occupancy(level); }
  cache::HierarchyStats stats() const { return memory_->stats(); }
  bool busy() const { return memory_->pipes().active() > 0; }  // flows in flight (watchdog)
  std::string describe_state() const;

  // The curve parameters a machine's DRAM is measured with for `options` (the key of the
  // curves: every simulation of one machine and chunk size shares them).
  static residency::DramCurveParams curve_params(const Machine& machine, const SimOptions& options);

 private:
  bool gpu_;
  int threads_per_op_;
  std::shared_ptr<residency::DramCurves> curves_;
  std::unique_ptr<residency::MemoryCurve> curve_;
  std::unique_ptr<residency::TensorMemory> memory_;
};

}  // namespace fusim::exec

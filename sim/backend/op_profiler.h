#pragma once
// `fusim profile`: every distinct op of a trace (compute/op_signature.h) measured in
// isolation on this host through the backend's own ops (TrainingState::execute, the code
// `fusim run` times), median of repeats, into an exec::OpProfile. No torch types here.
//
// How an op is isolated: an eager step is run once to create every gradient and optimizer
// state tensor; in the next step each op runs as the step runs it, and an op whose
// signature is not measured yet is run `repeats` times back to back, the step's state it
// consumes restored before each run (TrainingState::OpInputs), the first run discarded
// (it warms the caches), the others timed: the cache state that exec/compute_solver.h
// assumes when it splits the measured time into compute and memory. Signatures of the
// other orderings (backward-fused, forward-fused) are measured on the eager op of the same
// kind and layer: the backend runs the same code for F_i, B_i and U_i in every ordering.
#include <functional>
#include <string>

#include "backend/executor.h"
#include "backend/optimizer_config.h"
#include "exec/op_profile.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

struct ProfileOptions {
  std::string device = "cpu";
  int threads = 0;         // intra-op threads; 0 keeps libtorch's default
  int min_repeats = 5;     // timed runs per op, at least
  int max_repeats = 41;    // and at most
  double target_s = 0.05;  // timed runs per op: about this long in all, within those bounds
  std::uint64_t seed = 1;
  // > 0: each op is also timed cold, a buffer of this many bytes read before each run so
  // that the caches hold none of its tensors (as an op whose inputs and weights were last
  // touched long before finds them in a step). Beyond the last cache: 2x its size or more.
  std::int64_t evict_bytes = 0;
  // Which ops to measure (null: all); `fusim calibrate` measures only its probed layer's.
  std::function<bool(const schedule::Op&)> measure;
  // Also time views (layer ops without a kernel: their call through the layer execution's
  // autograd boundary); `fusim calibrate` fits "view.<kind>" from them. Profiles leave them
  // out: simulate gives a view its calibrated call time, not a profile's.
  bool views = false;
  // Called after each measured op with (done, total, description).
  std::function<void(int, int, const std::string&)> progress;
};

// `schedules`: the schedules whose ops the profile must cover (one per ordering, same trace,
// optimizer and implementation; the first must be eager with at least 2 steps).
exec::OpProfile profile_ops(const workload::Trace& trace,
                            const std::vector<schedule::Schedule>& schedules,
                            const OptimizerConfig& optimizer, const ProfileOptions& options);

// Every op of every ordering of `trace` as simulate and validate build them (their default
// 4 steps: forward-fused's first updates and final flush included), measured: what
// `fusim profile` writes and `validate --profile auto` measures. options.threads 0: every
// core this process may use (as `fusim calibrate` sets a host's threads_per_op).
exec::OpProfile profile_trace(const workload::Trace& trace, const std::string& optimizer,
                              schedule::OptimizerImpl impl, ProfileOptions options);

// A step profile (exec/op_profile.h, context "step": `fusim profile --in-step`, `validate
// --profile in-step`): the eager schedule of `execution` run as `fusim run` runs it (the
// options' warm-up and measured steps, threads pinned; no extension), each op's time taken
// inside the measured steps (exec::in_step_profile). options.threads 0: every core this
// process may use, as profile_trace.
exec::OpProfile profile_in_step(const workload::Trace& trace, const std::string& optimizer,
                                schedule::OptimizerImpl impl, schedule::Execution execution,
                                RunOptions options);

}  // namespace fusim::backend

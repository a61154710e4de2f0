#pragma once
// `fusim calibrate`'s switch costs (compute/op_cost_model.h, families "switch.U" and
// "switch.after_U"): what an op pays on this host when the op before it on its thread is
// of the other side of the update boundary, an optimizer update after a forward or
// backward op, or one of those after an update. A fused ordering has two such switches per
// layer where eager has two per step, and on a 2-core EPYC VM a backward-fused Adam update
// measured 10-33 us more than the same update in eager's run of updates, the backward op
// after it 1-37 us more (validate --per-op): the code and state one side leaves cold for
// the other. No torch types here.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exec/machine.h"
#include "exec/run_result.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

// Each cost is fixed + per_mib x the MiB the update touches (its tensors: parameters,
// gradients, optimizer state).
struct SwitchCosts {
  double update_ns = 0, update_per_mib_ns = 0;              // an update after a non-update op
  double after_update_ns = 0, after_update_per_mib_ns = 0;  // a non-update op after one
  int samples = 0;                                          // layers measured on each side
  // An update of a layer of this op after its backward op ("switch.U.<layer op>"): the
  // CNN probe's convolutions and batch norms. Their small updates pay a fixed cost the
  // MLPs' line does not have (2-core EPYC VM, Adam: 6-7 us where the line gives ~1 us).
  struct LayerOp {
    std::string layer_op;
    double update_ns = 0, update_per_mib_ns = 0;
    int samples = 0;
  };
  std::vector<LayerOp> by_layer_op;
  std::string how;  // for the machine file's sources
};

// Runs 12-layer MLPs 256 and 1024 wide (batch 8, `optimizer` foreach: Adam's updates touch
// ~1.5 and ~24 MiB)
// eager and backward-fused, blocks interleaved, each op timed inside its steps (the code
// `fusim run` times), and takes per layer the backward-fused op's median time minus the
// same op's in eager, where the backward-fused op sits at a switch and the eager one does
// not; the medians of those differences per width, and a line through the two (fixed,
// per MiB; both >= 0). On the 2-core EPYC VM: 4.8 us at 1 MiB, 164 us at 16 MiB for an
// update: what it pays grows with what it touches, as cross-core transfers of the
// gradients the backward op just wrote would. Then a 12-block CNN (3x3 convolutions, 32
// channels of 16x16, batch norm, relu) the same way: per layer op of the updates, the
// median difference is that op's fixed part, with no per-MiB part (by_layer_op; the MLPs'
// slope, measured on linear layers, over-charged the convolutions' large updates).
// A 12-layer MLP 32 wide shows no such cost (-1 us), so it is not given to every layer.
// `threads`: the machine's threads_per_op.
// `model`: this host's machine with the fitted op costs and no switch costs yet. With it,
// each op's difference is taken less the same op's difference simulated on it (the same
// schedules, tensor fidelity): a backward-fused update finds its gradient and weights in
// cache, which the simulation gives by itself, so the raw difference counted it twice. On
// the 2-core EPYC VM the 1024-wide MLP's SGD updates (8 MiB) ran 206 us faster at a switch
// than in eager, which drove the line below zero and the switch cost of every SGD update to
// 0, while the simulation gave them most of that saving again.
SwitchCosts measure_switch_costs(const std::string& optimizer, int threads,
                                 const exec::Machine* model = nullptr);

// calibrate's switch-cost phase: measure_switch_costs for Adam (the general families
// "switch.U", "switch.after_U" and "switch.U.<layer op>") and for SGD, whose update touches a
// third of the bytes per parameter (the same with ".sgd" after "switch.U"), added to
// `costs`. Each is simulated on `host` with the op costs in `costs` when called (no switch
// costs yet: what a prediction simulates before adding them). With a `speed_probe`, each
// probe's costs are divided by the host's speed around it (the probe before and after it
// over `typical_us`, the median the op costs were normalized to), as the op probes' times
// are: a switch cost is a difference of two measured times and moves with the host's
// speed as they do; those probe samples are appended to `speed_samples`. Returns how they
// were measured, for the machine file's sources.
std::string calibrate_switch_costs(const exec::Machine& host, int threads,
                                   const std::function<double()>& speed_probe, double typical_us,
                                   compute::OpCostModel& costs, std::vector<double>& speed_samples);

// One probe's samples: for every op of `fused` at a switch whose (kind, layer) twin in
// `eager` sits at none, the op's median time over the measured steps of `fused_measured`
// minus its twin's in `eager_measured`, less the same difference between `fused_simulated`
// and `eager_simulated` where both are given; medians per group: "" (every layer) and each
// update's layer op (an op after an update counts in "" only).
struct SwitchSamples {
  double update_ns = 0, after_ns = 0, bytes = 0;  // medians (bytes: what an update touches)
  double simulated_update_ns = 0;                 // median of the simulated differences
  std::size_t updates = 0, afters = 0;            // samples
};
std::map<std::string, SwitchSamples> switch_samples(
    const schedule::Schedule& eager, const schedule::Schedule& fused,
    const exec::RunResult& eager_measured, const exec::RunResult& fused_measured,
    const exec::RunResult* eager_simulated = nullptr,
    const exec::RunResult* fused_simulated = nullptr);

// The probes' traces: kLayers linear + relu layers `width` wide, and kLayers blocks of a 3x3
// convolution, batch norm and relu (32 channels of 16x16), each with a 4-class head and
// cross-entropy, batch 8.
workload::Trace switch_probe_mlp(int width);
workload::Trace switch_probe_cnn();

}  // namespace fusim::backend

#pragma once
// `fusim calibrate`'s switch costs (compute/op_cost_model.h, families "switch.U" and
// "switch.after_U"): what an op pays on this host when the op before it on its thread is
// of the other side of the update boundary, an optimizer update after a forward or
// backward op, or one of those after an update. A fused ordering has two such switches per
// layer where eager has two per step, and on a 2-core EPYC VM a backward-fused Adam update
// measured 10-33 us more than the same update in eager's run of updates, the backward op
// after it 1-37 us more (validate --per-op): the code and state one side leaves cold for
// the other. No torch types here.
#include <string>
#include <vector>

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
// median difference less the line's per-MiB part is that op's fixed part (by_layer_op).
// A 12-layer MLP 32 wide shows no such cost (-1 us), so it is not given to every layer.
// `threads`: the machine's threads_per_op.
SwitchCosts measure_switch_costs(const std::string& optimizer, int threads);

// The probes' traces: kLayers linear + relu layers `width` wide, and kLayers blocks of a 3x3
// convolution, batch norm and relu (32 channels of 16x16), each with a 4-class head and
// cross-entropy, batch 8.
workload::Trace switch_probe_mlp(int width);
workload::Trace switch_probe_cnn();

}  // namespace fusim::backend

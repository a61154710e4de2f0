#pragma once
// `fusim calibrate`'s per-op-family costs (compute/op_cost_model.h): each op family
// measured through the backend's own layer ops (backend/op_profiler.h, the code `fusim
// run` times) over a grid of shapes spanning the zoo and typical user models, each
// measurement turned into the cost the simulated op must have to reproduce it on the
// calibrated machine (exec/compute_solver.h), and one model fitted per family
// (compute/cost_fit.h). No torch types here.
//
// The grid (family_probe.cpp): linear (rows x in x out, 12 shapes), conv2d (kernel 1, 3, 7;
// stride 1, 2; 3 to 512 channels; 2x2 to 64x64 spatial, 10 shapes), depthwise conv2d (4),
// each with F, Bx and Bw; batch and layer norm, max and average pooling, relu, gelu, add,
// dropout, softmax, attention, cross-entropy (3-4 sizes each, F and Bx or L); and every
// optimizer's update per implementation at 4 sizes (1 Ki to 2.4 Mi parameters). Each
// probe is a small trace: relu (so that the probed layer's input needs a gradient), the
// probed layer, flatten, a 4-class linear head and cross-entropy.
#include <functional>
#include <string>
#include <vector>

#include "compute/op_cost_model.h"
#include "exec/machine.h"

namespace fusim::backend {

struct FamilyProbeOptions {
  int threads = 1;  // intra-op threads (the machine's threads_per_op)
  // Called with (done, total, what) after each probe.
  std::function<void(int, int, const std::string&)> progress;
};

// `host`: the calibrated machine without op_costs (caches, DRAM, peak rates).
compute::OpCostModel calibrate_op_costs(const exec::Machine& host,
                                        const FamilyProbeOptions& options);

}  // namespace fusim::backend

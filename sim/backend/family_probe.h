#pragma once
// `fusim calibrate`'s per-op-family costs (compute/op_cost_model.h): each op family
// measured through the backend's own layer ops (backend/op_profiler.h, the code `fusim
// run` times) over a grid of shapes spanning the zoo and typical user models, each
// measurement turned into the cost the simulated op must have to reproduce it on the
// calibrated machine (exec/compute_solver.h), and one model fitted per family
// (compute/cost_fit.h). No torch types here.
//
// The grid (family_grid.cpp): linear (rows x in x out, 12 shapes), conv2d (kernel 1, 3, 7;
// stride 1, 2; 3 to 512 channels; 2x2 to 64x64 spatial, 14 shapes), depthwise and grouped
// conv2d (3x3, 5x5 and 7x7, 16 to 1152 channels, 16; 8 of their Bw ops are ones oneDNN's JIT
// depthwise kernel refuses, conv2d_dw_ref.Bw), each with F, Bx and Bw; bmm (8 to 96
// matrices of 49 to 256 rows, 6 shapes, F and Bx; matmul takes its family); batch norm (13
// shapes, 16 to 1152 channels), layer norm (5, 64 to 8192 rows), max and average pooling
// (adaptive: 5, 128 to 7680 planes), relu, relu6, gelu, silu, sigmoid, tanh, add, mul,
// dropout, softmax (7, rows of 49 to 131072), concat, the generic elementwise and
// data-movement stand-ins, attention (3-4 sizes each, F and Bx), cross-entropy (6 sizes, L), views
// (reshape, permute: the call alone); and every optimizer's update per implementation at 4
// sizes (1 Ki to 2.4 Mi parameters). Each
// probe is a small trace: a trained layer norm (so that the probed layer's input needs a gradient),
// the probed layer, flatten, a 4-class linear head and cross-entropy.
#include <functional>
#include <string>
#include <vector>

#include "compute/cost_fit.h"
#include "compute/op_cost_model.h"
#include "exec/machine.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

// One measured point of a family's fit, as `calibrate --points` writes it: what the probe
// measured, the cost solved from it (dispatch + compute, what the fit fits) and what the
// fitted family gives back, so that a family's fit error can be traced to its shapes.
struct ProbePoint {
  std::string family, probe;
  double measured_ns = 0, cost_ns = 0, fitted_ns = 0;
  // The host's speed while the probe ran against its median over the calibration (the op
  // speed probe's time around it / the median of all its samples; 1: not normalized).
  // measured_ns is the time as measured; the cost was solved from measured_ns / speed_factor.
  double speed_factor = 1;
  double since_us = -1;  // model context points: the time since the op's family last started
  std::int64_t work = 0, channels = 0;
  int kernels = 0;
  bool exact = true, used = true;  // compute solved exactly; in the fit
};

struct FamilyProbeOptions {
  int threads = 1;  // intra-op threads (the machine's threads_per_op)
  // Measure each probed op inside running eager steps of its probe, as `fusim run` times
  // ops (backend/op_profiler.h profile_in_step), and solve its compute on the simulated
  // probe step (exec/compute_solver.h solve_compute_in_schedule); false: alone, repeated
  // from the same state (profile_ops), solved on the op simulated alone. In a step an op
  // pays what repetition hides: on a 2-core EPYC VM, resnet18's relu and add ops took 2.7-4x
  // their isolated time inside its steps, its convolutions 1.1-1.3x (fusim profile
  // --in-step against fusim profile, batch 8, 64x64): a model fitted to isolated times
  // predicted steps 25-60% short.
  bool in_step = true;
  // Called with (done, total, what) after each probe.
  std::function<void(int, int, const std::string&)> progress;
  // Called with (done, total, what) after each probe's ops are solved (the second phase).
  std::function<void(int, int, const std::string&)> solve_progress;
  // When set, every probe point is appended here (calibrate --points).
  std::vector<ProbePoint>* points = nullptr;
  // When set, the host's speed is sampled before every probe and after the last (the op
  // speed probe, backend/speed_probe.h: microseconds of a fixed mini-step) and each probe's
  // times are divided by the mean of the samples around it over their median, so that the
  // costs describe the host at its median speed during the calibration rather than at
  // whatever speed each probe happened to meet. On a shared 2-core VM the probe moved by
  // 1.5x within minutes (629 to 964 us within one calibration), and three calibrations
  // within 30 minutes predicted the same steps 17% short to 22% long of the measured ones.
  std::function<double()> speed_probe;
  std::vector<double>* speed_samples = nullptr;  // every sample, in order
};

// Each probe's speed factor from the op speed probe's samples (samples[i] before probe i,
// samples[probes] after the last): the mean of the two around it over the median of all
// (1: as fast as the host's median, 1.2: 20% slower). All 1 unless there are probes + 1.
std::vector<double> speed_factors(const std::vector<double>& samples, std::size_t probes);

// One probe of the grid: its trace, eager schedule (2 steps) and the families of the ops
// it measures (the probed layer's F/Bx/Bw, its U, or the loss's L).
struct FamilyProbe {
  std::string what, optimizer;
  workload::Trace trace;
  std::vector<schedule::Schedule> schedules;
  int probed_layer = 1;
  bool update = false, loss = false;
  std::vector<std::string> families;
};
// The whole grid, every probe parsed and scheduled (a malformed probe is a bug).
std::vector<FamilyProbe> family_probes();

// `host`: the calibrated machine without op_costs (caches, DRAM, peak rates). The model
// holds every probed family and the "default.<kind>" fallbacks (add_default_families).
compute::OpCostModel calibrate_op_costs(const exec::Machine& host,
                                        const FamilyProbeOptions& options);

// The points a family is fitted to: those whose compute was solved exactly. Where the
// simulated memory alone already exceeds the measured time (the model's memory is slower
// than this host's for that op: an Adam update of 2.4 M parameters measured at 1.9 ms in its
// probe's step while the model's memory alone took longer), the solve stops at compute 0
// and the point says nothing about the compute: fitted anyway, one such point turned a
// family's fit error from 14% to 124%. A point whose solved compute the memory hides
// (exec/compute_solver.h SolvedCompute::hidden) counts as not exact too. All points are kept
// when fewer than two are exact.
std::vector<compute::CostPoint> informative_points(const std::vector<compute::CostPoint>& points,
                                                   const std::vector<bool>& exact);

// Adds "default.<kind>" to `model`: per kind (F, Bx, Bw), the median fixed_ns of its
// elementwise-like families (not GEMM-like, update, view, loss or default ones), with
// efficiency 1 (unused: such an op's compute stays the class-efficiency path's).
void add_default_families(compute::OpCostModel& model);

}  // namespace fusim::backend

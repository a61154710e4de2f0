#pragma once
// The calibrated per-op cost model (`fusim calibrate`, the machine file's
// "compute.op_costs"): for each op family measured on the host, a fixed cost per op plus a
// compute time from a shape-dependent efficiency against the unit's peak,
//
//   serial  = fixed + per_kernel x kernels                       (dispatch, autograd boundary,
//                                                                 allocation: runs before work)
//   compute = work / (peak(op class, dtype, cores) x eff(shape))  (overlaps the op's memory)
//             + per_channel x channels + per_ragged_plane x ragged_planes
//   eff     = efficiency x prod_d  d / (d + half_d)
//
// `work` is the op's FLOPs, or for ops without arithmetic (concat, copies, gathers) the
// elements of its largest tensor: their cost grows with what they move, and a FLOP count of 0
// would leave only the fixed part. `channels` is the number of independent per-channel loops
// of batch norm (C) and grouped convolutions (groups): oneDNN and ATen's batch-norm kernels
// run one reduction per channel, so 512 channels of 2x2 cost ~4x 16 channels of 32x32 at a
// quarter of the elements (measured by `fusim calibrate` on a 2-core EPYC VM: Bx 171 vs 39 us).
// The same term counts the rows of softmax and layer norm (one reduction per row: Swin-T's
// window attention softmaxes rows of 49, at 0.36 of the time a fit over rows of 512 and more
// gave them) and the planes (N x C) of adaptive average pooling (one mean per plane).
//
// with d the per-group GEMM's m, n and k for GEMM-like families (linear, conv2d, matmul,
// bmm, attention) and the op's element count for the others: a saturating efficiency, low
// for small GEMMs (too few tiles to fill the cores, packing overheads) and small tensors
// (at::parallel_for leaves tensors below its grain on one thread), approaching
// `efficiency` for large ones. The memory time is never part of it: the simulated caches
// and DRAM add it in the op's context (calibrate fits the compute times that make the
// simulated op alone reproduce each measurement; sim/exec/compute_solver.h).
//
// A family is "<layer op>.<kind>" ("conv2d.F", "linear.Bw", "cross_entropy.L"; grouped and
// depthwise convolutions are "conv2d_grouped.*", run by different oneDNN kernels, and a
// depthwise Bw that oneDNN's JIT depthwise kernel refuses is "conv2d_dw_ref.Bw", its
// per-channel reference path: op_cost_model.cpp depthwise_bw_reference) or
// "update.<optimizer>.<impl>" ("update.adam.foreach"). An op whose family the file does not
// have takes the fixed cost of its kind's "default.<kind>" family where the file has one
// (calibrate fits it over every elementwise-like family: the per-op boundary cost of the
// layer-by-layer execution, which a family the grid lacks pays too) and its compute from
// the class-efficiency path (compute.efficiency); without one, the class-efficiency path
// and dispatch_overhead_ns alone, which is all that presets of machines that exist only on
// paper use. A view (reshape, flatten, permute: no kernel) costs "view.<kind>"'s fixed time
// where the file has it (the layer execution's autograd boundary around a metadata-only op),
// else nothing.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_view.h"
#include "core/time.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::compute {

struct ComputeConfig;

// The sizes an op's efficiency saturates in.
struct OpShape {
  bool gemm = false;
  std::int64_t m = 0, n = 0, k = 0;  // GEMM-like: the per-group GEMM of this op kind
  std::int64_t elements = 0;         // others: elements of the op's largest tensor
  std::int64_t channels = 0;  // per-channel loops (batch_norm: C; grouped conv: groups; softmax,
                              // layer_norm: rows; adaptive_avg_pool2d: N x C planes)
  // batch_norm: the (n, c) planes whose H x W is not a whole number of ATen's float vectors
  // (kVectorFloats), else 0. ATen's contiguous batch-norm kernels walk one plane per
  // vectorised call (aten/src/ATen/native/cpu/batch_norm_kernel.cpp: reduce_all and
  // map2_reduce_all per plane in backward, kernel0 in forward), and a plane's tail takes
  // Vectorized::loadu(ptr, count), a copy through a stack buffer on AVX2: a fixed cost per
  // ragged plane (on a 2-core EPYC VM, 2x2 planes cost ~25 ns each, 4x4 ones nothing
  // extra). 1x1 planes take the channels-last kernel, with no per-plane loop: 0.
  std::int64_t ragged_planes = 0;
};
// Floats per ATen CPU vector: 8 at the AVX2 capability Debian's libtorch dispatches to
// ("CPU capability usage: AVX2"). For square planes AVX-512's 16 gives the same ragged set:
// hw^2 is a multiple of 8 exactly when hw is a multiple of 4, and then of 16.
inline constexpr std::int64_t kVectorFloats = 8;

// A calibrated point kept in the family (calibrate's probes): its shape and the ratio of
// its measured cost to the fitted formula's. The formula is global over a family's shapes,
// and ATen/oneDNN kernels are not: on a 2-core EPYC VM, batch norm's backward over 1152
// channels of 2x2 took 4.6x the fit (a per-plane loop that 4x4 planes, one AVX-512 vector
// each, skip), a depthwise 5x5 Bw 3-4x. Near an anchor, an op's cost takes its residual
// (local_correction); far from all of them, the formula alone.
struct CostAnchor {
  OpShape shape;
  int kernels = 1;
  double ratio = 1;  // measured / fitted, in (0, kMaxAnchorRatio)
};
// A machine file's anchor ratios lie below this (a larger one is a corrupt file); the fit
// clamps its anchors into [1 / kMaxAnchorRatio, 999] (a point the formula misses by more is
// a family whose formula has no term for it: the relative least squares leaves an
// under-predicted point at up to -100%, whatever its ratio).
inline constexpr double kMaxAnchorRatio = 1000;

struct FamilyCost {
  double fixed_ns = 0;             // per op
  double per_kernel_ns = 0;        // per kernel the op launches (optimizer loops: per tensor op)
  double per_channel_ns = 0;       // per channel loop (OpShape::channels), part of the compute
  double per_ragged_plane_ns = 0;  // per ragged plane (OpShape::ragged_planes), compute
  double per_mib_ns = 0;           // switch families only: per MiB the update touches
  double efficiency = 1;           // asymptotic fraction of peak, in (0, 2] (see SCHEMA.md)
  // Half-saturation sizes (0: that size does not limit the efficiency).
  double half_m = 0, half_n = 0, half_k = 0, half_elements = 0;
  // As fitted, for reports: mean |relative error| of the fit in percent, and points.
  double fit_error_pct = 0;
  int points = 0;
  int dropped_points = 0;  // measured but left out of the fit (backend/family_probe.h)
  std::vector<CostAnchor> anchors;
  // The anchors' reach: the factor in one size that is one standard deviation of their
  // weight (1: the anchors are not used). anchor_family chooses it by leave-one-out, and
  // kExactReach (cost_fit.h) where none carries: then only probed shapes take their anchor.
  double anchor_reach = 1;
  // Leave-one-out mean |relative error| in percent with the anchors at that reach (each
  // point predicted by the formula and the other points' anchors): what a shape between
  // probes can expect; the fit error where the anchors are not used.
  double local_error_pct = 0;

  // eff(shape) of the formula above.
  double shape_efficiency(const OpShape& shape) const;
  // The factor an op's formula cost takes from the anchors: the geometric mean of their
  // ratios, each weighted by exp(-d^2 / (2 (ln reach)^2)) with d the distance of the shapes
  // in ln(1 + size) over m, n, k, elements, channels and kernels, beside a weight of 0.05 on
  // ratio 1. 1 without anchors or with reach 1. `skip`: an anchor left out, or -1.
  double local_correction(const OpShape& shape, int kernels, int skip = -1) const;
};

struct OpCostModel {
  std::map<std::string, FamilyCost> families;
  const FamilyCost* find(const std::string& family) const;
};

// The family name of a schedule op, as above: "view.<kind>" for a layer op with no kernel
// (a view), "" for a parameter layer's ops (nothing runs).
std::string op_family(const workload::Trace& trace, const schedule::Schedule& schedule,
                      const schedule::Op& op);
// The family an op of `family` takes where a machine file lacks its own: the one a
// split-off family was part of ("conv2d_dw_ref.Bw": "conv2d_grouped.Bw"), and bmm's for
// matmul ("matmul.F": "bmm.F"; calibrate probes bmm, which torch.matmul runs for batched
// operands); "" for the others.
std::string parent_family(const std::string& family);
OpShape op_shape(const workload::Trace& trace, const schedule::Schedule& schedule,
                 const schedule::Op& op);

// An op's cost by the calibrated model: serial (before its work) and compute (spread over
// its passes by their FLOPs). `has_compute` false: only the serial part is calibrated (a
// "default.<kind>" fallback), the compute stays the class-efficiency path's.
struct OpCost {
  Tick serial = 0, compute = 0;
  bool has_compute = true;
};
// nullopt when the machine has no model for the op's family nor its kind's default (then
// the class-efficiency path applies).
std::optional<OpCost> calibrated_cost(const ComputeConfig& compute, const workload::Trace& trace,
                                      const schedule::Schedule& schedule, const schedule::Op& op,
                                      int units);
// The formula, for a family and an op's work (cost_work), kernels and shape, with the peak
// FLOP/s of the cores it runs on.
OpCost family_cost(const FamilyCost& family, double peak_flops_per_second, std::int64_t work,
                   int kernels, const OpShape& shape);
// The cost of crossing the update boundary (backend/switch_probe.h): "switch.U" for an
// update whose previous op on its stream is not an update, "switch.after_U" for a
// non-update op whose previous op is one (the most specific family the file has first: for
// an update "switch.U.<optimizer>.<layer op>", "switch.U.<optimizer>", "switch.U.<layer
// op>", "switch.U"; for the op after one "switch.after_U.<optimizer>", "switch.after_U"),
// each fixed_ns + per_mib_ns x the MiB the update
// touches (switch_bytes: that update's, or the one before; an update whose previous op is
// another layer's, as forward-fused's are, pays the fixed part alone: calibrate measured
// the per-MiB part on updates right after their own layer's backward); 0 without those
// families, or at no switch. The families' fits exclude it (their probes' ops sit at no switch), so
// a fused ordering pays it twice per layer and eager twice per step.
Tick switch_cost(const OpCostModel& model, const schedule::Schedule& schedule,
                 const schedule::Op& op);
// The bytes of the distinct tensors an op's passes touch.
std::int64_t touched_bytes(const schedule::Schedule& schedule, const schedule::Op& op);
// The fallback family of an op kind ("default.F"), for families a machine file lacks.
std::string default_family(const schedule::Op& op);

// Strict reading of "compute.op_costs" ({"<family>": {...}, ...}).
OpCostModel parse_op_cost_model(const JsonView& section);
nlohmann::json op_cost_model_json(const OpCostModel& model);

}  // namespace fusim::compute

#pragma once
// Fitting one op family's calibrated cost (op_cost_model.h) to measured points:
//
//   t_i = fixed + per_kernel x kernels_i + per_channel x channels_i
//         + per_ragged_plane x ragged_planes_i
//         + work_i / (peak x efficiency x prod_d s(d_i, h_d)),
//   s(d, h) = d / (d + h),
//
// by least squares of the relative error sum_i ((t_i - T_i) / T_i)^2 against the measured
// T_i (so a 20 us op weighs as much as a 20 ms one). The half-saturation sizes h_d are searched on
// a log grid (0 and powers of 2 up to 2^24, then refined by quarter octaves); for each choice the
// model is linear in (fixed, per_kernel, per_channel, 1/efficiency, per_ragged_plane), solved
// by weighted least squares with fixed, per_kernel, per_channel, per_ragged_plane >= 0 and
// efficiency in (0, 2] (bounds by an active-set search over the 32 bound combinations).
// Deterministic: the same points give the same fit.
#include <cstdint>
#include <vector>

#include "compute/op_cost_model.h"

namespace fusim::compute {

struct CostPoint {
  double time_ns = 0;      // the op's cost to fit (serial + compute), > 0
  std::int64_t flops = 0;  // the op's work (op_cost_terms.h cost_work: FLOPs, or elements)
  int kernels = 1;
  OpShape shape;
};

// Which optional terms a family's fit has (each 0 otherwise).
// 2^(1/32): a shape 10% away in one size gets 6e-5 of an anchor's weight (op_cost_model.h
// local_correction), 2% away 0.66, the same shape 1.
inline constexpr double kExactReach = 1.0218971486541166;

struct FitTerms {
  bool per_kernel = false;        // optimizer updates, whose kernels vary with the impl and tensors
  bool per_channel = false;       // batch norm and grouped convolutions (OpShape::channels)
  bool per_ragged_plane = false;  // batch norm (OpShape::ragged_planes)
};

// `peak`: FLOP/s of the cores the points ran on (ComputeConfig::peak_flops_per_second).
// points non-empty.
FamilyCost fit_family_cost(const std::vector<CostPoint>& points, double peak,
                           const FitTerms& terms = {});

// Keeps every point in `family` as an anchor (op_cost_model.h CostAnchor: its measured
// cost over the formula's) and chooses their reach among 1 (unused), 2^(1/4), 2^(1/2), 2
// and 4 by leave-one-out: the reach whose mean error over the points, each predicted
// without its own anchor, is least (ties: the shorter), so that anchors are used only
// where a family's residuals carry over between shapes (kernel regression with a
// cross-validated bandwidth). Sets local_error_pct to that error. Where no reach beats
// the formula (1 wins), the anchors are kept at kExactReach: an op of a probed shape is a
// measurement of that op, whatever the residuals of other shapes do (leave-one-out cannot
// see this: it never predicts a point from its own anchor), and a shape a few percent
// away already takes the formula alone.
void anchor_family(FamilyCost& family, const std::vector<CostPoint>& points, double peak);

// The model's time in ns for a point (what fit_family_cost fits), without anchors.
double model_time_ns(const FamilyCost& family, double peak, const CostPoint& point);

}  // namespace fusim::compute

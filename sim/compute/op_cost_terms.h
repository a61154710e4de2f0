#pragma once
// What the calibrated cost formula (op_cost_model.h) counts for an op, shared by the
// simulator's use of a fitted model and by `fusim calibrate`'s fit, so that both count
// alike: its FLOPs (its passes', else the op's) and the peak FLOP/s of `units` cores or SMs
// for its op class (updates: elementwise, the loss: reduction, layer ops:
// compute::classify) and the trace's dtype.
#include <cstdint>

#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::compute {

struct ComputeConfig;
struct OpShape;

std::int64_t cost_flops(const schedule::Op& op);
// What the calibrated formula divides by the peak (op_cost_model.h): the FLOPs, or for an op
// without arithmetic the elements of its largest tensor (`shape.elements`).
std::int64_t cost_work(const schedule::Op& op, const OpShape& shape);
double cost_peak(const ComputeConfig& compute, const workload::Trace& trace, const schedule::Op& op,
                 int units);

}  // namespace fusim::compute

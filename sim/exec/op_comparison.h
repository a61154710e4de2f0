#pragma once
// Where a prediction's error comes from: two RunResults of the same schedule (predicted
// and measured) compared per op group, in milliseconds per measured step. Beside the
// step-level numbers of core/compare.h (speedup, error_pct, mean_absolute), which it uses.
//
// An op's time is end - start (dispatch included); a group's time per step is the sum over
// the result's ops in measured steps (OpTiming::measured) divided by its steps_measured, so
// a group's share of the step is comparable between a simulation (few steps) and a run
// (many). Time between ops (the backend's bookkeeping) is in no group: the shares of a
// measured result add up to less than 1 by that much.
#include <string>
#include <vector>

#include "exec/run_result.h"
#include "workload/trace.h"

namespace fusim::exec {

struct OpGroupComparison {
  std::string kind;      // "F", "Bx", "Bw", "U", "L" (per-op-kind rows); "" for per-layer rows
  std::string op;        // the layer op ("conv2d"); per layer: the layer's op
  std::string layer;     // per-layer rows: the layer's name; "" for per-op-kind rows
  int ops_per_step = 0;  // ops of the group in one measured step of the measured result
  double predicted_ms = 0, measured_ms = 0;  // per step
  double ratio = 0;                          // predicted / measured (0 when nothing was measured)
  double predicted_share = 0, measured_share = 0;  // of each result's step time
};

// Per (op kind x layer op), ordered by measured time, largest first (ties by name).
std::vector<OpGroupComparison> compare_per_op_kind(const workload::Trace& trace,
                                                   const RunResult& predicted,
                                                   const RunResult& measured);
// Per layer (all of its ops), in trace order.
std::vector<OpGroupComparison> compare_per_layer(const workload::Trace& trace,
                                                 const RunResult& predicted,
                                                 const RunResult& measured);

}  // namespace fusim::exec

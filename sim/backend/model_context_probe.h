#pragma once
// `fusim calibrate`'s model context term (compute/model_context.h): each op of reference model
// steps timed inside running eager steps (the code `fusim run` times), against the same
// op simulated on this host's machine with the fitted op costs (tensor fidelity, as
// predictions run), where calibrate's probes gave its family warm code and state. The
// excess of each op, with the simulated time since its family last started, is a sample
// of the term. No torch types here.
#include <functional>
#include <string>
#include <vector>

#include "backend/family_probe.h"
#include "compute/model_context.h"
#include "exec/machine.h"
#include "workload/trace.h"

namespace fusim::backend {

// One op of a reference step: the time from the start of the previous op of its family on
// the simulated timeline (compute/op_cost_model.h op_family; -1 where none ran before it),
// its measured median and its simulated time.
struct ContextPoint {
  double since_us = -1;
  double measured_ns = 0, simulated_ns = 0;
  std::string family;  // op_family
  std::string op;      // "<kind> <layer name>"
};

// One reference trace's points: every op with a kernel of its eager step, updates aside
// (SGD foreach, 2 warm-up and 20 measured steps on `threads`; the last simulated step).
std::vector<ContextPoint> context_points(const workload::Trace& trace, const exec::Machine& model,
                                         int threads);

// calibrate's model context phase: the samples of every trace in `references` on `host` (its
// op costs fitted, switch costs included, no model context yet), each run's times divided
// by the host's speed around it as calibrate_switch_costs does (`speed_probe` before and
// after it, over `typical_us`; samples appended to `speed_samples`), then
// compute::fit_model_context over its ops simulated under 150 us (larger ones carry the
// compute model's residual), one cold part per decay of 1, 10 and 100 ms. `how` gets the
// sources text; `points`, where given, every op as a probe point (calibrate --points:
// family "model_context.<op family>", cost_ns its measured time over the speed factor (what
// the fit targets), fitted_ns its simulated time plus the term, since_us its dt, used: in
// the fit).
compute::ModelContext calibrate_model_context(const std::vector<workload::Trace>& references,
                                              const exec::Machine& host, int threads,
                                              const std::function<double()>& speed_probe,
                                              double typical_us, std::vector<double>& speed_samples,
                                              std::string& how,
                                              std::vector<ProbePoint>* points = nullptr);

}  // namespace fusim::backend

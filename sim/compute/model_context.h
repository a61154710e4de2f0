#pragma once
// The model context term (`fusim calibrate`, the machine file's "compute.model_context"): what an
// op with a kernel pays in a model's step over the same op in calibrate's probe steps,
// where its family's code and the framework's state on its path stay warm,
//
//   extra = base + cold x (1 - exp(-dt / decay))
//
// with dt the time since an op of the same family (op_cost_model.h op_family) last
// started, on the same simulated timeline (never: dt infinite, the op pays base + cold).
// Measured on a 2-core EPYC VM (2026-12-07, README "What goes cold"): ops predicted under 60
// us take a median 3.4 us more in a model than the calibrated families give when their
// family ran under 50 us before, 8.9 us at 3-10 ms and 15.8 us beyond 10 ms; a mean over a
// 1 MiB tensor that silu had just written took 13.8 us back to back and 48.2 us after a 30
// ms busy-wait that touched no memory. The data an op reads is the simulated caches' part:
// the term is the code and state they do not hold. A CPU term: GPU kernels launch from a
// host thread whose cost `dispatch_overhead_ns` already is.
#include <vector>

#include "core/json_view.h"
#include "core/time.h"

namespace fusim::compute {

struct ModelContext {
  double base_ns = 0;   // every op with a kernel
  double cold_ns = 0;   // the part that decays back with time since its family ran
  double decay_us = 0;  // > 0 where the term is given
  bool given() const { return decay_us > 0; }
  // The extra time of an op whose family last started `since` ago (< 0: never).
  Tick extra(Tick since) const;
};

// One op of calibrate's reference steps: the time since its family last started on the
// simulated timeline (< 0: never), and its measured time less its simulated time.
struct ContextSample {
  double since_us = -1;
  double excess_ns = 0;
};

// base and cold (both >= 0) by least squares for each decay in `decays_us`, the decay with
// the smallest squared residual kept (the first of equals); a term of zeros from no sample.
ModelContext fit_model_context(const std::vector<ContextSample>& samples,
                               const std::vector<double>& decays_us);

// Strict reading of "model_context" ({"base_ns", "cold_ns", "decay_us"}) and its JSON.
ModelContext parse_model_context(const JsonView& section);
nlohmann::json model_context_json(const ModelContext& context);

}  // namespace fusim::compute

#pragma once
// The model context term (`fusim calibrate`, the machine file's "compute.model_context"): what an
// op with a kernel pays in a model's step over the same op in calibrate's probe steps,
// where its family's code and the framework's state on its path stay warm,
//
//   extra = base + cold x (1 - exp(-dt / decay)) + sum over the slower parts of the same
//
// with dt the time since an op of the same family (op_cost_model.h op_family) last
// started, on the same simulated timeline (never: dt infinite, the op pays base and every
// part's cold). The parts are timescales: on the same VM the mean excess of calibrate's
// reference ops grew from ~3 us at dt under 0.2 ms to ~10 at 0.2-1 ms, ~20 at 1-3 ms and
// 31-37 beyond 10 ms (three calibrations, 2026-12-08), more like log dt than one
// exponential; one decay fitted by least squares was not identified (the residual equal
// within 1% for every decay from 1 to 100 ms) and came out 1 ms in some calibrations and
// 100 ms in others.
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

// A part of the term that comes back with time since the family ran: cold x (1 - exp(-dt /
// decay)).
struct ColdPart {
  double cold_ns = 0;
  double decay_us = 0;  // > 0
};

struct ModelContext {
  double base_ns = 0;            // every op with a kernel
  double cold_ns = 0;            // the fastest part ("cold_ns", "decay_us" in the file)
  double decay_us = 0;           // > 0 where the term is given
  std::vector<ColdPart> slower;  // further parts ("slower" in the file)
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

// base and one cold part per decay in `decays_us` (the first is cold_ns / decay_us, the
// others `slower`), all at once by non-negative least squares; a term of zeros from no
// sample. (calibrate: decays of 1, 10 and 100 ms.)
ModelContext fit_model_context(const std::vector<ContextSample>& samples,
                               const std::vector<double>& decays_us);

// Strict reading of "model_context" ({"base_ns", "cold_ns", "decay_us"}, optional "slower":
// [{"cold_ns", "decay_us"}, ...]) and its JSON.
ModelContext parse_model_context(const JsonView& section);
nlohmann::json model_context_json(const ModelContext& context);

}  // namespace fusim::compute

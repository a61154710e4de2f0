#pragma once
// The host's speed at small framework ops right now: a fixed mini-step of the ops that
// small-layer CNNs spend their steps in (a 3x3 convolution's forward and both backwards,
// batch norm's forward and backward, relu's, and a foreach Adam update of their
// parameters), timed on the calling thread with `threads` intra-op threads. `calibrate`
// records its median (the machine file's "host.op_probe_us") and `run` samples it once per
// round of blocks, beside the DRAM probe (memory_probe.h), so that a validation can say how
// far the host's speed during its steps was from the calibrated one. On the 2-core VM this
// project is measured on, the same eager step of shufflenet_v2 measured 61.5 and then 42.6
// ms a minute apart with every op 1.3-1.5x slower in the first run and no other process
// visible (no steal time reported, every step's CPU time equal to its wall time): the
// calibrated op costs describe the host as it was while calibrate ran, and a comparison
// with steps run at another speed measures the host, not the model. The DRAM probe alone
// does not see this: its reads moved by less than the ops did.
// ~1 ms an iteration, median of kSpeedProbeIterations after two warm-up iterations.
#include <functional>
#include <vector>

namespace fusim::backend::probe {

inline constexpr int kSpeedProbeIterations = 15;

// Median microseconds of one iteration of the mini-step with `threads` intra-op threads
// (the caller's thread count is restored afterwards). On the CPU only.
double op_speed_probe_us(int threads);

// Runs `work` between two samples of `speed_probe` (none without one), appends both to
// `samples` and returns the host's speed factor around it: their mean over `typical_us` (1
// without a probe or a typical speed). calibrate divides the times `work` measured by it,
// as it normalizes the op probes' (switch costs, model context).
double speed_factor_around(const std::function<double()>& speed_probe, double typical_us,
                           std::vector<double>& samples, const std::function<void()>& work);

}  // namespace fusim::backend::probe

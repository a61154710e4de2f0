#include "compute/model_context.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusim::compute {

namespace {
// The decaying part's weight: 1 - exp(-dt / decay), 1 for an op whose family never ran.
double cold_weight(double since_us, double decay_us) {
  if (since_us < 0) return 1;
  return 1 - std::exp(-since_us / decay_us);
}
}  // namespace

Tick ModelContext::extra(Tick since) const {
  if (!given()) return 0;
  const double since_us = since < 0 ? -1 : double(since) / double(kTicksPerNs) / 1e3;
  return ns(base_ns + cold_ns * cold_weight(since_us, decay_us));
}

ModelContext fit_model_context(const std::vector<ContextSample>& samples,
                               const std::vector<double>& decays_us) {
  ModelContext best;
  if (samples.empty()) return best;
  double best_ss = std::numeric_limits<double>::infinity();
  const double n = double(samples.size());
  for (double decay : decays_us) {
    if (!(decay > 0)) continue;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& s : samples) {
      const double x = cold_weight(s.since_us, decay);
      sx += x, sy += s.excess_ns, sxx += x * x, sxy += x * s.excess_ns;
    }
    // y = base + cold x, then each clamped at 0 with the other refitted alone.
    const double var = sxx - sx * sx / n;
    double cold = var > 0 ? (sxy - sx * sy / n) / var : 0;
    double base = (sy - cold * sx) / n;
    if (base < 0) base = 0, cold = sxx > 0 ? sxy / sxx : 0;
    if (cold < 0) cold = 0, base = sy / n;
    base = std::max(0.0, base);
    double ss = 0;
    for (const auto& s : samples) {
      const double r = s.excess_ns - base - cold * cold_weight(s.since_us, decay);
      ss += r * r;
    }
    if (ss < best_ss) {
      best_ss = ss;
      best = {base, cold, decay};
    }
  }
  return best;
}

ModelContext parse_model_context(const JsonView& v) {
  v.require_object();
  v.reject_unknown_keys({"base_ns", "cold_ns", "decay_us"});
  ModelContext c;
  // Bounds: a millisecond per op is far above any measured (15.8 us), a decay of an hour
  // is a term that never decays.
  c.base_ns = v.at("base_ns").as_number_in(0, 1e6);
  c.cold_ns = v.at("cold_ns").as_number_in(0, 1e6);
  c.decay_us = v.at("decay_us").as_number_in(0, 3.6e9);
  if (!(c.decay_us > 0)) v.at("decay_us").fail_got("a decay time > 0 in microseconds");
  return c;
}

nlohmann::json model_context_json(const ModelContext& c) {
  return {{"base_ns", c.base_ns}, {"cold_ns", c.cold_ns}, {"decay_us", c.decay_us}};
}

}  // namespace fusim::compute

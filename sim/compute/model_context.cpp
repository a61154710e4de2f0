#include "compute/model_context.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace fusim::compute {

namespace {
// The decaying part's weight: 1 - exp(-dt / decay), 1 for an op whose family never ran.
double cold_weight(double since_us, double decay_us) {
  if (since_us < 0) return 1;
  return 1 - std::exp(-since_us / decay_us);
}

// Least squares restricted to the columns in `active` (a bit each) by the normal
// equations; false where they are singular or a coefficient comes out negative.
bool solve_active(const std::vector<std::vector<double>>& gram, const std::vector<double>& rhs,
                  unsigned active, std::vector<double>& out) {
  std::vector<std::size_t> cols;
  for (std::size_t j = 0; j < rhs.size(); ++j)
    if (active >> j & 1u) cols.push_back(j);
  const std::size_t n = cols.size();
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1));
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) m[a][b] = gram[cols[a]][cols[b]];
    m[a][n] = rhs[cols[a]];
  }
  for (std::size_t i = 0; i < n; ++i) {  // Gauss-Jordan with partial pivoting
    std::size_t p = i;
    for (std::size_t r = i + 1; r < n; ++r)
      if (std::abs(m[r][i]) > std::abs(m[p][i])) p = r;
    if (std::abs(m[p][i]) < 1e-12 * std::max(1.0, std::abs(gram[cols[i]][cols[i]]))) return false;
    std::swap(m[i], m[p]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == i) continue;
      const double f = m[r][i] / m[i][i];
      for (std::size_t c = i; c <= n; ++c) m[r][c] -= f * m[i][c];
    }
  }
  out.assign(rhs.size(), 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    out[cols[i]] = m[i][n] / m[i][i];
    if (out[cols[i]] < 0) return false;
  }
  return true;
}
}  // namespace

Tick ModelContext::extra(Tick since) const {
  if (!given()) return 0;
  const double since_us = since < 0 ? -1 : double(since) / double(kTicksPerNs) / 1e3;
  double x = base_ns + cold_ns * cold_weight(since_us, decay_us);
  for (const ColdPart& p : slower) x += p.cold_ns * cold_weight(since_us, p.decay_us);
  return ns(x);
}

ModelContext fit_model_context(const std::vector<ContextSample>& samples,
                               const std::vector<double>& decays_us) {
  ModelContext best;
  std::vector<double> decays;
  for (double d : decays_us)
    if (d > 0) decays.push_back(d);
  if (samples.empty() || decays.empty()) return best;
  // Columns: base, then one per decay. Non-negative least squares by trying every set of
  // free columns (at most a handful), the smallest residual among the feasible kept:
  // exact, and cheap for so few columns.
  const std::size_t k = decays.size() + 1;
  std::vector<std::vector<double>> gram(k, std::vector<double>(k, 0.0));
  std::vector<double> rhs(k, 0.0), row(k);
  double yy = 0;
  for (const auto& s : samples) {
    row[0] = 1;
    for (std::size_t j = 0; j < decays.size(); ++j) row[j + 1] = cold_weight(s.since_us, decays[j]);
    for (std::size_t a = 0; a < k; ++a) {
      rhs[a] += row[a] * s.excess_ns;
      for (std::size_t b = 0; b < k; ++b) gram[a][b] += row[a] * row[b];
    }
    yy += s.excess_ns * s.excess_ns;
  }
  double best_ss = std::numeric_limits<double>::infinity();
  std::vector<double> coef, chosen(k, 0.0);
  for (unsigned active = 0; active < (1u << k); ++active) {
    if (!solve_active(gram, rhs, active, coef)) continue;
    // Residual sum of squares: y'y - 2 c'X'y + c'X'Xc.
    double ss = yy;
    for (std::size_t a = 0; a < k; ++a) {
      ss -= 2 * coef[a] * rhs[a];
      for (std::size_t b = 0; b < k; ++b) ss += coef[a] * gram[a][b] * coef[b];
    }
    if (ss < best_ss - 1e-9 * std::max(1.0, yy)) {
      best_ss = ss;
      chosen = coef;
    }
  }
  best.base_ns = chosen[0];
  best.cold_ns = chosen[1];
  best.decay_us = decays[0];
  for (std::size_t j = 1; j < decays.size(); ++j) best.slower.push_back({chosen[j + 1], decays[j]});
  return best;
}

ModelContext parse_model_context(const JsonView& v) {
  v.require_object();
  v.reject_unknown_keys({"base_ns", "cold_ns", "decay_us", "slower"});
  ModelContext c;
  // Bounds: a millisecond per op is far above any measured (15.8 us), a decay of an hour
  // is a term that never decays.
  c.base_ns = v.at("base_ns").as_number_in(0, 1e6);
  c.cold_ns = v.at("cold_ns").as_number_in(0, 1e6);
  c.decay_us = v.at("decay_us").as_number_in(0, 3.6e9);
  if (!(c.decay_us > 0)) v.at("decay_us").fail_got("a decay time > 0 in microseconds");
  if (auto slower = v.find("slower")) {
    for (const auto& p : slower->elements()) {
      p.require_object();
      p.reject_unknown_keys({"cold_ns", "decay_us"});
      ColdPart part;
      part.cold_ns = p.at("cold_ns").as_number_in(0, 1e6);
      part.decay_us = p.at("decay_us").as_number_in(0, 3.6e9);
      if (!(part.decay_us > 0)) p.at("decay_us").fail_got("a decay time > 0 in microseconds");
      c.slower.push_back(part);
    }
  }
  return c;
}

nlohmann::json model_context_json(const ModelContext& c) {
  nlohmann::json j{{"base_ns", c.base_ns}, {"cold_ns", c.cold_ns}, {"decay_us", c.decay_us}};
  if (!c.slower.empty()) {
    j["slower"] = nlohmann::json::array();
    for (const ColdPart& p : c.slower)
      j["slower"].push_back({{"cold_ns", p.cold_ns}, {"decay_us", p.decay_us}});
  }
  return j;
}

}  // namespace fusim::compute

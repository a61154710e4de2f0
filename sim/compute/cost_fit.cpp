#include "compute/cost_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace fusim::compute {
namespace {

constexpr double kMaxEfficiency = 2.0;  // op_cost_model.h: FLOPs are the mathematical count

struct Halves {
  double m = 0, n = 0, k = 0, elements = 0;
};

// prod_d (1 + h_d / d): the factor by which the shape slows the peak-efficiency time.
double slowdown(const OpShape& s, const Halves& h) {
  auto f = [](std::int64_t d, double half) {
    return 1.0 + half / double(std::max<std::int64_t>(1, d));
  };
  if (s.gemm) return f(s.m, h.m) * f(s.n, h.n) * f(s.k, h.k);
  return f(s.elements, h.elements);
}

struct Linear {
  double fixed = 0, per_kernel = 0, per_channel = 0, inv_eff = 1 / kMaxEfficiency;
  double per_ragged_plane = 0;
  double rel_error = std::numeric_limits<double>::infinity();
};

// Solves the NxN (or smaller) system a x = b by Gaussian elimination with pivoting; false
// when singular.
template <std::size_t N>
bool solve(std::array<std::array<double, N>, N> a, std::array<double, N> b, std::size_t n,
           std::array<double, N>& x) {
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    if (std::abs(a[p][c]) < 1e-300) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (std::size_t c = n; c-- > 0;) {
    double s = b[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= a[c][k] * x[k];
    x[c] = s / a[c][c];
  }
  return true;
}

// The fit's linear columns: fixed (1 per op), per_kernel (kernels), per_channel (channels),
// inv_eff (g: the peak-efficiency time of the op's work), per_ragged_plane (ragged planes).
constexpr int kColumns = 5;

// Weighted least squares (weights 1/t_i) of t = fixed + per_kernel*kernels +
// per_channel*channels + inv_eff*g for one choice of halves, bounds by trying each
// combination of active bounds (each subproblem's optimum on its face; the bounded optimum is
// the best feasible one of them: the problem is a convex quadratic).
Linear fit_linear(const std::vector<CostPoint>& pts, const std::vector<double>& g,
                  const FitTerms& terms) {
  Linear best;
  // bit 0: fixed free (else 0); bit 1: per_kernel free (else 0); bit 2: per_channel free
  // (else 0); bit 3: inv_eff free (else at its bound 1/kMaxEfficiency); bit 4:
  // per_ragged_plane free (else 0).
  for (int mask = 0; mask < (1 << kColumns); ++mask) {
    if (!terms.per_kernel && (mask & 2)) continue;
    if (!terms.per_channel && (mask & 4)) continue;
    if (!terms.per_ragged_plane && (mask & 16)) continue;
    std::array<int, kColumns> col{};
    std::size_t n = 0;
    for (int c = 0; c < kColumns; ++c)
      if (mask & (1 << c)) col[n++] = c;
    const double inv_bound = 1 / kMaxEfficiency;
    auto x_of = [&](const CostPoint& p, std::size_t i, int c) {
      return c == 0   ? 1.0
             : c == 1 ? double(p.kernels)
             : c == 2 ? double(p.shape.channels)
             : c == 3 ? g[i]
                      : double(p.shape.ragged_planes);
    };
    std::array<std::array<double, kColumns>, kColumns> a{};
    std::array<double, kColumns> b{}, sol{};
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const double w = 1 / (pts[i].time_ns * pts[i].time_ns);
      // The bounded inv_eff moves to the right-hand side.
      const double rhs = pts[i].time_ns - ((mask & 8) ? 0.0 : inv_bound * g[i]);
      for (std::size_t r = 0; r < n; ++r) {
        b[r] += w * x_of(pts[i], i, col[r]) * rhs;
        for (std::size_t c = 0; c < n; ++c)
          a[r][c] += w * x_of(pts[i], i, col[r]) * x_of(pts[i], i, col[c]);
      }
    }
    Linear l;
    l.inv_eff = inv_bound;
    if (n > 0 && !solve<kColumns>(a, b, n, sol)) continue;
    bool feasible = true;
    for (std::size_t r = 0; r < n; ++r) {
      const double v = sol[r];
      if (col[r] == 0) l.fixed = v, feasible = feasible && v >= 0;
      if (col[r] == 1) l.per_kernel = v, feasible = feasible && v >= 0;
      if (col[r] == 2) l.per_channel = v, feasible = feasible && v >= 0;
      if (col[r] == 3) l.inv_eff = v, feasible = feasible && v >= inv_bound;
      if (col[r] == 4) l.per_ragged_plane = v, feasible = feasible && v >= 0;
    }
    if (!feasible) continue;
    double err = 0;
    bool positive = true;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const double t = l.fixed + l.per_kernel * pts[i].kernels +
                       l.per_channel * double(pts[i].shape.channels) +
                       l.per_ragged_plane * double(pts[i].shape.ragged_planes) + l.inv_eff * g[i];
      if (t <= 0) {
        positive = false;
        break;
      }
      const double e = t / pts[i].time_ns - 1;
      err += e * e;
    }
    if (!positive) continue;
    l.rel_error = err;
    if (err < best.rel_error) best = l;
  }
  return best;
}

struct Trial {
  Halves h;
  Linear l;
};

Trial evaluate(const std::vector<CostPoint>& pts, double peak, const FitTerms& terms,
               const Halves& h) {
  std::vector<double> g;
  for (const auto& p : pts) g.push_back(double(p.flops) / peak * 1e9 * slowdown(p.shape, h));
  return {h, fit_linear(pts, g, terms)};
}
}  // namespace

double model_time_ns(const FamilyCost& f, double peak, const CostPoint& p) {
  double t = f.fixed_ns + f.per_kernel_ns * p.kernels +
             f.per_channel_ns * double(p.shape.channels) +
             f.per_ragged_plane_ns * double(p.shape.ragged_planes);
  if (p.flops > 0) t += double(p.flops) / (peak * f.shape_efficiency(p.shape)) * 1e9;
  return t;
}

void anchor_family(FamilyCost& f, const std::vector<CostPoint>& pts, double peak) {
  f.anchors.clear();
  // Clamped into what a machine file holds (op_cost_model.h kMaxAnchorRatio): calibrate
  // wrote an Adam loop update's smallest point at 1498x its formula, and the file failed to
  // load after the measurement.
  for (const auto& p : pts)
    f.anchors.push_back({p.shape, p.kernels,
                         std::clamp(p.time_ns / model_time_ns(f, peak, p), 1 / kMaxAnchorRatio,
                                    kMaxAnchorRatio * 0.999)});
  auto loo_error = [&] {
    double sum = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const double t = model_time_ns(f, peak, pts[i]) *
                       f.local_correction(pts[i].shape, pts[i].kernels, static_cast<int>(i));
      sum += std::abs(t / pts[i].time_ns - 1);
    }
    return pts.empty() ? 0.0 : 100 * sum / double(pts.size());
  };
  double best_reach = 1, best = std::numeric_limits<double>::infinity();
  for (double reach : {1.0, std::pow(2.0, 0.25), std::sqrt(2.0), 2.0, 4.0}) {
    f.anchor_reach = reach;
    const double e = loo_error();
    if (e < best - 1e-9) best = e, best_reach = reach;
  }
  f.anchor_reach = best_reach == 1 ? kExactReach : best_reach;
  f.local_error_pct = best;
}

FamilyCost fit_family_cost(const std::vector<CostPoint>& pts, double peak, const FitTerms& terms) {
  FUSIM_ASSERT(!pts.empty() && peak > 0, "points and a peak to fit");
  for (const auto& p : pts) FUSIM_ASSERT(p.time_ns > 0, "measured times > 0");
  const bool gemm = pts.front().shape.gemm;
  std::vector<double> grid{0};
  for (int e = 0; e <= 24; ++e) grid.push_back(std::ldexp(1.0, e));
  Trial best = evaluate(pts, peak, terms, {});
  auto consider = [&](const Halves& h) {
    Trial t = evaluate(pts, peak, terms, h);
    if (t.l.rel_error < best.l.rel_error - 1e-12) best = t;
  };
  if (gemm) {
    // 2^24 is beyond any GEMM dim of interest in 3-D: the grid stops at 2^16 there.
    for (double m : grid)
      for (double n : grid)
        for (double k : grid)
          if (m <= 65536 && n <= 65536 && k <= 65536) consider({m, n, k, 0});
  } else {
    for (double e : grid) consider({0, 0, 0, e});
  }
  // Refinement: coordinate steps of a quarter octave while they help.
  for (int round = 0; round < 40; ++round) {
    const Trial start = best;
    for (int d = 0; d < 4; ++d) {
      if (gemm == (d == 3)) continue;
      for (double f : {std::pow(2.0, 0.25), std::pow(2.0, -0.25)}) {
        Halves h = best.h;
        double& x = d == 0 ? h.m : d == 1 ? h.n : d == 2 ? h.k : h.elements;
        if (x == 0) continue;
        x *= f;
        consider(h);
      }
    }
    if (best.l.rel_error >= start.l.rel_error - 1e-12) break;
  }
  FamilyCost c;
  c.fixed_ns = best.l.fixed;
  c.per_kernel_ns = best.l.per_kernel;
  c.per_channel_ns = best.l.per_channel;
  c.per_ragged_plane_ns = best.l.per_ragged_plane;
  c.efficiency = 1 / best.l.inv_eff;
  c.half_m = best.h.m;
  c.half_n = best.h.n;
  c.half_k = best.h.k;
  c.half_elements = best.h.elements;
  c.points = static_cast<int>(pts.size());
  double sum = 0;
  for (const auto& p : pts) sum += std::abs(model_time_ns(c, peak, p) / p.time_ns - 1);
  c.fit_error_pct = 100 * sum / double(pts.size());
  return c;
}

}  // namespace fusim::compute

// calibrate_op_costs: each probe of the grid (family_grid.cpp) measured in its steps, its
// compute solved on the simulated probe step, one cost model fitted per family.
#include "backend/family_probe.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <thread>

#include "backend/executor.h"
#include "backend/op_profiler.h"
#include "backend/optimizer_config.h"
#include "compute/cost_fit.h"
#include "compute/op_cost_terms.h"
#include "compute/op_signature.h"
#include "core/error.h"
#include "core/parallel_for.h"
#include "exec/compute_solver.h"

namespace fusim::backend {
std::vector<double> speed_factors(const std::vector<double>& samples, std::size_t probes) {
  if (samples.size() != probes + 1) return std::vector<double>(probes, 1.0);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  std::vector<double> f(probes);
  for (std::size_t i = 0; i < probes; ++i) f[i] = 0.5 * (samples[i] + samples[i + 1]) / median;
  return f;
}

compute::OpCostModel calibrate_op_costs(const exec::Machine& host, const FamilyProbeOptions& o) {
  FUSIM_ASSERT(host.compute.op_costs.families.empty(), "calibrating on a machine without op_costs");
  const auto grid = family_probes();
  exec::SimOptions sim;
  sim.fidelity = exec::Fidelity::Block;
  std::map<std::string, std::vector<compute::CostPoint>> points;
  std::map<std::string, std::vector<bool>> exact;  // per point: its compute was solved
  std::map<std::string, double> peaks;             // FLOP/s each family's costs are against
  std::map<std::string, std::vector<std::pair<double, std::string>>> labels;  // measured, probe
  std::map<std::string, std::vector<double>> factors;  // per point: the host's speed factor
  // First every probe measured (the host's speed sampled around each), then each solved.
  std::vector<std::map<int, Tick>> measured_by_probe(grid.size());
  std::vector<double> speed;  // speed[i]: before probe i; speed[grid.size()]: after the last
  int done = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const FamilyProbe& p = grid[i];
    if (o.speed_probe) speed.push_back(o.speed_probe());
    const workload::Trace& trace = p.trace;
    const auto& schedules = p.schedules;
    const auto& s = schedules[0];
    auto probed = [&](const schedule::Op& op) {
      if (op.layer != p.probed_layer) return false;
      if (p.loss) return op.kind == schedule::OpKind::Loss;
      return p.update == (op.kind == schedule::OpKind::Update);
    };
    // Each probed op's measured time: inside running steps of its probe (the default), or
    // alone, repeated from the same state (`isolated`).
    std::map<int, Tick>& measured = measured_by_probe[i];  // op id in step 1 of `s` -> time
    if (o.in_step) {
      RunOptions ro;
      ro.threads = o.threads;
      ro.warmup = 2;
      ro.steps = ro.block = 12;
      ro.min_cpu_ratio = 0;  // every step (few, short): the representative time is robust
      const exec::OpProfile step =
          profile_in_step(trace, p.optimizer, s.impl, schedule::Execution::Layers, ro);
      for (const auto& op : s.ops)
        if (op.step == 1 && probed(op))
          if (const auto* e =
                  step.find_in_step(std::string(schedule::to_string(op.kind)), op.layer))
            measured[op.id] = e->median;
    } else {
      ProfileOptions po;
      po.threads = o.threads;
      po.min_repeats = 3;
      po.max_repeats = 15;
      po.target_s = 0.02;
      po.views = true;
      po.measure = probed;
      const exec::OpProfile profile =
          profile_ops(trace, schedules, optimizer_config(p.optimizer), po);
      for (const auto& m : profile.ops)
        for (const auto& op : s.ops)
          if (op.step == 1 && probed(op) &&
              compute::op_signature(trace, s, op).key == m.signature) {
            measured[op.id] = m.median;
            break;
          }
    }
    ++done;
    if (o.progress) o.progress(done, int(grid.size()), p.what);
  }
  if (o.speed_probe) speed.push_back(o.speed_probe());
  if (o.speed_samples) *o.speed_samples = speed;
  const std::vector<double> factors_by_probe = speed_factors(speed, grid.size());
  // The probe's ops with work, solved together on its simulated step (a probe's F, Bx and
  // Bw cost the simulations of one solve: exec/compute_solver.h); alone where measured
  // alone. Nothing is measured any more: the probes are solved on every core, each on its
  // own (simulations share no state; `fusim sweep --jobs` runs them so too), longest first
  // by their measured time (the largest updates' solves take 5-24 s on a 2-core EPYC VM,
  // most others well under one): 133 s of solving became 75 s there.
  std::vector<std::map<int, exec::SolvedCompute>> solved_by_probe(grid.size());
  std::vector<std::size_t> order(grid.size());
  std::vector<Tick> measured_total(grid.size(), 0);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    order[i] = i;
    for (const auto& [id, raw] : measured_by_probe[i]) measured_total[i] += raw;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return measured_total[a] > measured_total[b];
  });
  int solved_count = 0;
  parallel_for(
      order, int(std::max(1u, std::thread::hardware_concurrency())),
      [&](std::size_t i) {
        const FamilyProbe& p = grid[i];
        const workload::Trace& trace = p.trace;
        const auto& s = p.schedules[0];
        std::vector<int> ids;
        std::vector<Tick> times;
        for (const auto& [id, raw] : measured_by_probe[i]) {
          const schedule::Op& op = s.ops[std::size_t(id)];
          if (op.kernels == 0 || compute::op_family(trace, s, op).empty()) continue;
          ids.push_back(id);
          times.push_back(Tick(double(raw) / factors_by_probe[i]));
        }
        std::map<int, exec::SolvedCompute>& solved_by_id = solved_by_probe[i];
        if (o.in_step) {
          const auto solved =
              exec::solve_computes_in_schedule(trace, s, ids, host, sim, times, 1e-2);
          for (std::size_t k = 0; k < ids.size(); ++k) solved_by_id[ids[k]] = solved[k];
        } else {
          for (std::size_t k = 0; k < ids.size(); ++k)
            solved_by_id[ids[k]] =
                exec::solve_compute_time(trace, s, ids[k], host, sim, times[k], 1e-2);
        }
      },
      [&](std::size_t i) {
        if (o.solve_progress) o.solve_progress(++solved_count, int(grid.size()), grid[i].what);
      });
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const FamilyProbe& p = grid[i];
    const workload::Trace& trace = p.trace;
    const auto& s = p.schedules[0];
    const double factor = factors_by_probe[i];
    const std::map<int, exec::SolvedCompute>& solved_by_id = solved_by_probe[i];
    for (const auto& [id, raw] : measured_by_probe[i]) {
      const Tick time = Tick(double(raw) / factor);
      const schedule::Op& op = s.ops[std::size_t(id)];
      const std::string family = compute::op_family(trace, s, op);
      if (family.empty()) continue;
      compute::CostPoint c;
      c.kernels = op.kernels;
      c.shape = compute::op_shape(trace, s, op);
      c.flops = compute::cost_work(op, c.shape);
      bool solved_exactly = true;
      if (op.kernels == 0) {
        // A view: no memory, no work; its measured time is the call alone.
        c.flops = 0;
        c.time_ns = std::max(1.0, to_ns(time));
      } else {
        const exec::SolvedCompute& solved = solved_by_id.at(id);
        // What the op costs besides its memory: the machine's dispatch model and the
        // solved compute (op_cost_model.h puts the fitted fixed part before the work).
        c.time_ns = std::max(
            1.0, to_ns(Tick(op.kernels) * host.compute.dispatch_overhead + solved.compute));
        // A compute the memory hides says nothing about the family's compute: on a 2-core
        // EPYC VM an Adam foreach update of 2.4 M parameters solved at 14 us of its 1.72 ms
        // (the model's DRAM time alone took the rest); fitted, it drove the family to
        // efficiency 2 and fixed 0, a fit error of 116%.
        solved_exactly = solved.exact && !solved.hidden;
      }
      points[family].push_back(c);
      exact[family].push_back(solved_exactly);
      labels[family].push_back({to_ns(raw), p.what});
      factors[family].push_back(factor);
      peaks[family] = compute::cost_peak(host.compute, trace, op, host.compute.threads_per_op);
    }
  }
  compute::OpCostModel model;
  for (const auto& [family, pts] : points) {
    compute::FitTerms terms;
    terms.per_kernel = family.rfind("update.", 0) == 0;
    // Per channel loop: batch norm's channels, grouped convolutions' groups, the rows of
    // softmax and layer norm, the planes of adaptive pooling (compute/op_cost_model.h).
    terms.per_channel =
        family.rfind("batch_norm.", 0) == 0 || family.rfind("conv2d_grouped.", 0) == 0 ||
        family.rfind("conv2d_dw_ref.", 0) == 0 || family.rfind("softmax.", 0) == 0 ||
        family.rfind("layer_norm.", 0) == 0 || family.rfind("adaptive_avg_pool2d.", 0) == 0;
    terms.per_ragged_plane = family.rfind("batch_norm.", 0) == 0;
    const auto used = informative_points(pts, exact.at(family));
    auto fit = compute::fit_family_cost(used, peaks.at(family), terms);
    fit.dropped_points = static_cast<int>(pts.size() - used.size());
    compute::anchor_family(fit, used, peaks.at(family));
    if (o.points)
      for (std::size_t i = 0; i < pts.size(); ++i) {
        ProbePoint r;
        r.family = family;
        r.measured_ns = labels.at(family)[i].first;
        r.speed_factor = factors.at(family)[i];
        r.probe = labels.at(family)[i].second;
        r.cost_ns = pts[i].time_ns;
        r.fitted_ns = compute::model_time_ns(fit, peaks.at(family), pts[i]);
        r.work = pts[i].flops;
        r.channels = pts[i].shape.channels;
        r.kernels = pts[i].kernels;
        r.exact = exact.at(family)[i];
        r.used = used.size() == pts.size() || r.exact;
        o.points->push_back(r);
      }
    model.families.emplace(family, fit);
  }
  add_default_families(model);
  return model;
}

std::vector<compute::CostPoint> informative_points(const std::vector<compute::CostPoint>& points,
                                                   const std::vector<bool>& exact) {
  FUSIM_ASSERT(points.size() == exact.size(), "one flag per point");
  std::vector<compute::CostPoint> kept;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (exact[i]) kept.push_back(points[i]);
  return kept.size() >= 2 ? kept : points;
}

void add_default_families(compute::OpCostModel& model) {
  // The per-op cost of a family the grid lacks (an ATen op a capture records as its own
  // kind later, a layer op added after this calibration): the median fixed cost of the
  // calibrated elementwise-like families of the same kind. Their fixed part is the layer
  // execution's per-op boundary (dispatch, autograd, allocation), which any op pays; GEMMs,
  // updates, views and the loss are left out (their fixed parts hold other things).
  std::map<std::string, std::vector<double>> fixed;
  for (const auto& [name, f] : model.families) {
    const auto dot = name.rfind('.');
    const std::string op = name.substr(0, dot), kind = name.substr(dot + 1);
    if (op == "linear" || op == "conv2d" || op == "conv2d_grouped" || op == "conv2d_dw_ref" ||
        op == "matmul" || op == "bmm" || op == "scaled_dot_product_attention" ||
        op == "cross_entropy" || op == "view" || op == "default" || name.rfind("update.", 0) == 0)
      continue;
    fixed[kind].push_back(f.fixed_ns);
  }
  for (auto& [kind, v] : fixed) {
    std::sort(v.begin(), v.end());
    compute::FamilyCost d;
    d.fixed_ns = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    d.points = static_cast<int>(v.size());
    model.families["default." + kind] = d;
  }
}

}  // namespace fusim::backend

// simulate(): runs the Simulator and turns its boundary snapshots into steady-state stats.
#include "exec/simulate.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "exec/simulator.h"

namespace fusim::exec {

Fidelity parse_fidelity_name(const std::string& name) {
  if (name == "line") return Fidelity::Line;
  if (name == "block") return Fidelity::Block;
  throw InputError(fmt::format("--fidelity: expected \"line\" or \"block\", got \"{}\"", name));
}

void Simulator::fill_result(SimulationDetail& out) {
  RunResult& r = out.result;
  r = result_header(schedule_, "sim");
  r.peak_memory_bytes = schedule_.peak.total;

  Tick end = 0;
  for (const auto& s : ops_) end = std::max(end, s.end);
  Snapshot last{end, tap_->total_bytes(), cache_stats()};

  // Boundaries b_0..b_{K-1} (first forward op of each step) and the end E of the run.
  // Measured: steps W..K-2 (b_{s+1} - b_s), which leaves out the warm-up steps and the
  // last step with whatever trails it (forward-fused: the flush). With too few steps, the
  // last step (b_{K-1}..E) is measured instead, unless a flush trails it.
  std::vector<const Snapshot*> b;
  for (std::size_t s = 0; s < boundaries_.size(); ++s)
    if (boundary_taken_[s]) b.push_back(&boundaries_[s]);
  if (b.empty()) b.push_back(&boundaries_[0]);  // no forward op: the whole run is one step
  const int steps = static_cast<int>(b.size());
  bool trailing_flush = schedule_.ordering == schedule::Ordering::ForwardFused;
  for (auto mode : schedule_.layer_modes)
    trailing_flush = trailing_flush || mode == schedule::LayerMode::Forward;
  // With forward-mode layers, step 0 runs no update: U_i of step 0 runs inside step 1's
  // window (before F_i of step 1), so the optimizer state is first touched there (its
  // compulsory misses: 8.5 MB of Adam state per "step" on the bundled MLP where eager shows
  // 0). That step is warm-up too whenever the run has a step left to measure after it.
  int warmup = options_.warmup_steps;
  if (trailing_flush && steps >= warmup + 3) ++warmup;
  std::vector<Tick> times;
  const Snapshot *from = nullptr, *to = nullptr;
  if (steps >= warmup + 2) {
    for (int s = warmup; s + 1 < steps; ++s)
      times.push_back(b[std::size_t(s + 1)]->time - b[std::size_t(s)]->time);
    from = b[std::size_t(warmup)];
    to = b.back();
  } else {
    if (trailing_flush)
      throw InputError(fmt::format(
          "{} needs at least {} steps to measure a steady-state step without the warm-up "
          "step(s) and the final flush (--steps)",
          r.ordering, options_.warmup_steps + 2));
    from = b.back();
    to = &last;
    times.push_back(last.time - from->time);
  }
  set_step_times(r, std::move(times));
  r.dram_bytes = (to->dram - from->dram) / std::max(1, r.steps_measured);
  cache::HierarchyStats delta = to->cache - from->cache;
  for (const auto& level : delta.levels) {
    const auto& t = level.total;
    r.hit_rates.push_back(
        {level.name,
         t.accesses == 0 ? 0.0 : static_cast<double>(t.hits) / static_cast<double>(t.accesses)});
  }
  if (!delta.levels.empty()) {
    r.llc_hit_rate = r.hit_rates.back().hit_rate;
    out.last_level = delta.levels.back().name;
  }

  r.per_op.reserve(ops_.size());
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const auto& s = ops_[i];
    r.per_op.push_back(op_timing(schedule_.ops[i], s.start, s.end, s.dram_bytes,
                                 static_cast<int>(s.cores.size())));
  }
  out.dram = {tap_->bucket(), tap_->per_bucket()};
  out.events = static_cast<std::int64_t>(queue_.executed());
}

SimulationDetail simulate_detailed(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, const SimOptions& options) {
  if (options.block_bytes < 64 || (options.block_bytes & (options.block_bytes - 1)) != 0)
    throw InputError(fmt::format("block size: expected a power of two >= 64 bytes, got {}",
                                 options.block_bytes));
  if (options.chunk_bytes < 64)
    throw InputError(
        fmt::format("chunk size: expected at least 64 bytes, got {}", options.chunk_bytes));
  Simulator sim(trace, schedule, machine, options);
  return sim.run();
}

RunResult simulate(const workload::Trace& trace, const schedule::Schedule& schedule,
                   const Machine& machine, const SimOptions& options) {
  return simulate_detailed(trace, schedule, machine, options).result;
}

}  // namespace fusim::exec

#include "exec/steady_state.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"

namespace fusim::exec {

SimulationDetail steady_state(const schedule::Schedule& schedule, const SimulationRecord& rec,
                              int warmup_steps) {
  SimulationDetail out;
  RunResult& r = out.result;
  r = result_header(schedule, "sim");
  r.peak_memory_bytes = schedule.peak.total;

  std::vector<const Snapshot*> b;
  std::vector<int> opener;  // the op that opens each of them
  const std::vector<int> openers = schedule::step_openers(schedule);
  for (std::size_t s = 0; s < rec.boundaries.size(); ++s)
    if (rec.boundaries[s]) b.push_back(&*rec.boundaries[s]), opener.push_back(openers.at(s));
  const Snapshot start{};  // no forward op: the whole run is one step, from the start
  if (b.empty()) b.push_back(&start), opener.push_back(0);
  const int steps = static_cast<int>(b.size());
  bool trailing_flush = schedule.ordering == schedule::Ordering::ForwardFused;
  for (auto mode : schedule.layer_modes)
    trailing_flush = trailing_flush || mode == schedule::LayerMode::Forward;
  // With forward-mode layers, step 0 runs no update: U_i of step 0 runs inside step 1's
  // window (before F_i of step 1), so the optimizer state is first touched there (its
  // compulsory misses: 8.5 MB of Adam state per "step" on the bundled MLP where eager shows
  // 0). That step is warm-up too whenever the run has a step left to measure after it.
  int warmup = warmup_steps;
  if (trailing_flush && steps >= warmup + 3) ++warmup;
  std::vector<Tick> times;
  const Snapshot *from = nullptr, *to = nullptr;
  // The ops of the measured steps: ids in [first_measured, end_measured) in issue order,
  // where the backend cuts its iterations too (OpTiming::measured).
  int first_measured = opener.back(), end_measured = static_cast<int>(rec.ops.size());
  if (steps >= warmup + 2) {
    for (int s = warmup; s + 1 < steps; ++s)
      times.push_back(b[std::size_t(s + 1)]->time - b[std::size_t(s)]->time);
    from = b[std::size_t(warmup)];
    to = b.back();
    first_measured = opener[std::size_t(warmup)];
    end_measured = opener.back();
  } else {
    if (trailing_flush)
      throw InputError(fmt::format(
          "{} needs at least {} steps to measure a steady-state step without the warm-up "
          "step(s) and the final flush (--steps)",
          r.ordering, warmup_steps + 2));
    from = b.back();
    to = &rec.end;
    times.push_back(rec.end.time - from->time);
  }
  set_step_times(r, std::move(times));
  r.dram_bytes = (to->dram - from->dram) / std::max(1, r.steps_measured);
  cache::HierarchyStats delta = to->cache - from->cache;
  for (const auto& level : delta.levels) {
    const auto& t = level.total;
    // A level no access reached has no hit rate (kUnknownRate, JSON null), not 0: a rate of
    // 0 says every access missed.
    r.hit_rates.push_back({level.name, t.accesses == 0 ? kUnknownRate
                                                       : static_cast<double>(t.hits) /
                                                             static_cast<double>(t.accesses)});
  }
  if (!delta.levels.empty()) {
    r.llc_hit_rate = r.hit_rates.back().hit_rate;
    out.last_level = delta.levels.back().name;
  }

  r.per_op.reserve(rec.ops.size());
  for (std::size_t i = 0; i < rec.ops.size(); ++i) {
    const OpRecord& o = rec.ops[i];
    r.per_op.push_back(op_timing(schedule.ops[i], o.start, o.end, o.dram_bytes, o.units));
    r.per_op.back().compute = o.compute;
    r.per_op.back().measured =
        static_cast<int>(i) >= first_measured && static_cast<int>(i) < end_measured;
  }
  // Reads per requester between the same snapshots (a requester's first read may come
  // after `from`: absent there, zero).
  for (std::size_t q = 0; q < to->dram_requesters.size(); ++q) {
    DramRequesterReads d = to->dram_requesters[q];
    if (q < from->dram_requesters.size()) {
      d.reads -= from->dram_requesters[q].reads;
      d.latency -= from->dram_requesters[q].latency;
    }
    if (d.reads > 0) out.dram_requesters.push_back(d);
  }
  out.dram = rec.dram;
  out.events = rec.events;
  return out;
}

}  // namespace fusim::exec

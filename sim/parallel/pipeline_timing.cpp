#include "parallel/pipeline_timing.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.h"

namespace fusim::parallel {
namespace {
using Key = std::tuple<int, int, int>;  // kind, microbatch, model chunk
using Timeline = std::vector<TimedPass>;

// The pass that frees a chunk-microbatch's activations, and completes its weight gradient.
PassKind frees(const ParallelPlan& plan) {
  return splits_weight_gradient(plan.schedule) ? PassKind::W : PassKind::B;
}

int max_in_flight(const Timeline& passes, PassKind free_kind) {
  // +1 at a forward's start, -1 at the end of the pass that frees its activations; at equal
  // times the free comes first (the allocator reuses the memory for the next forward).
  std::vector<std::pair<Tick, int>> events;
  for (const auto& t : passes) {
    if (t.pass.kind == PassKind::F) events.push_back({t.start, +1});
    if (t.pass.kind == free_kind) events.push_back({t.end, -1});
  }
  std::sort(events.begin(), events.end());
  int held = 0, most = 0;
  for (auto [when, delta] : events) most = std::max(most, held += delta);
  return most;
}

// Runs each stage's order, every pass as soon as its stage is free and its input arrived.
std::vector<Timeline> run_orders(const ParallelPlan& plan,
                                 const std::vector<std::vector<Pass>>& order,
                                 const std::function<PassCosts(int, int)>& cost, Tick p2p) {
  const int p = plan.pp, chunks = plan.chunks();
  const bool split = splits_weight_gradient(plan.schedule);
  std::map<Key, Tick> done;
  std::vector<std::size_t> next(std::size_t(p), 0);
  std::vector<Tick> free_at(std::size_t(p), 0);
  std::vector<Timeline> out(static_cast<std::size_t>(p));

  // When the pass's input is available on its stage, or -1 while it is not yet known.
  auto ready_at = [&](int stage, const Pass& pass) -> Tick {
    const int c = model_chunk(plan, stage, pass.chunk);
    auto arrival = [&](PassKind kind, int chunk) -> Tick {
      auto it = done.find({int(kind), pass.microbatch, chunk});
      if (it == done.end()) return -1;
      return it->second + (stage_of_chunk(plan, chunk) == stage ? 0 : p2p);
    };
    switch (pass.kind) {
      case PassKind::F:
        return c == 0 ? 0 : arrival(PassKind::F, c - 1);
      case PassKind::B:
        return c == chunks - 1 ? arrival(PassKind::F, c) : arrival(PassKind::B, c + 1);
      case PassKind::W:
        return arrival(PassKind::B, c);
    }
    return -1;
  };

  std::size_t remaining = 0;
  for (const auto& o : order) remaining += o.size();
  while (remaining > 0) {
    bool progress = false;
    for (int s = 0; s < p; ++s) {
      while (next[std::size_t(s)] < order[std::size_t(s)].size()) {
        const Pass& pass = order[std::size_t(s)][next[std::size_t(s)]];
        const Tick ready = ready_at(s, pass);
        if (ready < 0) break;
        const PassCosts c = cost(s, pass.chunk);
        const Tick d = pass.kind == PassKind::F   ? c.forward
                       : pass.kind == PassKind::W ? c.weight
                                                  : c.backward + (split ? 0 : c.weight);
        const Tick start = std::max(ready, free_at[std::size_t(s)]);
        free_at[std::size_t(s)] = start + d;
        done[{int(pass.kind), pass.microbatch, model_chunk(plan, s, pass.chunk)}] = start + d;
        out[std::size_t(s)].push_back({pass, start, start + d});
        ++next[std::size_t(s)];
        --remaining;
        progress = true;
      }
    }
    FUSIM_ASSERT(progress, "a pipeline order whose passes can all run (no cyclic wait)");
  }
  return out;
}

// The update of step k on a stage ends with the stage's last pass that completes a weight
// gradient of step k (the update itself takes no time here: the orderings place it).
std::vector<Tick> update_times(const Timeline& passes, PassKind free_kind, std::int64_t m,
                               int steps) {
  std::vector<Tick> at(std::size_t(steps), 0);
  for (const auto& t : passes)
    if (t.pass.kind == free_kind) {
      auto& u = at.at(std::size_t(t.pass.microbatch / m));
      u = std::max(u, t.end);
    }
  return at;
}

// Weight versions and gradient delay of each stage (StageTiming) over `steps` steps of m
// microbatches, from the timelines:
//  - version of a stage at time t: the updates of the stage that ended by t;
//  - the version a microbatch's passes read: with weight stashing (every schedule but
//    async-1step) the version its step runs on, the newest one every stage has at the step's
//    first forward there (PipeDream-2BW: one version per batch of m microbatches, the same on
//    all stages, stashed for each microbatch's backward: Narayanan et al. 2021, Sec. 3.1);
//    async-1step keeps no stash: each pass reads the stage's newest weights, a forward those
//    at its start;
//  - delay of step k's gradient: k (the updates it is applied after) minus the oldest version
//    its passes read;
//  - held at t: the newest version plus those read by the microbatches in flight.
void weight_versions(const ParallelPlan& plan, int steps, const std::vector<Timeline>& lines,
                     const std::vector<std::vector<Tick>>& updates,
                     std::vector<StageTiming>& stages) {
  const int p = plan.pp;
  const std::int64_t m = plan.microbatches();
  const PassKind free_kind = frees(plan);
  const bool stash = plan.schedule != PipelineSchedule::AsyncOneStep;
  auto version = [&](int s, Tick t) {
    const auto& u = updates[std::size_t(s)];
    return int(std::count_if(u.begin(), u.end(), [t](Tick x) { return x <= t; }));
  };
  // The version each step runs on with stashing: the oldest of the stages' newest versions
  // at the step's first forward on each.
  std::vector<int> step_version(std::size_t(steps), 0);
  if (stash)
    for (int k = 0; k < steps; ++k) {
      int v = steps;
      for (int s = 0; s < p; ++s) {
        Tick first = -1;
        for (const auto& t : lines[std::size_t(s)])
          if (t.pass.kind == PassKind::F && t.pass.microbatch / m == k &&
              (first < 0 || t.start < first))
            first = t.start;
        if (first >= 0) v = std::min(v, version(s, first));
      }
      step_version[std::size_t(k)] = v;
    }
  for (int s = 0; s < p; ++s) {
    const Timeline& line = lines[std::size_t(s)];
    std::map<std::pair<int, int>, int> read;  // (microbatch, chunk) -> version read
    std::vector<int> oldest(std::size_t(steps), steps);
    // Stashed versions: (time, 0 free / 1 forward, version), at equal times the free first.
    std::vector<std::tuple<Tick, int, int>> events;
    for (const auto& t : line)
      if (t.pass.kind == PassKind::F) {
        const int k = int(t.pass.microbatch / m);
        const int v = stash ? step_version[std::size_t(k)] : version(s, t.start);
        read[{t.pass.microbatch, t.pass.chunk}] = v;
        oldest[std::size_t(k)] = std::min(oldest[std::size_t(k)], v);
        if (stash) events.push_back({t.start, 1, v});
      }
    for (const auto& t : line)
      if (t.pass.kind == free_kind && stash)
        events.push_back({t.end, 0, read.at({t.pass.microbatch, t.pass.chunk})});
    std::sort(events.begin(), events.end());
    StageTiming& st = stages[std::size_t(s)];
    st.gradient_delay = 0;
    for (int k = 0; k < steps; ++k)
      if (oldest[std::size_t(k)] < steps)
        st.gradient_delay = std::max(st.gradient_delay, k - oldest[std::size_t(k)]);
    std::map<int, int> in_flight;  // version -> microbatches in flight reading it
    st.weight_versions = 1;
    for (std::size_t i = 0; i < events.size(); ++i) {
      auto [when, forward, v] = events[i];
      if (forward) {
        ++in_flight[v];
      } else if (--in_flight[v] == 0) {
        in_flight.erase(v);
      }
      if (i + 1 < events.size() && std::get<0>(events[i + 1]) == when) continue;
      const int held = int(in_flight.size()) + (in_flight.count(version(s, when)) ? 0 : 1);
      st.weight_versions = std::max(st.weight_versions, held);
    }
  }
}
}  // namespace

double PipelineTiming::bubble_rate() const {
  const StageTiming* longest = nullptr;
  for (const auto& s : stages)
    if (!longest || s.span() > longest->span()) longest = &s;
  return longest && longest->busy > 0 ? double(iteration - longest->busy) / double(longest->busy)
                                      : 0.0;
}

PipelineTiming time_pipeline(const ParallelPlan& plan,
                             const std::function<PassCosts(int stage, int chunk)>& cost, Tick p2p) {
  const int p = plan.pp;
  const std::int64_t m = plan.microbatches();
  const bool async = is_asynchronous(plan.schedule);
  PipelineTiming out;
  // Enough steps that steps 1 and 2 run in the steady state: p microbatches after step 2
  // keep the last stage's cool-down out of it.
  out.steps = async ? 3 + int((p + m - 1) / m) : 1;
  std::vector<std::vector<Pass>> order(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s)
    order[std::size_t(s)] = async ? asynchronous_passes(plan, s, out.steps) : stage_passes(plan, s);
  const std::vector<Timeline> lines = run_orders(plan, order, cost, p2p);
  const PassKind free_kind = frees(plan);
  std::vector<std::vector<Tick>> updates;
  for (const auto& line : lines) updates.push_back(update_times(line, free_kind, m, out.steps));

  out.stages.resize(std::size_t(p));
  weight_versions(plan, out.steps, lines, updates, out.stages);
  for (int s = 0; s < p; ++s) {
    const Timeline& line = lines[std::size_t(s)];
    StageTiming& st = out.stages[std::size_t(s)];
    st.max_in_flight = max_in_flight(line, free_kind);
    // The step timed: all of it, or the steady-state one between two updates.
    const Tick from = async ? updates[std::size_t(s)][1] : line.front().start;
    const Tick to = async ? updates[std::size_t(s)][2] : line.back().end;
    st.first_start = from;
    st.last_end = to;
    for (const auto& t : line)
      if (t.start >= from && t.end <= to) {
        st.passes.push_back(t);
        st.busy += t.end - t.start;
      }
    out.iteration = std::max(out.iteration, st.span());
  }
  return out;
}

}  // namespace fusim::parallel

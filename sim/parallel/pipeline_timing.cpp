#include "parallel/pipeline_timing.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.h"

namespace fusim::parallel {
namespace {
using Key = std::tuple<int, int, int>;  // kind, microbatch, model chunk

int max_in_flight(const std::vector<TimedPass>& passes, bool split) {
  // +1 at a forward's start, -1 at the end of the pass that frees its activations; at equal
  // times the free comes first (the allocator reuses the memory for the next forward).
  std::vector<std::pair<Tick, int>> events;
  for (const auto& t : passes) {
    if (t.pass.kind == PassKind::F) events.push_back({t.start, +1});
    const PassKind frees = split ? PassKind::W : PassKind::B;
    if (t.pass.kind == frees) events.push_back({t.end, -1});
  }
  std::sort(events.begin(), events.end());
  int held = 0, most = 0;
  for (auto [when, delta] : events) most = std::max(most, held += delta);
  return most;
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
  const int p = plan.pp, chunks = plan.chunks();
  const bool split = splits_weight_gradient(plan.schedule);
  std::vector<std::vector<Pass>> order(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) order[std::size_t(s)] = stage_passes(plan, s);
  std::map<Key, Tick> done;
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<Tick> free_at(static_cast<std::size_t>(p), 0);
  PipelineTiming out;
  out.stages.resize(std::size_t(p));

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
      auto& st = out.stages[std::size_t(s)];
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
        if (st.passes.empty()) st.first_start = start;
        st.passes.push_back({pass, start, start + d});
        st.last_end = start + d;
        st.busy += d;
        ++next[std::size_t(s)];
        --remaining;
        progress = true;
      }
    }
    FUSIM_ASSERT(progress, "a pipeline order whose passes can all run (no cyclic wait)");
  }
  for (auto& st : out.stages) {
    st.max_in_flight = max_in_flight(st.passes, split);
    out.iteration = std::max(out.iteration, st.span());
  }
  return out;
}

}  // namespace fusim::parallel

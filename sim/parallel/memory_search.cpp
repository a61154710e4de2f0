#include "parallel/memory_search.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.h"
#include "core/progress.h"
#include "parallel/tp_partition.h"

namespace fusim::parallel {

std::vector<SearchResult> search_plans(
    const std::function<workload::Trace(std::int64_t)>& make_trace, const MemoryQuery& base,
    const SearchSpace& space) {
  std::map<std::int64_t, workload::Trace> traces;
  auto trace_for = [&](std::int64_t b) -> const workload::Trace& {
    auto it = traces.find(b);
    if (it == traces.end()) it = traces.emplace(b, make_trace(b)).first;
    return it->second;
  };
  // The plans the rules accept, in the order the results had before sorting (tp, cp, pp,
  // microbatch, recompute; the orderings of a plan are evaluated together).
  std::vector<MemoryQuery> plans;
  const int n = space.gpus;
  for (int tp : space.tp)
    for (int cp : space.cp)
      for (int pp = 1; pp <= n; ++pp) {
        if (n % (tp * cp * pp) != 0) continue;
        const int dp = n / (tp * cp * pp);
        for (std::int64_t b : space.microbatch) {
          const std::int64_t g = space.global_batch > 0 ? space.global_batch : b * dp;
          if (g % (b * dp) != 0) continue;
          for (Recompute rc : space.recompute) {
            MemoryQuery q = base;
            ParallelPlan& p = q.plan;
            p.tp = tp;
            p.pp = pp;
            p.dp = dp;
            p.cp = cp;
            p.microbatch = b;
            p.global_batch = g;
            p.recompute = rc;
            p.sequence_parallel = tp > 1;
            if (p.schedule == PipelineSchedule::Interleaved && (pp < 2 || p.microbatches() % pp))
              continue;
            const workload::Trace& trace = trace_for(b);  // bad model options: thrown
            try {
              validate_plan(p, model_facts(trace));
            } catch (const InputError&) {
              continue;  // a combination the plan rules refuse (divisibility)
            }
            plans.push_back(q);
          }
        }
      }
  // The schedule depends on the microbatch and the optimizer's shards only (memory_schedule):
  // built once per pair instead of once per plan and ordering, which made a search of a 70B
  // model on 64 GPUs take a minute.
  std::map<std::pair<std::int64_t, int>, schedule::Schedule> schedules;
  Progress bar("memory --search", plans.size(), 0, space.progress, "plans", 1.0);
  std::vector<SearchResult> found;
  for (const MemoryQuery& q : plans) {
    const workload::Trace& trace = trace_for(q.plan.microbatch);
    const std::pair<std::int64_t, int> key{q.plan.microbatch, q.plan.optimizer_shards()};
    auto it = schedules.find(key);
    if (it == schedules.end()) it = schedules.emplace(key, memory_schedule(trace, q)).first;
    const auto reports = estimate_memory(trace, q, space.orderings, &it->second);
    for (std::size_t k = 0; k < reports.size(); ++k) {
      if (!reports[k].fits) continue;
      MemoryQuery r = q;
      r.ordering = space.orderings[k];
      found.push_back({r, reports[k].max_total, reports[k].headroom()});
    }
    bar.advance();
  }
  bar.finish();
  std::stable_sort(found.begin(), found.end(), [](const SearchResult& a, const SearchResult& b) {
    return std::make_tuple(-a.headroom, a.query.plan.pp, a.query.plan.tp) <
           std::make_tuple(-b.headroom, b.query.plan.pp, b.query.plan.tp);
  });
  return found;
}

}  // namespace fusim::parallel

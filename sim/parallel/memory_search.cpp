#include "parallel/memory_search.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.h"
#include "parallel/tp_partition.h"

namespace fusim::parallel {

std::vector<SearchResult> search_plans(
    const std::function<workload::Trace(std::int64_t)>& make_trace, const MemoryQuery& base,
    const SearchSpace& space) {
  std::vector<SearchResult> found;
  std::map<std::int64_t, workload::Trace> traces;
  auto trace_for = [&](std::int64_t b) -> const workload::Trace& {
    auto it = traces.find(b);
    if (it == traces.end()) it = traces.emplace(b, make_trace(b)).first;
    return it->second;
  };
  const int n = space.gpus;
  for (int tp : space.tp)
    for (int cp : space.cp)
      for (int pp = 1; pp <= n; ++pp) {
        if (n % (tp * cp * pp) != 0) continue;
        const int dp = n / (tp * cp * pp);
        for (std::int64_t b : space.microbatch) {
          const std::int64_t g = space.global_batch > 0 ? space.global_batch : b * dp;
          if (g % (b * dp) != 0) continue;
          for (Recompute rc : space.recompute)
            for (auto ordering : space.orderings) {
              MemoryQuery q = base;
              q.ordering = ordering;
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
              MemoryReport r = estimate_memory(trace, q);
              if (r.fits) found.push_back({q, r.max_total, r.headroom()});
            }
        }
      }
  std::stable_sort(found.begin(), found.end(), [](const SearchResult& a, const SearchResult& b) {
    return std::make_tuple(-a.headroom, a.query.plan.pp, a.query.plan.tp) <
           std::make_tuple(-b.headroom, b.query.plan.pp, b.query.plan.tp);
  });
  return found;
}

}  // namespace fusim::parallel

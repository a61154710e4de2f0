#pragma once
// `fusim memory --search` (issue 20): the parallel configurations of a GPU count that fit a
// GPU by the 80% rule, ranked by headroom.
#include <functional>
#include <string>
#include <vector>

#include "parallel/stage_memory.h"

namespace fusim::parallel {

struct SearchSpace {
  int gpus = 8;
  std::int64_t global_batch = 0;    // 0: one microbatch per replica
  std::vector<int> tp{1, 2, 4, 8};  // within an 8-GPU node (NVLink), Megatron's practice
  std::vector<int> cp{1, 2, 4, 8};
  std::vector<std::int64_t> microbatch{1, 2, 4, 8};
  std::vector<Recompute> recompute{Recompute::None, Recompute::Selective, Recompute::Full};
  std::vector<schedule::Ordering> orderings{schedule::Ordering::Eager,
                                            schedule::Ordering::BackwardFused,
                                            schedule::Ordering::ForwardFused};
  bool progress = false;  // the shared progress reporter on stderr (core/progress.h)
};

struct SearchResult {
  MemoryQuery query;  // plan and ordering
  std::int64_t max_total = 0;
  double headroom = 0;
};

// Every tp x pp x dp x cp = gpus (pp a divisor of the blocks), microbatch dividing the
// replica's batch, recompute and ordering; the base query gives the schedule, optimizer,
// precision, distributed optimizer and GPU. Sequence parallelism is on wherever tp > 1
// (Megatron's recommendation with selective recompute). Configurations the plan rules
// refuse are skipped; those that fit come back sorted by headroom, largest first (ties:
// fewer pipeline stages, then smaller tp). make_trace builds the model at a microbatch size.
std::vector<SearchResult> search_plans(
    const std::function<workload::Trace(std::int64_t microbatch)>& make_trace,
    const MemoryQuery& base, const SearchSpace& space);

}  // namespace fusim::parallel

#pragma once
// `fusim memory --json` (issue 20; the keys are the contract):
// {"stages":[{"stage","weights_bytes","grads_bytes","optimizer_state_bytes",
//   "activations_bytes","buffers_bytes","total_bytes", ...}],
//  "max_total_bytes","gpu_memory_bytes","fits", ...}
// plus what the plan was and the per-stage details (layers, blocks, in-flight microbatches,
// the parts of the buffers).
#include <nlohmann/json.hpp>

#include "parallel/memory_search.h"
#include "parallel/stage_memory.h"

namespace fusim::parallel {

nlohmann::json plan_json(const MemoryQuery& query);
nlohmann::json memory_json(const MemoryReport& report, const MemoryQuery& query);
nlohmann::json search_json(const std::vector<SearchResult>& results, const SearchSpace& space);

}  // namespace fusim::parallel

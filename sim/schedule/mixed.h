#pragma once
// The per-layer mixed ordering file:
//   {"layers": {"fc1": "forward", "fc2": "backward"}, "default": "eager"}
// "layers" maps trace layer names (layers with trained params) to a U placement;
// "default" (required) covers every other layer. Unknown keys, unknown layer names,
// layers without params and unknown modes are InputErrors naming the file and JSON path.
#include <nlohmann/json.hpp>
#include <string>

#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::schedule {

MixedOrdering load_mixed_ordering(const std::string& path, const workload::Trace& trace);
MixedOrdering parse_mixed_ordering(const nlohmann::json& document, const std::string& name,
                                   const workload::Trace& trace);

}  // namespace fusim::schedule

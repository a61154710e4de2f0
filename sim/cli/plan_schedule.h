#pragma once
// `fusim schedule` with a parallel plan (issue 19, point 1): the plan checked up front and
// each pipeline stage's schedule (sim/parallel/parallel_schedule.h), per ordering, as text or
// --json / --csv.
#include <string>
#include <vector>

#include "cli/output_format.h"
#include "parallel/stage_memory.h"

namespace fusim::cli {

// base: the plan and memory options; one schedule per ordering (not mixed).
void print_plan_schedules(const workload::Trace& trace,
                          const std::vector<schedule::Ordering>& orderings,
                          parallel::MemoryQuery base, const std::string& cluster,
                          const OutputFormat& format);

}  // namespace fusim::cli

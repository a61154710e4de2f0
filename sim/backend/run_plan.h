#pragma once
// What `fusim run` and `fusim validate` execute: the orderings named on the command line
// (schedule::parse_orderings), each built into a schedule long enough for the run's
// warm-up, blocks and final flush.
#include <string>
#include <vector>

#include "backend/executor.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

// One schedule per execution of options.executions and ordering, execution-major
// (schedule::build_schedules, schedule/request.h), with the run's steps and, on CUDA,
// updates on a side stream. `mixed_file` is the per-layer file
// of `mixed`, read as `fusim schedule/simulate --mixed` read it: mixed without it, a file
// that is missing or invalid, or a file given without mixed among the orderings throw
// InputError.
std::vector<schedule::Schedule> build_run_schedules(
    const workload::Trace& trace, const std::vector<schedule::Ordering>& orderings,
    const std::string& optimizer, schedule::OptimizerImpl impl, const RunOptions& options,
    const std::string& mixed_file = "");

}  // namespace fusim::backend

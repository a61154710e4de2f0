#pragma once
// `fusim simulate` with a parallel plan (issue 19, points 6 and 7): the plan checked up front
// for every ordering (plan_schedule: divisibility, cluster, memory per GPU), each ordering's
// per-layer op times from the single-device engine on the cluster's GPU, the timed
// multi-device step (sim/parallel/step_timing.h) and its report: step time, per stage busy /
// bubble / exposed communication, bubble fraction, peak memory, weight versions, gradient
// delay; --json / --csv; --timeline: a Perfetto file with a track per device and per link.
#include <string>
#include <vector>

#include "cli/output_format.h"
#include "exec/simulate.h"
#include "parallel/stage_memory.h"

namespace fusim::cli {

struct PlanSimulation {
  parallel::MemoryQuery base;  // the plan and the memory options (ordering set per run)
  std::string cluster;
  std::vector<schedule::Ordering> orderings;  // eager first
  exec::SimOptions sim;                       // of the single-device engine
  std::string fidelity_name, trace_file, timeline;
  OutputFormat format;
};

void print_plan_simulation(const workload::Trace& trace, const PlanSimulation& request);

}  // namespace fusim::cli

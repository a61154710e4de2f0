#pragma once
// What `fusim run` and `fusim validate` both print about how a run was measured: the
// machine while it ran (load, pinned threads, rounds, whether every CI narrowed enough),
// each schedule's kept and dropped steps, and the run's notes (backend/run_notes.cpp) in
// plain sentences. Only with libtorch (FUSIM_WITH_TORCH), like the two commands.
#include <nlohmann/json.hpp>

#include "backend/executor.h"
#include "cli/output_format.h"

namespace fusim::cli {

// {"load_average_before", "load_average_after", "cpus", "threads", "pinned_cpus",
//  "elapsed_s", "rounds", "converged", "ci_points", "max_time_s", "min_cpu_ratio",
//  "dram_triad_gbs", "op_probe_us", "core_to_core_ns"}
nlohmann::json conditions_json(const backend::RunReport& report,
                               const backend::RunOptions& options);
// A probe's samples during the run (the DRAM probe's GB/s, the op speed probe's us):
// {"samples", "min", "median", "max"}; null when not probed (CUDA, --no-dram-probe,
// --no-speed-probe).
nlohmann::json spread_json(const std::vector<double>& samples);
// {"steps_run", "steps_dropped", "cpu_wall_median", "run_queue_wait_median",
//  "minor_faults_median"} of result k.
nlohmann::json quality_json(const backend::StepQuality& quality);
// Text output only: the notes under the table, one per line, on stdout.
void print_notes(const OutputFormat& format, const backend::RunReport& report);

}  // namespace fusim::cli

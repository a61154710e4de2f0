#ifdef FUSIM_WITH_TORCH
#include "cli/run_report_output.h"

#include <fmt/format.h>

namespace fusim::cli {

nlohmann::json conditions_json(const backend::RunReport& report, const backend::RunOptions& o) {
  const auto& c = report.conditions;
  auto or_null = [](double v) { return v < 0 ? nlohmann::json() : nlohmann::json(v); };
  return {{"load_average_before", or_null(c.load_before)},
          {"load_average_after", or_null(c.load_after)},
          {"other_processes_cores", or_null(c.other_cores)},
          {"steal_cores", or_null(c.steal_cores)},
          {"cpus", c.cpus},
          {"threads", c.threads},
          {"pinned_cpus", c.pinned_cpus},
          {"elapsed_s", c.elapsed_s},
          {"rounds", c.rounds},
          {"converged", c.converged},
          {"ci_points", o.ci_points},
          {"max_time_s", o.max_time_s},
          {"min_cpu_ratio", o.min_cpu_ratio},
          {"dram_triad_gbs", spread_json(c.dram_triad_gbs)},
          {"op_probe_us", spread_json(c.op_probe_us)},
          {"core_to_core_ns", spread_json(c.core_to_core_ns)}};
}

nlohmann::json spread_json(const std::vector<double>& samples) {
  const backend::SampleSpread d = backend::sample_spread(samples);
  if (d.samples == 0) return nullptr;
  return {{"samples", samples}, {"min", d.min}, {"median", d.median}, {"max", d.max}};
}

nlohmann::json quality_json(const backend::StepQuality& q) {
  auto or_null = [](double v) { return v < 0 ? nlohmann::json() : nlohmann::json(v); };
  return {{"steps_run", q.steps_run},
          {"steps_dropped", q.steps_dropped},
          {"cpu_wall_median", or_null(q.cpu_ratio)},
          {"run_queue_wait_median", or_null(q.waited_share)},
          {"minor_faults_median", or_null(q.minor_faults)}};
}

void print_notes(const OutputFormat& format, const backend::RunReport& report) {
  if (format.json || format.csv) return;
  for (const auto& n : report.notes) fmt::print("{}\n", n);
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH

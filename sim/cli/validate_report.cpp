// fusim validate's comparison (validate_report.h): rows, table, JSON and CSV.
#ifdef FUSIM_WITH_TORCH
#include "cli/validate_report.h"

#include <fmt/format.h>

#include "cli/op_comparison_output.h"
#include "cli/run_report_output.h"
#include "core/compare.h"
#include "core/table.h"
#include "core/units.h"
#include "exec/op_comparison.h"

namespace fusim::cli {
namespace {

struct Row {
  std::string ordering, execution;
  double predicted_ms = 0, measured_ms = 0, p25_ms = 0, p75_ms = 0;
  double predicted_speedup = 0, measured_speedup = 0, ci_low = 0, ci_high = 0;
  bool outside_noise = false, has_base = false;
};

}  // namespace

void print_validate(const ValidateComparison& c, const OutputFormat& format) {
  const auto& predicted = c.predicted;
  const auto& report = c.report;
  std::vector<Row> rows;
  for (std::size_t k = 0; k < report.results.size(); ++k) {
    const auto& m = report.results[k];
    Row row{m.ordering,
            m.execution,
            to_ms(predicted[k].step_time),
            to_ms(m.step_time),
            to_ms(m.step_time_p25),
            to_ms(m.step_time_p75)};
    const int base = report.speedups.empty() ? -1 : report.baselines[k];
    if (base >= 0) {
      row.has_base = true;
      row.predicted_speedup =
          speedup(predicted[std::size_t(base)].step_time, predicted[k].step_time);
      const auto& s = report.speedups[k];
      row.measured_speedup = s.speedup;
      row.ci_low = s.low;
      row.ci_high = s.high;
      row.outside_noise = s.outside_noise();
    }
    rows.push_back(row);
  }

  Table table({"ordering", "execution", "optimizer", "predicted ms", "measured ms", "p25-p75 ms",
               "error %", "pred speedup", "meas speedup", "95% CI", "speedup err pts"});
  nlohmann::json results = nlohmann::json::array();
  std::vector<double> errors, speedup_errors;
  OpGroupTable per_op_table(false), per_layer_table(true);
  CsvRecords per_op_csv{nlohmann::json::array(), op_groups_csv_columns(false)};
  CsvRecords per_layer_csv{nlohmann::json::array(), op_groups_csv_columns(true)};
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    const double error = error_pct(r.predicted_ms, r.measured_ms);
    // In points: 100 x the difference of the two speedups.
    const double speedup_error = 100.0 * (r.predicted_speedup - r.measured_speedup);
    errors.push_back(error);
    speedup_errors.push_back(speedup_error);
    const bool has_base = r.has_base;
    table.add_row({r.ordering, r.execution, c.optimizer, fmt::format("{:.3f}", r.predicted_ms),
                   fmt::format("{:.3f}", r.measured_ms),
                   fmt::format("{:.3f}-{:.3f}", r.p25_ms, r.p75_ms), fmt::format("{:+.1f}", error),
                   has_base ? fmt::format("{:.3f}", r.predicted_speedup) : "-",
                   has_base ? fmt::format("{:.3f}", r.measured_speedup) : "-",
                   has_base ? fmt::format("[{:.3f}, {:.3f}]", r.ci_low, r.ci_high) : "-",
                   has_base ? fmt::format("{:+.1f}", speedup_error) : "-"});
    nlohmann::json j{{"ordering", r.ordering},
                     {"execution", r.execution},
                     {"optimizer", c.optimizer},
                     {"impl", c.impl},
                     {"predicted_ms", r.predicted_ms},
                     {"measured_ms", r.measured_ms},
                     {"measured_p25_ms", r.p25_ms},
                     {"measured_p75_ms", r.p75_ms},
                     {"error_pct", error}};
    j["measurement"] = quality_json(report.quality[results.size()]);
    // Without eager (no baseline) the speedups are null. The CI both as the pair
    // measured_speedup_ci (kept for scripts) and one value per key (the CSV's columns).
    for (const char* key :
         {"predicted_speedup", "measured_speedup", "measured_speedup_ci", "measured_speedup_ci_low",
          "measured_speedup_ci_high", "speedup_outside_noise", "speedup_error_points"})
      j[key] = nullptr;
    if (has_base) {
      j["predicted_speedup"] = r.predicted_speedup;
      j["measured_speedup"] = r.measured_speedup;
      j["measured_speedup_ci"] = {r.ci_low, r.ci_high};
      j["measured_speedup_ci_low"] = r.ci_low;
      j["measured_speedup_ci_high"] = r.ci_high;
      j["speedup_outside_noise"] = r.outside_noise;
      j["speedup_error_points"] = speedup_error;
    }
    // The per-op views' CSV rows: each group with its result's ordering and execution.
    auto add_group_rows = [&](const nlohmann::json& groups, CsvRecords& csv) {
      for (nlohmann::json g : groups) {
        g["ordering"] = r.ordering;
        g["execution"] = r.execution;
        csv.rows.push_back(std::move(g));
      }
    };
    if (c.per_op) {
      const auto groups = exec::compare_per_op_kind(c.trace, predicted[k], report.results[k]);
      j["per_op_kinds"] = op_groups_json(groups, false);
      add_group_rows(j["per_op_kinds"], per_op_csv);
      per_op_table.add(r.ordering, groups);
    }
    if (c.per_layer) {
      const auto groups = exec::compare_per_layer(c.trace, predicted[k], report.results[k]);
      j["per_layer"] = op_groups_json(groups, true);
      add_group_rows(j["per_layer"], per_layer_csv);
      per_layer_table.add(r.ordering, groups);
    }
    results.push_back(j);
  }
  const double mape = mean_absolute(errors);
  const double speedup_mae = mean_absolute(speedup_errors);
  nlohmann::json json = c.header;
  json["results"] = results;
  json["mape"] = mape;
  json["speedup_mae_points"] = speedup_mae;
  json["notes"] = report.notes;
  // --csv: the results, then the per-op views as further blocks (a blank line before each).
  std::vector<CsvRecords> csv{
      {json["results"],
       {"ordering", "execution", "optimizer", "impl", "predicted_ms", "measured_ms",
        "measured_p25_ms", "measured_p75_ms", "error_pct", "predicted_speedup", "measured_speedup",
        "measured_speedup_ci_low", "measured_speedup_ci_high", "speedup_outside_noise",
        "speedup_error_points"}}};
  for (const char* q : {"steps_run", "steps_dropped", "cpu_wall_median", "run_queue_wait_median",
                        "minor_faults_median"})
    csv.front().columns.push_back(std::string("measurement.") + q);
  if (c.per_op) csv.push_back(std::move(per_op_csv));
  if (c.per_layer) csv.push_back(std::move(per_layer_csv));
  print_result(format, json, table, csv);
  print_notes(format, report);
  if (format.json || format.csv) return;
  fmt::print("MAPE {:.1f}% (step time), mean |speedup error| {:.1f} points\n", mape, speedup_mae);
  // The per-op views follow the step table.
  for (const Table* t : {c.per_op ? &per_op_table.table() : nullptr,
                         c.per_layer ? &per_layer_table.table() : nullptr}) {
    if (t) fmt::print("\n{}", t->to_text());
  }
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH

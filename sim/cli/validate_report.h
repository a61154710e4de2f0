#pragma once
// fusim validate's comparison of the predicted and the measured steps: per result (one per
// schedule, in the report's order) predicted and measured ms, the measured quartiles, the
// error, both speedups over the result's baseline and the measured one's 95% CI; the
// per-op-kind and per-layer views (--per-op, --per-layer); printed as the aligned table
// with the MAPE and the notes, or as JSON or CSV (docs/output_schema.md). The prediction
// and measurement themselves are validate_cmd.cpp's.
#ifdef FUSIM_WITH_TORCH
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/executor.h"
#include "cli/output_format.h"
#include "exec/run_result.h"
#include "workload/trace.h"

namespace fusim::cli {

struct ValidateComparison {
  const workload::Trace& trace;
  const std::vector<exec::RunResult>& predicted;  // parallel to report.results
  const backend::RunReport& report;
  std::string optimizer, impl;
  bool per_op = false, per_layer = false;
  // The JSON document's other keys (trace, machine, conditions, ...); print_validate adds
  // "results", "mape", "speedup_mae_points" and "notes".
  nlohmann::json header;
};

void print_validate(const ValidateComparison& comparison, const OutputFormat& format);

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH

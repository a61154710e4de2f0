#pragma once
// A whole sweep from a checked study to its output: resume scan, incremental writing, in
// this process or, when started by mpirun/srun, sharded over the ranks with rank 0 writing.
#include <functional>
#include <string>

#include "sweep/runner.h"

namespace fusim::sweep {

struct SweepOutput {
  std::string path;     // results.csv or results.json; empty: rows go to on_rows only
  bool resume = false;  // keep the finished units of an earlier run of the same study
};

// What the process did: rank 0 (or the only process) owns the rows and the output.
struct SweepSummary {
  bool writes_output = true;      // false on MPI ranks other than 0
  std::size_t units_resumed = 0;  // units kept from an earlier run
  std::size_t ranks = 1;
};

// Call study.check(evaluator) first: errors must come before any work. `on_rows` (may be
// empty) sees each unit's rows in unit order, on rank 0 only; with --resume only the units
// this run computed.
SweepSummary run_study(const Study& study, const Evaluator& evaluator, const SweepOutput& output,
                       const RunOptions& opts,
                       const std::function<void(const UnitRows&)>& on_rows = {});

}  // namespace fusim::sweep

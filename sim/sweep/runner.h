#pragma once
// Running a study's remaining units in this process (threads) or over MPI ranks; either
// way the sink sees every unit exactly once, in unit order, on the calling thread (rank 0).
#include <cstddef>
#include <functional>

#include "sweep/evaluator.h"
#include "sweep/study.h"

namespace fusim::sweep {

struct RunOptions {
  int jobs = 1;          // worker threads per process
  bool progress = true;  // progress bar on stderr
};

using UnitSink = std::function<void(std::size_t unit, const UnitRows& rows)>;

// Runs units [first_unit, study.units()) on opts.jobs threads.
void run_local(const Study& study, const Evaluator& evaluator, std::size_t first_unit,
               const RunOptions& opts, const UnitSink& sink);

}  // namespace fusim::sweep

#include "sweep/runner.h"
#include "core/progress.h"

#include <numeric>

#include "sweep/unit_pool.h"

namespace fusim::sweep {

void run_local(const Study& study, const Evaluator& evaluator, std::size_t first_unit,
               const RunOptions& opts, const UnitSink& sink) {
  std::vector<std::size_t> units(study.units() - first_unit);
  std::iota(units.begin(), units.end(), first_unit);
  Progress bar("sweep", study.units(), first_unit, opts.progress);
  UnitPool pool(units, opts.jobs,
                [&](std::size_t unit) { return study.run_unit(evaluator, unit); });
  InOrder order(first_unit, study.units());
  while (!order.complete()) {
    auto done = pool.next(std::chrono::milliseconds(200));
    if (!done) continue;
    bar.advance();
    for (FinishedUnit& unit : order.add(std::move(*done))) sink(unit.unit, unit.rows);
  }
  bar.finish();
}

}  // namespace fusim::sweep

#include "sweep/study.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "core/compare.h"
#include "core/error.h"
#include "core/progress.h"

namespace fusim::sweep {
namespace {

void require_distinct(const std::vector<std::string>& names, const char* option) {
  if (names.empty()) throw InputError(option, "", "at least one name");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) throw InputError(option, "", "a name between the commas, got ''");
    for (std::size_t j = 0; j < i; ++j)
      if (names[i] == names[j])
        throw InputError(option, "", fmt::format("each name once, got {} twice", names[i]));
  }
}

// Ratios and rates at full precision (docs/output_schema.md; they were rounded to 6
// decimals before), null where there is no data (exec::kUnknownRate: a cache level that saw
// no access). A pure function of the integer inputs, hence deterministic.
nlohmann::json known_rate(double value) {
  return value < 0 ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json known_int(std::int64_t value) {
  return value < 0 ? nlohmann::json(nullptr) : nlohmann::json(value);
}

}  // namespace

Study::Study(Grid grid, std::vector<std::string> orderings, std::vector<std::string> optimizers)
    : grid_(std::move(grid)), orderings_(std::move(orderings)), optimizers_(std::move(optimizers)) {
  require_distinct(orderings_, "--ordering");
  require_distinct(optimizers_, "--optimizer");
}

std::vector<std::string> Study::columns() const {
  std::vector<std::string> columns{"trace"};
  for (const Axis& axis : grid_.axes()) columns.push_back(axis.path);
  for (const char* c : {"ordering", "optimizer", "step_time_ms", "speedup_vs_eager", "dram_bytes",
                        "llc_hit_rate", "peak_memory_bytes"})
    columns.emplace_back(c);
  for (const std::string& level : levels_) columns.push_back("hit_rate." + level);
  return columns;
}

Cells Study::key_cells(std::size_t unit, std::size_t ordering) const {
  GridPoint point = grid_.point(unit / optimizers_.size());
  Cells cells{grid_.traces()[point.trace]};
  for (std::size_t a = 0; a < grid_.axes().size(); ++a) cells.push_back(grid_.value(point, a));
  cells.emplace_back(orderings_[ordering]);
  cells.emplace_back(optimizers_[unit % optimizers_.size()]);
  return cells;
}

PointSetup Study::setup(const GridPoint& point) const {
  PointSetup setup;
  setup.trace = point.trace;
  if (auto b = grid_.batch_axis()) setup.batch = grid_.value(point, *b).get<std::int64_t>();
  setup.machine_overrides = grid_.machine_overrides(point);
  setup.plan_overrides = grid_.plan_overrides(point);
  return setup;
}

void Study::check(Evaluator& evaluator, bool progress) const {
  evaluator.check_choices(orderings_, optimizers_);
  // A large grid takes a while to check (10^4 points: 15 s): reported, after a second.
  Progress bar("sweep: checking", grid_.size(), 0, progress, "points", 1.0);
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    evaluator.check_point(setup(grid_.point(p)));
    bar.advance();
  }
}

UnitRows Study::run_unit(const Evaluator& evaluator, std::size_t unit) const {
  const std::string& optimizer = optimizers_[unit % optimizers_.size()];
  PointSetup point = setup(grid_.point(unit / optimizers_.size()));
  std::vector<exec::RunResult> results;
  for (const std::string& ordering : orderings_)
    results.push_back(evaluator.run(point, ordering, optimizer));
  // The baseline of every speedup: eager at the same point, with the same optimizer.
  Tick eager = -1;
  for (std::size_t o = 0; o < orderings_.size(); ++o)
    if (orderings_[o] == "eager") eager = results[o].step_time;
  if (eager < 0) eager = evaluator.run(point, "eager", optimizer).step_time;

  UnitRows rows;
  for (std::size_t o = 0; o < orderings_.size(); ++o) {
    const exec::RunResult& r = results[o];
    Cells cells = key_cells(unit, o);
    cells.emplace_back(to_ms(r.step_time));  // exact: ps / 1e9 is correctly rounded
    cells.push_back(r.step_time > 0 ? nlohmann::json(speedup(eager, r.step_time))
                                    : nlohmann::json(nullptr));
    cells.push_back(known_int(r.dram_bytes));
    cells.push_back(known_rate(r.llc_hit_rate));
    cells.push_back(known_int(r.peak_memory_bytes));
    for (const std::string& level : levels_) {
      auto it = std::find_if(r.hit_rates.begin(), r.hit_rates.end(),
                             [&](const exec::LevelHitRate& h) { return h.level == level; });
      cells.push_back(it == r.hit_rates.end() ? nlohmann::json(nullptr) : known_rate(it->hit_rate));
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

}  // namespace fusim::sweep

#pragma once
// A sweep study: the grid crossed with optimizers and orderings, cut into units of work.
// A unit is one grid point with one optimizer; it yields one row per ordering, and its
// speedups are against eager at the same point (eager is simulated even when not listed).
// Rows are numbered unit-major, so the output order never depends on who ran what.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/evaluator.h"
#include "sweep/grid.h"

namespace fusim::sweep {

using Cells = std::vector<nlohmann::json>;  // one row, in Study::columns() order; null = unknown
using UnitRows = std::vector<Cells>;        // one per ordering

class Study {
 public:
  // Throws InputError for empty or repeated orderings/optimizers.
  Study(Grid grid, std::vector<std::string> orderings, std::vector<std::string> optimizers);

  const Grid& grid() const { return grid_; }
  const std::vector<std::string>& orderings() const { return orderings_; }
  const std::vector<std::string>& optimizers() const { return optimizers_; }

  std::size_t units() const { return grid_.size() * optimizers_.size(); }
  std::size_t rows_per_unit() const { return orderings_.size(); }

  // Adds a hit_rate.<level> column per cache level (after the other results), from
  // Evaluator::cache_levels(); before columns() is first used.
  void set_cache_levels(std::vector<std::string> levels) { levels_ = std::move(levels); }
  // trace, every swept path, ordering, optimizer, then the results.
  std::vector<std::string> columns() const;
  // Number of leading columns that identify a row (trace .. optimizer).
  std::size_t key_columns() const { return grid_.axes().size() + 3; }
  // The identifying cells of row `ordering` of `unit`.
  Cells key_cells(std::size_t unit, std::size_t ordering) const;

  PointSetup setup(const GridPoint& point) const;
  // Checks the names and every grid point's machine and trace (no simulation).
  // progress: a progress line on stderr while a large grid is checked (core/progress.h).
  void check(Evaluator& evaluator, bool progress = false) const;
  UnitRows run_unit(const Evaluator& evaluator, std::size_t unit) const;

 private:
  Grid grid_;
  std::vector<std::string> orderings_, optimizers_;
  std::vector<std::string> levels_;
};

}  // namespace fusim::sweep

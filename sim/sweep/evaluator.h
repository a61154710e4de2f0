#pragma once
// What a sweep asks of the simulator, behind a small interface so that the grid, the
// output, resuming and sharding over threads and MPI ranks are independent of it (and
// testable with a stand-in). The real one is SimEvaluator (sim_evaluator.h).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/run_result.h"

namespace fusim::sweep {

// Everything that distinguishes one grid point from another.
struct PointSetup {
  std::size_t trace = 0;              // index into the sweep's --trace list
  std::optional<std::int64_t> batch;  // set when `batch=` is swept
  std::vector<std::pair<std::string, nlohmann::json>> machine_overrides;  // dotted path, value
  std::vector<std::pair<std::string, nlohmann::json>> plan_overrides;     // "parallel.tp", value
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Rejects unknown ordering or optimizer names (InputError naming the option).
  virtual void check_choices(const std::vector<std::string>& orderings,
                             const std::vector<std::string>& optimizers) const = 0;
  // Builds the point's machine and trace without simulating, and may keep them for run();
  // throws InputError naming the bad path or value. Called for every point, from one
  // thread, before any simulation starts.
  virtual void check_point(const PointSetup& point) = 0;
  // The machine's cache level names, first to last: the sweep's hit_rate.<level> columns
  // (a --set changes a level's fields, never which levels there are).
  virtual std::vector<std::string> cache_levels() const = 0;
  // Simulates one ordering with one optimizer at a point. Called from many threads at
  // once: implementations keep no mutable state outside the call but thread-safe memos
  // that change no result.
  virtual exec::RunResult run(const PointSetup& point, const std::string& ordering,
                              const std::string& optimizer) const = 0;
};

}  // namespace fusim::sweep

#pragma once
// What an executor (simulated or real) reports for one ordering. Everything downstream
// (tables, validation, sweeps, plots, timelines) works on RunResults only, and both
// executors fill them through the functions below: one header filler, one per-op filler,
// one step-time summary.
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "schedule/schedule.h"

namespace fusim::exec {

// Marks a count that an executor cannot know (DRAM bytes of a real run); JSON writes null.
constexpr std::int64_t kUnknown = -1;
// Marks a rate with no data: not known to the executor, or of a cache level that saw no
// access in the measured steps; JSON writes null, CSV an empty cell.
constexpr double kUnknownRate = -1;

struct OpTiming {
  int id = 0;
  std::string kind;  // "F", "Bx", "Bw", "U", "L"
  int layer = -1;
  int step = 0;
  int stream = 0;
  Tick start = 0, end = 0;
  std::int64_t dram_bytes = kUnknown;  // unknown on real runs
  int units = -1;                      // cores / SMs the op ran on; -1 where not known
  // Simulated: the compute time the op's work was given (its chunks' compute summed, after
  // a profile's or the cost model's); -1 on real runs. With end - start it splits an op's
  // simulated time into compute and the rest (memory not hidden, dispatch, delay).
  Tick compute = -1;
  // Part of a measured step (simulated: the steps of step_times; measured runs report
  // only those). Per-op comparisons (op_comparison.h) sum these.
  bool measured = true;
};

// Hits / accesses of one cache level over the measured steps, all its instances together
// (every core's private L1, say).
struct LevelHitRate {
  std::string level;
  double hit_rate = kUnknownRate;  // kUnknownRate: no access reached the level
};

struct RunResult {
  std::string executor;  // "sim", "cpu", "cuda"
  std::string ordering, optimizer, impl;
  std::string execution;  // "layers" | "graph" (schedule::Execution): run, or modelled
  int steps_measured = 0;
  Tick step_time = 0;            // median of the measured (steady-state) steps
  std::vector<Tick> step_times;  // each measured step
  // Measured runs: the sampling round of each of step_times (run's rounds: one block of
  // every ordering, so steps of one round met the same host speed); empty when simulated.
  std::vector<int> step_rounds;
  Tick step_time_p25 = 0, step_time_p75 = 0;  // spread of the measured steps
  std::int64_t dram_bytes = kUnknown;         // per steady-state step
  double llc_hit_rate = kUnknownRate;         // the last level's; kUnknownRate: no data
  std::vector<LevelHitRate> hit_rates;        // first level to last; empty where not known
  // Simulated: the schedule's allocator model (schedule::MemoryPeak::total). Measured: the
  // most bytes the ordering's own tensors held at once (backend/memory_counter.h).
  std::int64_t peak_memory_bytes = kUnknown;
  std::vector<OpTiming> per_op;
};

// Bytes sent to DRAM in consecutive buckets of `bucket` ticks from tick 0 (simulated runs:
// the bandwidth track of timelines).
struct DramSeries {
  Tick bucket = 0;
  std::vector<std::int64_t> bytes;
};

// The q-quantile (q in [0, 1]) by linear interpolation between closest ranks, numpy's
// default ("linear", Hyndman & Fan 1996 definition 7): with sorted x_0..x_{n-1}, h =
// q (n - 1), x_floor(h) + (h - floor(h)) (x_ceil(h) - x_floor(h)). The median of an even
// count is the mean of the middle two. `values` non-empty.
double quantile(std::vector<double> values, double q);

// The one summary of measured step times, used by both executors (so that validate
// compares like with like): median, 25th and 75th percentiles by quantile() above,
// rounded to the nearest picosecond.
struct StepSummary {
  Tick median = 0, p25 = 0, p75 = 0;
};
StepSummary summarize_steps(const std::vector<Tick>& measured);  // measured non-empty

// Sets step_times, steps_measured and the summary of `result`.
void set_step_times(RunResult& result, std::vector<Tick> measured);

// A result with the schedule's identity (ordering, optimizer, impl) and `executor`.
RunResult result_header(const schedule::Schedule& schedule, std::string executor);
// The timing of `op` as both executors report it.
OpTiming op_timing(const schedule::Op& op, Tick start, Tick end, std::int64_t dram_bytes = kUnknown,
                   int units = -1);

}  // namespace fusim::exec

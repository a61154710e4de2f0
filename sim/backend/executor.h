#pragma once
// The real executor: runs the op lists of several schedules (orderings) of one trace on
// libtorch, interleaved in blocks (A B C A B C ...) so that drift of a noisy machine hits
// every ordering alike, and reports each as a RunResult like the simulator's.
// This header has no torch types: the CLI includes it without compiling libtorch headers.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/optimizer_config.h"
#include "backend/step_stats.h"
#include "exec/run_result.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::backend {

struct RunOptions {
  std::string device = "cpu";  // "cpu" | "cuda"
  int threads = 0;             // intra-op threads; 0 keeps libtorch's default
  int warmup = 3;              // unmeasured steps per ordering before the first block
  int steps = 10;              // measured steps per ordering
  int block = 5;               // measured steps of one ordering before switching
  std::uint64_t seed = 1;      // weights, inputs and dropout masks
  bool progress = false;       // one line per block on stderr
};

// Steps each schedule must contain: warmup, then per block one re-warm step (caches were
// filled by the other orderings) plus the block's measured steps, plus one last unmeasured
// step (forward-fused ends with a flush of the last updates).
int schedule_steps_for(const RunOptions& options);

// Throws InputError with one line saying why when `device` cannot run here ("cuda" on a
// libtorch built without CUDA, or with no CUDA device; unknown names).
void check_device(const std::string& device);

struct RunReport {
  std::vector<exec::RunResult> results;   // one per schedule, in the given order
  int baseline = -1;                      // index of the eager schedule (-1: none)
  std::vector<SpeedupInterval> speedups;  // vs the baseline; empty without one
};

RunReport run_schedules(const workload::Trace& trace,
                        const std::vector<schedule::Schedule>& schedules,
                        const OptimizerConfig& optimizer, const RunOptions& options);

}  // namespace fusim::backend

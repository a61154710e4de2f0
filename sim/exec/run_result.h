#pragma once
// What an executor (simulated or real) reports for one ordering. Everything downstream
// (tables, validation, sweeps, plots) works on RunResults only.
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace fusim::exec {

struct OpTiming {
  int id = 0;
  std::string kind;  // "F", "Bx", "Bw", "U", "L"
  int layer = -1;
  int step = 0;
  int stream = 0;
  Tick start = 0, end = 0;
  std::int64_t dram_bytes = -1;  // -1 where not known (real runs)
};

// Hits / accesses of one cache level over the measured steps, all its instances together
// (every core's private L1, say).
struct LevelHitRate {
  std::string level;
  double hit_rate = 0;
};

struct RunResult {
  std::string executor;  // "sim", "cpu", "cuda"
  std::string ordering, optimizer, impl;
  int steps_measured = 0;
  Tick step_time = 0;                         // median of the measured (steady-state) steps
  std::vector<Tick> step_times;               // each measured step
  Tick step_time_p25 = 0, step_time_p75 = 0;  // spread of the measured steps
  std::int64_t dram_bytes = -1;               // per steady-state step; -1 where not known
  double llc_hit_rate = -1;                   // -1 where not known
  std::vector<LevelHitRate> hit_rates;        // first level to last; empty where not known
  std::int64_t peak_memory_bytes = 0;
  std::vector<OpTiming> per_op;
};

}  // namespace fusim::exec

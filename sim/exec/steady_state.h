#pragma once
// Private to sim/exec: what one simulation recorded, and the RunResult it makes. Kept apart
// from the engine so that the statistics (which steps are measured, how stats snapshots are
// subtracted) read in one place and the engine only records.
#include <cstdint>
#include <optional>
#include <vector>

#include "exec/simulate.h"
#include "mem/cache/hierarchy.h"

namespace fusim::exec {

// Counters at one moment: time, bytes sent to DRAM, cache stats (re-reads included), the
// DRAM's reads per requester (MainMemory::requesters; empty without a DRAM system).
struct Snapshot {
  Tick time = 0;
  std::int64_t dram = 0;
  cache::HierarchyStats cache;
  std::vector<DramRequesterReads> dram_requesters;
};

struct OpRecord {
  Tick start = 0, end = 0;
  std::int64_t dram_bytes = 0;
  int units = 0;     // cores / SMs it ran on
  Tick compute = 0;  // compute time its chunks were given, summed (OpTiming::compute)
};

struct SimulationRecord {
  std::vector<std::optional<Snapshot>> boundaries;  // per step: when its opening op started
  Snapshot end;                                     // when the last op finished
  std::vector<OpRecord> ops;                        // per schedule op
  DramSeries dram;
  std::int64_t events = 0;
};

// Steps b_0..b_{K-1} (each step's opening op, schedule::step_openers) and the end E:
// the measured steps are W..K-2 (b_{s+1} - b_s), leaving out the warm-up steps and the last
// step with whatever trails it (forward-fused: the flush); with forward-mode layers one
// more warm-up step when steps allow. With too few steps, the last step (b_{K-1}..E) is
// measured instead, unless a flush trails it (then InputError). Step times are
// summarize_steps() of the measured steps; DRAM bytes and hit rates are the differences of
// the snapshots around them.
SimulationDetail steady_state(const schedule::Schedule& schedule, const SimulationRecord& record,
                              int warmup_steps);

}  // namespace fusim::exec

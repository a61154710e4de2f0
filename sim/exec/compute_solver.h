#pragma once
// How a measured op time is split into compute and memory, so that nothing is counted
// twice (used by `fusim profile`'s --profile path and by `fusim calibrate`'s fits).
//
// A measurement times an op in isolation, repeated back to back: every repetition after the
// first finds in the caches what the previous one left there. Its time T holds the op's
// dispatch, its compute and whatever of its memory time the compute did not hide. The
// simulator can produce the memory part itself (caches, DRAM), so the op's compute time is
// defined as the value c for which simulating the op alone, in that same cache state (the
// op run `repeats` times on an empty machine, the last one timed), takes T:
//
//     sim_alone(c) = T.
//
// sim_alone is non-decreasing in c (compute only delays the chunks' pipeline), equals the
// serial part plus the memory-bound time at c = 0 and is at least c + serial, so c lies in
// [0, T]; it is found by regula falsi (Illinois variant) on that bracket, to within
// max(1 ns, 1e-4 T). In a schedule the op then computes for c while the simulated memory
// system decides its memory time in context (cold caches, contention, DRAM): the time the
// isolated op spent waiting for memory is not in c, so it is not counted again. Where even
// c = 0 is slower than T (the model's memory alone exceeds the measurement) c is 0 and
// the result says it is not exact.
#include <cstdint>
#include <vector>

#include "exec/machine.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::exec {

// The schedule that runs op `op` of `schedule` alone, `repeats` times in a row (each copy
// depends on the previous), with the schedule's tensors (so the same addresses).
schedule::Schedule isolated_schedule(const schedule::Schedule& schedule, int op, int repeats);

// Time of the last repetition of `isolated` (isolated_schedule), with every copy computing
// for `compute` (-1: the machine's cost model).
Tick simulate_isolated(const workload::Trace& trace, const schedule::Schedule& isolated,
                       const Machine& machine, const SimOptions& options, Tick compute);

struct SolvedCompute {
  Tick compute = 0;    // c
  Tick simulated = 0;  // sim_alone(c)
  bool exact = true;   // |sim_alone(c) - T| within the tolerance
  // c within twice the tolerance of 0: the simulated memory alone takes (nearly) the
  // measured time, the compute hides under it, and c cannot be told from 0 or from
  // anything else the memory hides (a fit must not take it as the op's compute).
  bool hidden = false;
  int simulations = 0;
};

constexpr int kIsolationRepeats = 2;  // one to warm the caches, one timed

// `rel_tolerance`: the bracket search stops within max(1 ns, rel_tolerance x T) of T
// (calibrate, whose fits are good to a few percent, uses 1e-2 to need fewer simulations).
SolvedCompute solve_compute_time(const workload::Trace& trace, const schedule::Schedule& schedule,
                                 int op, const Machine& machine, const SimOptions& options,
                                 Tick measured, double rel_tolerance = 1e-4);

// The same split for an op measured inside a step: the c for which op `op`, simulated in
// `schedule` as it stands (its step's other ops before and after it, so the cache state and
// contention it met), takes `measured` from its start to its end. `fusim calibrate` measures
// its probes' ops inside their probe's running steps (backend/family_probe.h), where an op
// pays what isolation hides (the allocator, the framework's work between calls, cold code);
// the simulated step gives the memory part of that context, c the rest.
SolvedCompute solve_compute_in_schedule(const workload::Trace& trace,
                                        const schedule::Schedule& schedule, int op,
                                        const Machine& machine, const SimOptions& options,
                                        Tick measured, double rel_tolerance = 1e-4);

// Several ops of one schedule solved together (what calibrate does with a probe's F, Bx and
// Bw): each simulation sets every op's candidate c and advances each op's own bracket by
// its own duration, so the ops cost the simulations of one solve instead of one solve
// each. In a step the ops barely move each other's durations (their cache contents do not
// depend on compute; posted writebacks and overlaps do, a little), and what does move is
// the context each op is then solved in: the other solved ops at their solved c, where the
// one-at-a-time solve left them at the machine's cost model. The result of op ops[i] holds
// for the final c of all: an op the joint brackets leave outside its tolerance (its
// function moved under it) is solved once more alone, the others held at their c.
// `simulations` counts every simulation the op took part in.
std::vector<SolvedCompute> solve_computes_in_schedule(
    const workload::Trace& trace, const schedule::Schedule& schedule, const std::vector<int>& ops,
    const Machine& machine, const SimOptions& options, const std::vector<Tick>& measured,
    double rel_tolerance = 1e-4);

}  // namespace fusim::exec

#pragma once
// When each pass of a pipeline schedule runs (issue 19, point 3): every stage runs its passes
// in the schedule's order (pipeline_order.h), each as soon as the stage is free and what it
// needs has arrived:
//   F(i, c) needs F(i, c-1) from the stage holding model chunk c-1 (plus the p2p time);
//   B(i, c) needs B(i, c+1) likewise, the last chunk its own F(i, c);
//   W(i, c) needs B(i, c) (zero-bubble schedules split the backward into B = Bx and W = Bw).
// The result gives each stage's busy time and bubble, the microbatches whose activations it
// holds at once, its weight versions and gradient delay, from the timeline itself (tests
// compare them with the closed forms).
//
// A stage's bubble is its idle time between its first pass's start and its last pass's end;
// the pipeline's iteration time is the longest such span: the next step's passes follow on
// each stage as its own step ends (for 1F1B, GPipe and interleaved the span of stage 0 is
// the step from first forward to last backward; zero-bubble schedules overlap the staggered
// starts and ends of consecutive steps, Qi et al. 2024, Sec. 3 and Fig. 4).
// Asynchronous schedules (pipedream-2bw, async-1step) have no flush: several steps are timed
// back to back (asynchronous_passes) and each stage's figures are those of its steady-state
// step, from the end of its update of step 1 to the end of its update of step 2.
#include <functional>
#include <vector>

#include "core/time.h"
#include "parallel/pipeline_order.h"

namespace fusim::parallel {

// Costs of one chunk-microbatch's passes. backward: B (the input gradient only, Bx, where
// the schedule splits W off); weight: W, or folded into B where it does not.
struct PassCosts {
  Tick forward = 0, backward = 0, weight = 0;
};

struct TimedPass {
  Pass pass;
  Tick start = 0, end = 0;
};

struct StageTiming {
  std::vector<TimedPass> passes;  // in execution order (asynchronous: the steady-state step)
  Tick first_start = 0, last_end = 0, busy = 0;
  // Most chunk-microbatches whose activations the stage holds at once: from a forward's start
  // to the end of the pass that frees them (B, or W where the schedule splits it off).
  int max_in_flight = 0;
  // Weight versions held at once at most: the newest plus those stashed for the backward of
  // the microbatches in flight (PipeDream-2BW: 2). Gradient delay in steps: how many updates
  // the weights a step's gradient is applied to are ahead of the oldest version its passes
  // read (synchronous schedules 0; PipeDream-2BW 1 on every stage, Narayanan et al. 2021:
  // W(t+1) = W(t) - lr grad f(W(t-1))).
  int weight_versions = 1, gradient_delay = 0;
  Tick span() const { return last_end - first_start; }
  Tick bubble() const { return span() - busy; }
};

struct PipelineTiming {
  std::vector<StageTiming> stages;
  Tick iteration = 0;  // max span over the stages
  int steps = 1;       // steps timed (asynchronous schedules: several, back to back)
  // Bubble of the stage with the longest span over its ideal compute (its busy time):
  // (p-1)/m for GPipe and 1F1B, (p-1)/(v m) interleaved, (p-1)/(3m) ZB-H1 at equal costs.
  double bubble_rate() const;
};

// cost(stage, local chunk) of each pass; p2p: the time from a pass's end to its successor's
// earliest start on another stage (0 on the same stage).
PipelineTiming time_pipeline(const ParallelPlan& plan,
                             const std::function<PassCosts(int stage, int chunk)>& cost,
                             Tick p2p = 0);

}  // namespace fusim::parallel

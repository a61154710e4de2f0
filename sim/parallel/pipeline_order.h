#pragma once
// The order in which one pipeline stage runs the passes of one training step, per schedule:
// which microbatch's forward or backward, on which of its model chunks. Both the memory
// model (stage_memory.h: what is held when) and a multi-device executor (issue 19: when it
// runs) read the same order.
#include <string>
#include <vector>

#include "parallel/plan.h"

namespace fusim::parallel {

// F: forward of one chunk-microbatch; B: its backward (zero-bubble schedules: the input
// gradient only, Bx); W: the weight gradient, separate in zero-bubble schedules only.
enum class PassKind { F, B, W };

struct Pass {
  PassKind kind = PassKind::F;
  int microbatch = 0;
  int chunk = 0;  // local chunk on the stage, 0..v-1
  bool operator==(const Pass& o) const {
    return kind == o.kind && microbatch == o.microbatch && chunk == o.chunk;
  }
};

// Whether the schedule splits backward into B and W passes (zb-h1, zb-h2, zb-v).
bool splits_weight_gradient(PipelineSchedule schedule);

// The passes of stage `stage` in execution order, for plan.microbatches() microbatches:
//  gpipe        F0..F(m-1), B0..B(m-1);
//  1f1b         warm-up min(p-s-1, m) forwards, then F/B pairs, then the remaining backwards
//               (Megatron-LM forward_backward_pipelining_without_interleaving);
//  interleaved  Megatron-LM forward_backward_pipelining_with_interleaving: warm-up
//               (p-s-1)*2 + (v-1)*p chunk-microbatches (all of them when m == p), the k-th
//               forward on chunk (k mod pv) / p of microbatch (k / pv) p + k mod p, backwards
//               on chunk v-1-(k mod pv)/p;
//  zb-h1        1f1b's warm-up and pairs, each B followed by the W of microbatch i - s
//               (stage s delays its W passes by s: every stage holds p microbatches, Qi et al.
//               2024 Sec. 2.1), the delayed W passes last;
//  zb-h2        a unit-time list schedule (below) holding at most 2p - 1 microbatches per
//               stage (Qi et al. 2024 Sec. 2.2: ZB-H2's peak (2p - 1) M_B), whose extra
//               forwards and deferred W passes fill warm-up and cool-down: no bubble;
//  zb-v         two chunks per stage in a V (chunk s and 2p-1-s), Qi et al. 2024 Sec. 6's
//               handcrafted order as PyTorch's ScheduleZBVZeroBubble builds it: no bubble
//               once m >= 2p - 1, at 1F1B's memory (2p chunk-microbatches of half a stage).
// pipedream-2bw and async-1step order one step's passes as 1f1b; asynchronous_passes gives
// several steps without a flush (their weight versions are not passes: pipeline_timing.h).
std::vector<Pass> stage_passes(const ParallelPlan& plan, int stage);

// Whether the schedule runs steps without a flush (pipedream-2bw, async-1step).
bool is_asynchronous(PipelineSchedule schedule);

// The passes of `steps` consecutive steps of an asynchronous schedule: 1F1B over steps x m
// microbatches, microbatch j of step j / m, so each stage starts the next step's forwards
// while the previous step's backwards drain (PipeDream-2BW, Narayanan et al. 2021).
std::vector<Pass> asynchronous_passes(const ParallelPlan& plan, int stage, int steps);

std::string to_string(const Pass& pass);  // kind microbatch.chunk: "F3.0", "B3.1", "W0.0"

}  // namespace fusim::parallel

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
//  zb-v         two chunks per stage in a V (chunk s and 2p-1-s): a unit-time list schedule
//               where each stage runs a ready B first, else a ready F while it holds fewer
//               than 2p chunk-microbatches (ZB-V's 1F1B memory, Qi et al. 2024 Sec. 6),
//               else its oldest W.
// pipedream-2bw and async-1step order passes as 1f1b (their weight versions are not passes).
std::vector<Pass> stage_passes(const ParallelPlan& plan, int stage);

std::string to_string(const Pass& pass);  // kind microbatch.chunk: "F3.0", "B3.1", "W0.0"

}  // namespace fusim::parallel

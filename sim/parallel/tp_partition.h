#pragma once
// Megatron-LM's tensor-parallel partition of a trace (Shoeybi et al. 2019, Sec. 3; Korthikanti
// et al. 2022, Sec. 4.2), inferred from the layer graph rather than from names:
//  - a linear whose input is replicated is column-parallel: weight rows (and bias) split,
//    output split over the tp ranks (q, k, v, fc1, the LM head);
//  - a linear whose input is split is row-parallel: weight columns split, bias replicated,
//    output replicated by an all-reduce (a reduce-scatter with sequence parallelism);
//  - attention, RoPE and elementwise ops keep their inputs' split (heads, MLP columns);
//  - the embedding whose rows are the vocabulary (the logits' width) is vocabulary-parallel,
//    its output replicated; cross-entropy on split logits is vocabulary-parallel;
//  - everything else (norms, residual adds, position embeddings, convolutions, pools) is
//    replicated; with sequence parallelism its activations are split along the sequence.
// Transformer blocks are runs of layers named <stem>.<i>.<part> with i = 0, 1, 2, ...
#include <cstdint>
#include <string>
#include <vector>

#include "parallel/plan.h"
#include "workload/trace.h"

namespace fusim::parallel {

struct TransformerBlock {
  std::string prefix;       // "layers.3."
  int first = 0, last = 0;  // trace layer positions, inclusive (contiguous in trace order)
};
// The blocks of a trace: the longest run of consecutive layers named <stem>.<i>.<part>, one
// block per i, i counting up from 0. Empty when there is none.
std::vector<TransformerBlock> transformer_blocks(const workload::Trace& trace);

// The first trace layer of each of the plan's model chunks: chunk 0 from layer 0 (the
// embedding), chunk k from the first layer of its first block (blocks_per_chunk); the last
// chunk runs to the loss.
std::vector<int> chunk_first_layers(const workload::Trace& trace, const ParallelPlan& plan);

struct TpPartition {
  std::vector<bool> output_split;              // per layer: output split over tp ranks
  std::vector<std::vector<bool>> param_split;  // per layer, per param
  std::vector<int> replicated_params;          // layers with params that stay whole
};
TpPartition tp_partition(const workload::Trace& trace);

// The facts validate_plan checks, from the trace: blocks, attention heads, the sequence
// length (the data input's dim 1 for token inputs), the vocabulary, column-parallel widths.
ModelFacts model_facts(const workload::Trace& trace);

}  // namespace fusim::parallel

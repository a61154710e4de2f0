#pragma once
// A parallel plan: how one training step is split over GPUs (issue 20's `fusim memory`, and
// issue 19's multi-device executor, with the same option names). Typed, parsed once from the
// command line's values (PlanArgs) and checked against the model (ModelFacts) with one-line
// reasons (InputError, exit code 2).
//
//   tp  tensor parallel (Megatron-LM: heads and MLP columns split, Shoeybi et al. 2019)
//   pp  pipeline stages, each holding pp * v consecutive chunks of transformer blocks
//   dp  data parallel replicas (gradients all-reduced, or reduce-scattered with the
//       distributed optimizer)
//   cp  context parallel: the sequence split over cp ranks (ring attention)
// GPUs = tp * pp * dp * cp; microbatches per pipeline per step m = G / (b * dp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusim::parallel {

enum class PipelineSchedule {
  GPipe,         // all forwards, then all backwards (Huang et al. 2019)
  OneFOneB,      // PipeDream-Flush (Narayanan et al. 2021): warm-up, 1F1B, cool-down
  Interleaved,   // Megatron-LM's interleaved 1F1B over v chunks per stage (Narayanan 2021)
  ZbH1,          // zero bubble, 1F1B memory (Qi et al. 2024, ICLR, Sec. 2.1)
  ZbH2,          // zero bubble, more warm-up forwards (Qi et al. 2024, Sec. 2.2)
  ZbV,           // zero bubble, 2 chunks per stage in a V (Qi et al. 2024, Sec. 6)
  PipeDream2BW,  // asynchronous, two weight versions (Narayanan et al. 2021, ICML)
  AsyncOneStep,  // asynchronous 1F1B without a weight stash: one version, gradients at most
                 // one step late (Zmushko et al. 2026's one-step delay; issue 19)
};
std::string_view to_string(PipelineSchedule schedule);  // "gpipe", "1f1b", "interleaved", ...
std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view name);
std::string pipeline_schedule_names();  // "gpipe, 1f1b, ..." for help texts and errors

// Activation recomputation (Korthikanti et al. 2022): none; selective: the attention core
// (q k^T, softmax, dropout, x v) is recomputed in backward; full: only each transformer
// block's input is kept and the block's forward reruns before its backward.
enum class Recompute { None, Selective, Full };
std::string_view to_string(Recompute recompute);
std::optional<Recompute> parse_recompute(std::string_view name);

struct ParallelPlan {
  int tp = 1, pp = 1, dp = 1, cp = 1;
  std::int64_t microbatch = 1;    // b: sequences per microbatch
  std::int64_t global_batch = 1;  // G: sequences per optimizer step over all replicas
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int virtual_stages = 1;  // v: model chunks per stage (interleaved; 2 for zb-v)
  Recompute recompute = Recompute::None;
  bool sequence_parallel = false;      // Korthikanti et al. 2022: LN/dropout split along s
  bool distributed_optimizer = false;  // ZeRO-1: optimizer state split over dp * cp ranks
  std::int64_t bucket_size = 0;        // issue 19: DP gradient bucket bytes (0: its default)
  std::vector<int> stage_layers;       // issue 19: explicit blocks per stage (empty: balanced)

  int gpus() const { return tp * pp * dp * cp; }
  std::int64_t microbatches() const { return global_batch / (microbatch * dp); }  // m
  int chunks() const { return pp * virtual_stages; }  // model chunks in the pipeline
  // Ranks the distributed optimizer shards over: Megatron-core's data-parallel group with
  // context parallelism (parallel_state: data_parallel_group(with_context_parallel=True)).
  int optimizer_shards() const { return distributed_optimizer ? dp * cp : 1; }
};

// The command line's values, as given (names of enums as strings); 0 / "" where not given.
struct PlanArgs {
  int tp = 1, pp = 1, dp = 1, cp = 1;
  std::int64_t microbatch = 1, global_batch = 0;  // 0: microbatch * dp (one microbatch)
  std::string schedule = "1f1b";
  int virtual_stages = 0;  // 0: 1, or 2 for zb-v
  std::string recompute = "none";
  bool sequence_parallel = false, distributed_optimizer = false;
  std::int64_t bucket_size = 0;
  std::vector<int> stage_layers;
};

// Parses and checks what needs no model: positive sizes, known names, G a multiple of b * dp,
// v only with interleaved (>= 2) or zb-v (= 2), interleaved's m a multiple of pp (Megatron-LM
// schedules.py asserts it), --sequence-parallel only with --tp > 1. Throws InputError naming
// the option.
ParallelPlan parse_plan(const PlanArgs& args);

// What the plan must divide: read from a trace by model_facts (tp_partition.h).
struct ModelFacts {
  std::string model;
  int blocks = 0;                        // recognised transformer blocks
  std::int64_t heads = 0, kv_heads = 0;  // of the blocks' attention (0: none)
  std::int64_t seq = 0;                  // sequence length (0: not a sequence model)
  std::int64_t vocab = 0;                // rows of the vocabulary-parallel embedding / logits width
  std::vector<std::int64_t> split_widths;  // output widths of the column-parallel linears
};

// Checks the plan against the model: heads and kv_heads divisible by tp (Megatron-core:
// num_query_groups % tp == 0), blocks by pp * v (or --stage-layers summing to them), the
// vocabulary and every column-parallel width by tp, seq by tp with sequence parallelism and
// by 2 * cp with context parallelism (Megatron's load-balanced CP split). InputError.
void validate_plan(const ParallelPlan& plan, const ModelFacts& facts);

// Blocks of each of the pp * v model chunks (chunk k = stage k % pp, local chunk k / pp for
// interleaved; zb-v: chunk k on stage k for k < pp, else 2pp - 1 - k), balanced or from
// stage_layers.
std::vector<int> blocks_per_chunk(const ParallelPlan& plan, int blocks);

// The stage holding model chunk k and the chunk's index on that stage (0..v-1).
int stage_of_chunk(const ParallelPlan& plan, int chunk);
int local_chunk(const ParallelPlan& plan, int chunk);
int model_chunk(const ParallelPlan& plan, int stage, int local);  // inverse

// Microbatches whose activations stage `stage` holds at once at most, in units of a whole
// stage's microbatch (a chunk-microbatch counts 1/v), from the schedule's pass order
// (pipeline_order.h): 1f1b min(m, pp - s), gpipe m, interleaved on stage 0
// pp (1 + (pp - 1) / (pp v)) (Korthikanti et al. 2022, Sec. 4.2.3), zb-h2 2 pp - 1.
double in_flight_microbatches(const ParallelPlan& plan, int stage);

}  // namespace fusim::parallel

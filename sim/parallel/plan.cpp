#include "parallel/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "parallel/pipeline_order.h"

namespace fusim::parallel {
namespace {
constexpr std::array<std::pair<PipelineSchedule, std::string_view>, 8> kSchedules{{
    {PipelineSchedule::GPipe, "gpipe"},
    {PipelineSchedule::OneFOneB, "1f1b"},
    {PipelineSchedule::Interleaved, "interleaved"},
    {PipelineSchedule::ZbH1, "zb-h1"},
    {PipelineSchedule::ZbH2, "zb-h2"},
    {PipelineSchedule::ZbV, "zb-v"},
    {PipelineSchedule::PipeDream2BW, "pipedream-2bw"},
    {PipelineSchedule::AsyncOneStep, "async-1step"},
}};
constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecompute{{
    {Recompute::None, "none"},
    {Recompute::Selective, "selective"},
    {Recompute::Full, "full"},
}};

[[noreturn]] void bad(const std::string& option, const std::string& expected) {
  throw InputError(fmt::format("{}: expected {}", option, expected));
}

void positive(const char* option, std::int64_t value) {
  if (value < 1) bad(option, fmt::format("a positive integer, got {}", value));
}
}  // namespace

std::string_view to_string(PipelineSchedule schedule) {
  for (auto& [s, n] : kSchedules)
    if (s == schedule) return n;
  return "?";
}

std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view name) {
  for (auto& [s, n] : kSchedules)
    if (n == name) return s;
  return std::nullopt;
}

std::string pipeline_schedule_names() {
  std::vector<std::string_view> names;
  for (auto& [s, n] : kSchedules) names.push_back(n);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string_view to_string(Recompute recompute) {
  for (auto& [r, n] : kRecompute)
    if (r == recompute) return n;
  return "?";
}

std::optional<Recompute> parse_recompute(std::string_view name) {
  for (auto& [r, n] : kRecompute)
    if (n == name) return r;
  return std::nullopt;
}

ParallelPlan parse_plan(const PlanArgs& a) {
  ParallelPlan plan;
  positive("--tp", a.tp);
  positive("--pp", a.pp);
  positive("--dp", a.dp);
  positive("--cp", a.cp);
  positive("--microbatch", a.microbatch);
  plan.tp = a.tp;
  plan.pp = a.pp;
  plan.dp = a.dp;
  plan.cp = a.cp;
  plan.microbatch = a.microbatch;
  plan.global_batch = a.global_batch == 0 ? a.microbatch * a.dp : a.global_batch;
  if (plan.global_batch < 1 || plan.global_batch % (plan.microbatch * plan.dp) != 0)
    bad("--global-batch",
        fmt::format("a multiple of --microbatch x --dp = {} x {} = {}, got {}", plan.microbatch,
                    plan.dp, plan.microbatch * plan.dp, plan.global_batch));
  auto schedule = parse_pipeline_schedule(a.schedule);
  if (!schedule)
    bad("--pipeline-schedule",
        fmt::format("one of {}, got \"{}\"", pipeline_schedule_names(), a.schedule));
  plan.schedule = *schedule;
  auto recompute = parse_recompute(a.recompute);
  if (!recompute)
    bad("--recompute", fmt::format("none, selective or full, got \"{}\"", a.recompute));
  plan.recompute = *recompute;
  const bool zbv = plan.schedule == PipelineSchedule::ZbV;
  const bool inter = plan.schedule == PipelineSchedule::Interleaved;
  plan.virtual_stages = a.virtual_stages != 0 ? a.virtual_stages : zbv ? 2 : 1;
  positive("--virtual-stages", plan.virtual_stages);
  if (zbv && plan.virtual_stages != 2)
    bad("--virtual-stages",
        fmt::format("2 for zb-v (two chunks per stage), got {}", plan.virtual_stages));
  if (inter && plan.virtual_stages < 2)
    bad("--virtual-stages", fmt::format("at least 2 for the interleaved schedule (model chunks "
                                        "per stage; 1 is 1f1b), got {}",
                                        plan.virtual_stages));
  if (!inter && !zbv && plan.virtual_stages != 1)
    bad("--virtual-stages", fmt::format("1 for {} (only interleaved and zb-v have several "
                                        "chunks per stage), got {}",
                                        to_string(plan.schedule), plan.virtual_stages));
  if (inter && plan.pp < 2)
    bad("--pp", fmt::format("at least 2 for the interleaved schedule, got {}", plan.pp));
  // Megatron-LM schedules.py, forward_backward_pipelining_with_interleaving: "number of
  // microbatches ... is not divisible by pipeline-model-parallel-size".
  if (inter && plan.microbatches() % plan.pp != 0)
    bad("--global-batch", fmt::format("microbatches per pipeline G / (b x dp) = {} a multiple of "
                                      "--pp {} for the interleaved schedule (Megatron-LM's rule)",
                                      plan.microbatches(), plan.pp));
  plan.sequence_parallel = a.sequence_parallel;
  if (plan.sequence_parallel && plan.tp < 2)
    bad("--sequence-parallel",
        "--tp > 1 (sequence parallelism splits the tensor-parallel "
        "group's replicated activations), got --tp 1");
  plan.distributed_optimizer = a.distributed_optimizer;
  if (a.bucket_size < 0) bad("--bucket-size", fmt::format("bytes >= 0, got {}", a.bucket_size));
  plan.bucket_size = a.bucket_size;
  plan.stage_layers = a.stage_layers;
  if (!plan.stage_layers.empty()) {
    if (int(plan.stage_layers.size()) != plan.pp)
      bad("--stage-layers", fmt::format("{} counts (one per stage of --pp), got {}", plan.pp,
                                        plan.stage_layers.size()));
    if (plan.virtual_stages != 1)
      bad("--stage-layers", "a plan with one chunk per stage (not interleaved or zb-v)");
    for (int n : plan.stage_layers)
      if (n < 1) bad("--stage-layers", fmt::format("positive counts, got {}", n));
  }
  return plan;
}

void validate_plan(const ParallelPlan& plan, const ModelFacts& f) {
  const int t = plan.tp;
  if (t > 1 && f.heads > 0 && f.heads % t != 0)
    bad("--tp",
        fmt::format("a divisor of the {} attention heads of {}, got {}", f.heads, f.model, t));
  // Megatron-core (transformer_config.py): num_query_groups must be divisible by tp.
  if (t > 1 && f.kv_heads > 0 && f.kv_heads % t != 0)
    bad("--tp", fmt::format("a divisor of the {} key/value heads of {} (Megatron-core splits "
                            "query groups over tp), got {}",
                            f.kv_heads, f.model, t));
  if (t > 1 && f.vocab > 0 && f.vocab % t != 0)
    bad("--tp", fmt::format("a divisor of the vocabulary {} of {} (vocabulary-parallel "
                            "embedding; pad --vocab as Megatron does), got {}",
                            f.vocab, f.model, t));
  for (auto width : f.split_widths)
    if (t > 1 && width % t != 0)
      bad("--tp", fmt::format("a divisor of the column-parallel width {} of {}, got {}", width,
                              f.model, t));
  const int chunks = plan.chunks();
  if (plan.pp > 1 || plan.virtual_stages > 1) {
    if (f.blocks == 0)
      bad("--pp", fmt::format("1 for {}: it has no transformer blocks (layers named "
                              "<stem>.<i>.<part>) to split into stages, got {}",
                              f.model, plan.pp));
    if (!plan.stage_layers.empty()) {
      int sum = std::accumulate(plan.stage_layers.begin(), plan.stage_layers.end(), 0);
      if (sum != f.blocks)
        bad("--stage-layers", fmt::format("counts summing to the {} transformer blocks of {}, "
                                          "got {}",
                                          f.blocks, f.model, sum));
    } else if (f.blocks % chunks != 0) {
      bad("--pp", fmt::format("the {} transformer blocks of {} to split evenly over --pp x "
                              "--virtual-stages = {} chunks, got --pp {}{}",
                              f.blocks, f.model, chunks, plan.pp,
                              plan.virtual_stages > 1
                                  ? fmt::format(" --virtual-stages {}", plan.virtual_stages)
                                  : ""));
    }
  }
  if (plan.sequence_parallel && f.seq > 0 && f.seq % t != 0)
    bad("--sequence-parallel",
        fmt::format("a sequence length {} of {} divisible by --tp {}", f.seq, f.model, t));
  // Megatron-core context parallelism splits the sequence into 2 cp chunks (load balance of
  // causal attention): seq % (2 cp) == 0.
  if (plan.cp > 1) {
    if (f.seq == 0)
      bad("--cp",
          fmt::format("1 for {}: it has no sequence dimension to split, got {}", f.model, plan.cp));
    if (f.seq % (2 * plan.cp) != 0)
      bad("--cp", fmt::format("a cp with the sequence length {} of {} divisible by 2 x cp, got {}",
                              f.seq, f.model, plan.cp));
    if (plan.sequence_parallel && (f.seq / plan.cp) % t != 0)
      bad("--sequence-parallel",
          fmt::format("a sequence chunk seq/cp = {} divisible by --tp {}", f.seq / plan.cp, t));
  }
}

std::vector<int> blocks_per_chunk(const ParallelPlan& plan, int blocks) {
  if (!plan.stage_layers.empty()) return plan.stage_layers;
  const int chunks = plan.chunks();
  return std::vector<int>(std::size_t(chunks), blocks / chunks);
}

int stage_of_chunk(const ParallelPlan& plan, int chunk) {
  if (plan.schedule == PipelineSchedule::ZbV)
    return chunk < plan.pp ? chunk : 2 * plan.pp - 1 - chunk;
  return chunk % plan.pp;
}

int local_chunk(const ParallelPlan& plan, int chunk) {
  if (plan.schedule == PipelineSchedule::ZbV) return chunk < plan.pp ? 0 : 1;
  return chunk / plan.pp;
}

int model_chunk(const ParallelPlan& plan, int stage, int local) {
  if (plan.schedule == PipelineSchedule::ZbV) return local == 0 ? stage : 2 * plan.pp - 1 - stage;
  return local * plan.pp + stage;
}

double in_flight_microbatches(const ParallelPlan& plan, int stage) {
  int held = 0, most = 0;
  const bool split = splits_weight_gradient(plan.schedule);
  for (const Pass& pass : stage_passes(plan, stage)) {
    if (pass.kind == PassKind::F) most = std::max(most, ++held);
    // A chunk-microbatch is released by its last backward pass (W where it is separate).
    if (pass.kind == (split ? PassKind::W : PassKind::B)) --held;
  }
  return double(most) / plan.virtual_stages;
}

}  // namespace fusim::parallel

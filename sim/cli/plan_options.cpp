#include "cli/plan_options.h"

#include "cli/option_checks.h"
#include "parallel/interconnect.h"

namespace fusim::cli {

void add_plan_options(CLI::App* cmd, parallel::PlanArgs& a) {
  cmd->add_option("--tp", a.tp, "Tensor-parallel ranks (Megatron-LM: heads and MLP split)")
      ->capture_default_str();
  cmd->add_option("--pp", a.pp, "Pipeline stages")->capture_default_str();
  cmd->add_option("--dp", a.dp, "Data-parallel replicas")->capture_default_str();
  cmd->add_option("--cp", a.cp, "Context-parallel ranks (the sequence split, ring attention)")
      ->capture_default_str();
  cmd->add_option("--microbatch", a.microbatch, "Sequences per microbatch (b)");
  cmd->add_option("--global-batch", a.global_batch,
                  "Sequences per optimizer step over all replicas (G; default b x dp: one\n"
                  "microbatch per step); microbatches per pipeline m = G / (b x dp)")
      ->check(positive_int());
  cmd->add_option("--pipeline-schedule", a.schedule,
                  "One of: " + parallel::pipeline_schedule_names())
      ->capture_default_str();
  cmd->add_option("--virtual-stages", a.virtual_stages,
                  "Model chunks per stage (interleaved: >= 2; zb-v: 2, the default)")
      ->check(positive_int());
  cmd->add_option("--recompute", a.recompute,
                  "none | selective (the attention core) | full (each block's input kept)")
      ->capture_default_str();
  cmd->add_flag("--sequence-parallel", a.sequence_parallel,
                "Split the tensor-parallel group's replicated activations along the sequence");
  cmd->add_flag("--distributed-optimizer", a.distributed_optimizer,
                "Shard master weights and optimizer state over dp x cp ranks (ZeRO-1)");
}

void add_cluster_options(CLI::App* cmd, parallel::PlanArgs& a, std::string& cluster) {
  cmd->add_option("--bucket-size", a.bucket_size,
                  "Data-parallel gradient bucket in bytes (0: one bucket per stage)");
  cmd->add_option("--stage-layers", a.stage_layers,
                  "Transformer blocks per pipeline stage, comma-separated (default: balanced)")
      ->delimiter(',');
  cmd->add_option("--cluster", cluster,
                  "Cluster preset: " + parallel::cluster_presets() +
                      " (GPUs, NVLink within a node, one NIC per GPU)");
}

bool plan_requested(const CLI::App& cmd) {
  for (const char* name :
       {"--tp", "--pp", "--dp", "--cp", "--microbatch", "--global-batch", "--pipeline-schedule",
        "--virtual-stages", "--recompute", "--sequence-parallel", "--distributed-optimizer",
        "--bucket-size", "--stage-layers", "--cluster"})
    if (cmd.count(name) > 0) return true;
  return false;
}

}  // namespace fusim::cli

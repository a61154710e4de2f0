#include "parallel/parallel_schedule.h"

#include <fmt/format.h>

#include "core/error.h"
#include "parallel/pipeline_timing.h"
#include "parallel/tp_partition.h"

namespace fusim::parallel {
namespace {
std::string gib(std::int64_t bytes) {
  return fmt::format("{:.1f} GiB", double(bytes) / double(std::int64_t{1} << 30));
}

}  // namespace

ParallelSchedule plan_schedule(const workload::Trace& trace, MemoryQuery query,
                               const ClusterSpec& cluster) {
  const ParallelPlan& plan = query.plan;
  const int g = cluster.gpus_per_node;
  if (plan.gpus() > g && plan.gpus() % g != 0)
    throw InputError(fmt::format(
        "--cluster {}: expected a GPU count (tp x pp x dp x cp) that fills whole nodes of {}, "
        "got {}",
        cluster.name, g, plan.gpus()));
  if (plan.tp > g)
    throw InputError(
        fmt::format("--tp: expected at most the {} GPUs of a {} node (the tensor-parallel group's "
                    "all-reduces run on NVLink), got {}",
                    g, cluster.name, plan.tp));
  query.gpu_memory = gpu_memory_bytes(cluster.gpu);
  ParallelSchedule out;
  out.plan = plan;
  out.cluster = std::string(cluster.name);
  out.nodes = (plan.gpus() + g - 1) / g;
  out.memory = estimate_memory(trace, query);  // validates the plan against the model
  for (const auto& m : out.memory.stages)
    if (m.total > query.gpu_memory)
      throw InputError(fmt::format(
          "--cluster {}: stage {} needs {} per GPU, more than the {} of its {} (fusim memory "
          "breaks it down)",
          cluster.name, m.stage, gib(m.total), gib(query.gpu_memory), cluster.gpu));

  const PipelineTiming unit = time_pipeline(plan, [&](int, int) {
    const Tick t = kTicksPerUs / plan.virtual_stages;
    return PassCosts{t, t, t};
  });
  out.unit_bubble_rate = unit.bubble_rate();
  const auto starts = chunk_first_layers(trace, plan);
  const GroupShape dp = group_shape(plan.dp * plan.cp, plan.tp, g);
  for (int s = 0; s < plan.pp; ++s) {
    StageSchedule st;
    st.stage = s;
    st.passes = stage_passes(plan, s);
    st.max_in_flight = unit.stages[std::size_t(s)].max_in_flight;
    st.weight_versions = unit.stages[std::size_t(s)].weight_versions;
    st.gradient_delay = unit.stages[std::size_t(s)].gradient_delay;
    st.memory = out.memory.stages[std::size_t(s)];
    const int first = model_chunk(plan, s, 0), last = model_chunk(plan, s, plan.virtual_stages - 1);
    st.first_layer = trace.layers[std::size_t(starts[std::size_t(first)])].name;
    const int end =
        last + 1 < int(starts.size()) ? starts[std::size_t(last) + 1] : int(trace.layers.size());
    st.last_layer = trace.layers[std::size_t(end - 1)].name;
    st.reduced_bytes = st.memory.grad_buffer;
    if (plan.distributed_optimizer) {
      st.grad_reduction = collective_time(Collective::ReduceScatter, dp, st.reduced_bytes, cluster);
      st.gathered_bytes = st.memory.weights;
      st.weight_gather = collective_time(Collective::AllGather, dp, st.gathered_bytes, cluster);
    } else {
      st.grad_reduction = collective_time(Collective::AllReduce, dp, st.reduced_bytes, cluster);
    }
    out.stages.push_back(std::move(st));
  }
  return out;
}

}  // namespace fusim::parallel

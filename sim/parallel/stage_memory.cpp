#include "parallel/stage_memory.h"

#include <cctype>

#include <fmt/format.h>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/units.h"
#include "parallel/chunk_profile.h"
#include "parallel/pipeline_order.h"
#include "parallel/pipeline_timing.h"
#include "parallel/tp_partition.h"
#include "schedule/allocator.h"
#include "workload/cost.h"

namespace fusim::parallel {
namespace {
using schedule::GradBuffer;
using schedule::Ordering;
using schedule::TensorCategory;

// Datasheet capacities: V100 SXM2 32 GB, A100 SXM4 40/80 GB (HBM2e stacks of 8/16 GiB), H100
// SXM5 80 GB (5 HBM3 stacks of 16 GiB), H200 141 GB HBM3e (NVIDIA H200 datasheet); counted
// in GiB as nvidia-smi reports the 80 GB parts (81559 MiB usable on an H100: the CUDA context
// and the driver's reserve come out of the 20% margin of the 80% rule).
constexpr std::array<std::pair<std::string_view, std::int64_t>, 5> kGpus{{
    {"v100-sxm2", std::int64_t{32} << 30},
    {"a100-sxm4-40gb", std::int64_t{40} << 30},
    {"a100-sxm4-80gb", std::int64_t{80} << 30},
    {"h100-sxm5", std::int64_t{80} << 30},
    {"h200", std::int64_t{141} << 30},
}};

// Constant buffers of one GPU: Megatron's global memory buffer for the all-gathered input of
// a column-parallel linear under sequence parallelism (tensor_parallel/layers.py,
// get_global_memory_buffer), sized by the largest such input; with context parallelism,
// Transformer Engine's ring attention double-buffers the K and V chunk it passes on
// (AttnFuncWithCPAndKVP2P: two p2p buffers).
std::int64_t collective_buffers(const workload::Trace& trace, const ParallelPlan& plan) {
  const TpPartition tp = tp_partition(trace);
  std::int64_t gather = 0, ring = 0;
  for (std::size_t i = 0; i < trace.layers.size(); ++i) {
    const auto& l = trace.layers[i];
    if (plan.sequence_parallel && l.op == workload::OpKind::Linear && tp.output_split[i]) {
      const auto& in = workload::input_shape(trace, l.inputs[0]);
      const auto dt = workload::input_dtype(trace, l.inputs[0]);
      gather = std::max(gather, workload::numel(in) * workload::dtype_bytes(dt) / plan.cp);
    }
    if (plan.cp > 1 && l.op == workload::OpKind::ScaledDotProductAttention) {
      std::int64_t kv = 0;
      for (int k : {1, 2})
        kv += workload::numel(workload::input_shape(trace, l.inputs[std::size_t(k)])) *
              workload::dtype_bytes(workload::input_dtype(trace, l.inputs[std::size_t(k)]));
      const std::int64_t split = tp.output_split[i] ? plan.tp : 1;
      ring = std::max(ring, 2 * kv / (plan.cp * split));
    }
  }
  auto rounded = [](std::int64_t b) {
    return b > 0 ? schedule::CachingAllocator::round_size(b) : 0;
  };
  return rounded(gather) + rounded(ring);
}

// The live tensors of a stage at its peak, in allocation order, for segment_overhead.
std::vector<std::int64_t> peak_allocations(const ChunkProfiler& p, const ParallelPlan& plan,
                                           int stage, const StageMemory& m) {
  std::set<int> persistent;
  std::vector<int> chunks;
  for (int l = 0; l < plan.virtual_stages; ++l) {
    chunks.push_back(model_chunk(plan, stage, l));
    for (int id : p.persistent_tensors(chunks.back())) persistent.insert(id);
  }
  std::vector<std::int64_t> sizes;
  for (int id : persistent) sizes.push_back(p.device_bytes(id));
  std::vector<std::int64_t> saved;  // one microbatch through each of the stage's chunks
  for (int c : chunks)
    for (auto [tensor, bytes] : p.saved_tensors(c)) saved.push_back(bytes);
  const int in_flight = int(std::ceil(m.in_flight));
  for (int k = 0; k < in_flight; ++k) sizes.insert(sizes.end(), saved.begin(), saved.end());
  return sizes;
}

// The chunk profiles' passes by (chunk, updates, grad change, fused): they do not depend on
// the ordering, so the walks of a plan's orderings share them (memory --search).
using PassCache = std::map<std::tuple<int, bool, int, bool>, ChunkPasses>;

// Replays one stage's passes over the chunk profiles: the live bytes by category at the
// stage's highest point.
class StageWalk {
 public:
  StageWalk(const ChunkProfiler& profiler, const ParallelPlan& plan, Ordering ordering,
            GradBuffer grads, PassCache& cache)
      : p_(profiler),
        cache_(cache),
        plan_(plan),
        ordering_(ordering),
        persistent_grads_(grads == GradBuffer::Persistent) {}

  CategoryBytes run(int stage) {
    const int v = plan_.virtual_stages, m = int(plan_.microbatches());
    std::vector<int> chunks;
    std::set<int> persistent;
    for (int l = 0; l < v; ++l) {
      chunks.push_back(model_chunk(plan_, stage, l));
      for (int id : p_.persistent_tensors(chunks.back())) persistent.insert(id);
    }
    // Persistent tensors of the stage, deduplicated over its chunks.
    CategoryBytes base = persistent_bytes(persistent);
    // Grads live at the step's start: a persistent buffer; forward-fused: the previous
    // step's, until their update before the first forward.
    std::vector<bool> live(std::size_t(v),
                           persistent_grads_ || ordering_ == Ordering::ForwardFused);
    for (int l = 0; l < v; ++l)
      if (live[std::size_t(l)])
        base[TensorCategory::Grads] += p_.grad_bytes(chunks[std::size_t(l)]);
    top_ = base;
    std::vector<int> forwards(std::size_t(v), 0), grad_passes(std::size_t(v), 0);
    const bool split = splits_weight_gradient(plan_.schedule);
    const bool bwd_fused = ordering_ == Ordering::BackwardFused;
    for (const Pass& pass : stage_passes(plan_, stage)) {
      const int l = pass.chunk, c = chunks[std::size_t(l)];
      if (pass.kind == PassKind::F) {
        const bool updates = ordering_ == Ordering::ForwardFused &&
                             forwards[std::size_t(l)]++ == 0 && !persistent_grads_;
        apply(base, profile(c, updates, GradChange::Present, false).forward);
        if (updates) live[std::size_t(l)] = false;
        continue;
      }
      // The pass that writes the grads: B, or W where the schedule splits them off.
      const bool writes_grads = split ? pass.kind == PassKind::W : true;
      GradChange change = GradChange::Present;
      bool fused = false;
      if (writes_grads) {
        const int k = grad_passes[std::size_t(l)]++;
        const bool first = k == 0, last = k == m - 1;
        if (!persistent_grads_) {
          if (bwd_fused && last) {
            change = first ? GradChange::AllocFree : GradChange::Free;
            fused = true;
          } else if (first) {
            change = GradChange::Alloc;
          }
        }
        if (change == GradChange::Alloc) live[std::size_t(l)] = true;
        if (change == GradChange::Free || change == GradChange::AllocFree)
          live[std::size_t(l)] = false;
      }
      const ChunkPasses& r = profile(c, false, change, fused);
      apply(base, pass.kind == PassKind::W ? r.weight : r.backward);
    }
    // Eager: the optimizer step after the last backward (grads freed after their update
    // unless persistent).
    if (ordering_ == Ordering::Eager)
      for (int l = 0; l < v; ++l)
        apply(base, p_.optimizer_step(chunks[std::size_t(l)], !persistent_grads_));
    return top_;
  }

 private:
  CategoryBytes persistent_bytes(const std::set<int>& ids) const {
    CategoryBytes b;
    for (int id : ids) b[p_.category(id)] += p_.device_bytes(id);
    return b;
  }
  void apply(CategoryBytes& base, const PhaseBytes& phase) {
    CategoryBytes high = base + phase.peak;
    if (high.total() > top_.total()) top_ = high;
    base += phase.end;
  }
  const ChunkPasses& profile(int chunk, bool updates, GradChange change, bool fused) {
    auto key = std::make_tuple(chunk, updates, int(change), fused);
    auto it = cache_.find(key);
    if (it == cache_.end())
      it = cache_.emplace(key, p_.passes(chunk, updates, change, fused)).first;
    return it->second;
  }

  const ChunkProfiler& p_;
  PassCache& cache_;
  const ParallelPlan& plan_;
  Ordering ordering_;
  bool persistent_grads_;
  CategoryBytes top_;
};

}  // namespace

std::int64_t segment_overhead(const std::vector<std::int64_t>& sizes) {
  schedule::CachingAllocator allocator;
  std::int64_t held = 0;
  for (auto b : sizes) {
    if (b <= 0) continue;
    allocator.allocate(b, 0);
    held += b;
  }
  return allocator.reserved() - held;
}

double MemoryReport::headroom() const {
  return gpu_memory > 0 ? 1.0 - double(max_total) / double(gpu_memory) : 0.0;
}

schedule::Schedule memory_schedule(const workload::Trace& trace, const MemoryQuery& q) {
  schedule::ScheduleOptions options;
  options.ordering = Ordering::Eager;
  options.optimizer = q.optimizer;
  options.impl = q.impl;
  options.steps = 1;
  options.memory.mixed_precision = q.mixed_precision;
  options.memory.optimizer_shards = q.plan.optimizer_shards();
  options.memory.attention = q.attention;
  options.memory.grad_buffer = GradBuffer::PerTensor;  // lifetimes are the stage walk's
  return schedule::build_schedule(trace, options);
}

MemoryReport estimate_memory(const workload::Trace& trace, const MemoryQuery& q) {
  return estimate_memory(trace, q, {q.ordering}).front();
}

std::vector<MemoryReport> estimate_memory(const workload::Trace& trace, const MemoryQuery& q,
                                          const std::vector<Ordering>& orderings,
                                          const schedule::Schedule* shared) {
  const ParallelPlan& plan = q.plan;
  validate_plan(plan, model_facts(trace));
  for (Ordering o : orderings)
    if (o == Ordering::Mixed)
      throw InputError("--ordering: expected eager, backward-fused or forward-fused, got mixed");
  std::optional<schedule::Schedule> own;
  if (!shared) own = memory_schedule(trace, q);
  const schedule::Schedule& s = shared ? *shared : *own;
  const ChunkProfiler profiler(trace, s, plan, chunk_first_layers(trace, plan));
  const std::int64_t collectives = collective_buffers(trace, plan);
  const auto blocks = transformer_blocks(trace);
  const auto starts = chunk_first_layers(trace, plan);
  const auto counts = blocks_per_chunk(plan, int(blocks.size()));
  // Asynchronous schedules stash weight versions for the backward of the microbatches in
  // flight: as many as the pipeline's timeline holds (pipeline_timing.h; PipeDream-2BW two).
  std::vector<int> versions(std::size_t(plan.pp), 1);
  if (is_asynchronous(plan.schedule)) {
    const PipelineTiming unit = time_pipeline(plan, [](int, int) {
      return PassCosts{kTicksPerUs, kTicksPerUs, kTicksPerUs};
    });
    for (int st = 0; st < plan.pp; ++st)
      versions[std::size_t(st)] = unit.stages[std::size_t(st)].weight_versions;
  }

  std::vector<MemoryReport> reports;
  PassCache passes;
  for (Ordering ordering : orderings) {
    const GradBuffer grads = q.grad_buffer                 ? *q.grad_buffer
                             : ordering == Ordering::Eager ? GradBuffer::Persistent
                                                           : GradBuffer::PerTensor;
    MemoryReport report;
    report.model = trace.model;
    report.params = trace.param_count();
    report.gpu_memory = q.gpu_memory;
    StageWalk walk(profiler, plan, ordering, grads, passes);
    for (int stage = 0; stage < plan.pp; ++stage) {
      const CategoryBytes top = walk.run(stage);
      StageMemory m;
      m.stage = stage;
      for (int l = 0; l < plan.virtual_stages; ++l) {
        const int c = model_chunk(plan, stage, l);
        const int end =
            c + 1 < int(starts.size()) ? starts[std::size_t(c) + 1] : int(trace.layers.size());
        m.layers += end - starts[std::size_t(c)];
        m.blocks += plan.chunks() == 1 ? int(blocks.size()) : counts[std::size_t(c)];
        m.grad_buffer += profiler.grad_bytes(c);
      }
      m.in_flight = in_flight_microbatches(plan, stage);
      // A stashed version copies the weights the passes read (16-bit with mixed precision; the
      // float32 master copy stays one).
      m.weight_versions = versions[std::size_t(stage)];
      m.weights = top[TensorCategory::Weights] * m.weight_versions;
      m.grads = top[TensorCategory::Grads];
      m.optimizer_state = top[TensorCategory::OptimizerState];
      m.activations = top[TensorCategory::Activations] + top[TensorCategory::Inputs];
      m.temporaries = top[TensorCategory::Temporaries];
      m.collectives = collectives;
      m.fragmentation = segment_overhead(peak_allocations(profiler, plan, stage, m));
      m.buffers = m.temporaries + m.collectives + m.fragmentation;
      m.total = m.weights + m.grads + m.optimizer_state + m.activations + m.buffers;
      report.max_total = std::max(report.max_total, m.total);
      report.stages.push_back(m);
    }
    report.fits =
        q.gpu_memory > 0 && double(report.max_total) <= kUsableFraction * double(q.gpu_memory);
    reports.push_back(std::move(report));
  }
  return reports;
}

std::int64_t gpu_memory_bytes(std::string_view gpu) {
  for (auto& [name, bytes] : kGpus)
    if (name == gpu) return bytes;
  // A size with its unit: a bare "80" (meant as 80 GB) was taken as 80 bytes.
  const bool has_unit = !gpu.empty() && std::isalpha(static_cast<unsigned char>(gpu.back()));
  if (auto b = parse_bytes(gpu); b && *b > 0 && has_unit) return *b;
  throw InputError(
      fmt::format("--gpu: expected one of {} or a size with its unit such as 80GiB, got \"{}\"",
                  gpu_memory_presets(), gpu));
}

std::string gpu_memory_presets() {
  std::string names;
  for (auto& [name, bytes] : kGpus) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

}  // namespace fusim::parallel

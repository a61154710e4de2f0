// Schedules over random small traces (linear chains with residual adds, every activation,
// a scalar loss), every ordering (mixed with random per-layer modes), every optimizer and
// implementation, CPU and GPU kernels, 1-3 steps:
//  - the independent dependency checker (check.cpp) proves each schedule;
//  - memory is never negative or double-booked: every tensor's block is at least its bytes,
//    the blocks of tensors alive at once never overlap, and the peak is the sum of its
//    categories, at least everything alive across any op, and holds every weight.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "random_configs.h"
#include "schedule/optimizer.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

using namespace fusim;
using namespace fusim::schedule;
using fusim::property::Rng;

namespace {

// The first memory property that fails ("" when all hold).
std::string check_memory(const Schedule& s) {
  for (const Tensor& t : s.tensors) {
    if (t.bytes < 0 || t.alloc_bytes < t.bytes)
      return fmt::format("{}: {} B in a block of {} B", t.name, t.bytes, t.alloc_bytes);
    if (t.alloc_op >= 0 && t.free_op >= 0 && t.free_op < t.alloc_op)
      return fmt::format("{}: freed at op {} before its allocation at op {}", t.name, t.free_op,
                         t.alloc_op);
  }
  const MemoryPeak& p = s.peak;
  const std::int64_t sum =
      p.weights + p.grads + p.optimizer_state + p.activations + p.temporaries + p.inputs;
  if (sum != p.total) return fmt::format("peak {} B but its categories sum to {} B", p.total, sum);
  if (p.reserved < p.total)
    return fmt::format("peak {} B above the reserved segments {} B", p.total, p.reserved);
  std::int64_t weights = 0;
  for (const Tensor& t : s.tensors)
    if (t.category == TensorCategory::Weights) weights += t.alloc_bytes;
  if (p.weights != weights)
    return fmt::format("peak holds {} B of weights, the tensors {} B", p.weights, weights);
  // At each op, the tensors alive across it (persistent ones, and those allocated before it
  // and freed after it): disjoint blocks, together no more than the peak.
  for (const Op& op : s.ops) {
    std::vector<std::pair<std::uint64_t, const Tensor*>> alive;
    std::int64_t bytes = 0;
    for (const Tensor& t : s.tensors)
      if (t.step < 0 || (t.alloc_op < op.id && t.free_op > op.id)) {
        alive.emplace_back(t.address, &t);
        bytes += t.alloc_bytes;
      }
    if (bytes > p.total)
      return fmt::format("{} B alive across op {} above the peak {} B", bytes, op.id, p.total);
    std::sort(alive.begin(), alive.end());
    for (std::size_t i = 1; i < alive.size(); ++i) {
      const Tensor& a = *alive[i - 1].second;
      const Tensor& b = *alive[i].second;
      if (a.address + static_cast<std::uint64_t>(a.alloc_bytes) > b.address)
        return fmt::format("{} [0x{:x}, +{}) and {} [0x{:x}, ...) overlap while op {} runs", a.name,
                           a.address, a.alloc_bytes, b.name, b.address, op.id);
    }
  }
  return "";
}

}  // namespace

TEST_CASE("random traces: every ordering's schedule passes the checker, memory adds up") {
  const int n = property::cases(2000);
  std::vector<std::string> optimizers;
  for (const OptimizerSpec& o : optimizer_table()) optimizers.emplace_back(o.name);
  int schedules = 0;
  for (int seed = 1; seed <= n; ++seed) {
    Rng rng(static_cast<std::uint64_t>(seed));
    const nlohmann::json doc = property::random_trace(rng);
    const workload::Trace trace = workload::parse_trace(doc, "random-trace.json");
    for (Ordering ordering :
         {Ordering::Eager, Ordering::BackwardFused, Ordering::ForwardFused, Ordering::Mixed}) {
      ScheduleOptions o;
      o.ordering = ordering;
      o.optimizer = rng.pick(optimizers);
      o.impl = rng.pick(std::vector<OptimizerImpl>{OptimizerImpl::Loop, OptimizerImpl::Foreach,
                                                   OptimizerImpl::Fused});
      o.device = rng.chance(30) ? DeviceKind::Gpu : DeviceKind::Cpu;
      o.gpu_streams = o.device == DeviceKind::Gpu && rng.chance(50);
      o.steps = static_cast<int>(rng.in(0, 3));
      if (ordering == Ordering::ForwardFused && o.steps == 1) o.steps = 2;
      if (ordering == Ordering::Mixed) {
        MixedOrdering mixed;
        mixed.fallback = rng.pick(
            std::vector<LayerMode>{LayerMode::Eager, LayerMode::Backward, LayerMode::Forward});
        for (const auto& layer : trace.layers)
          if (rng.chance(50))
            mixed.layers[layer.name] = rng.pick(
                std::vector<LayerMode>{LayerMode::Eager, LayerMode::Backward, LayerMode::Forward});
        o.mixed = mixed;
        if (o.steps == 1) o.steps = 2;  // forward-mode layers need a second step
      }
      const std::string label =
          fmt::format("seed {}: {} {} {} {} steps {}", seed, to_string(ordering), o.optimizer,
                      to_string(o.impl), o.device == DeviceKind::Gpu ? "gpu" : "cpu", o.steps);
      const Schedule s = build_schedule(trace, o);
      const std::vector<std::string> problems = check_schedule(trace, s);
      INFO(label << "\ntrace: " << doc.dump());
      if (!problems.empty())
        FAIL(problems.size() << " checker findings, the first: " << problems[0]);
      const std::string memory = check_memory(s);
      if (!memory.empty()) FAIL(memory);
      ++schedules;
    }
  }
  CHECK(schedules == 4 * n);
}

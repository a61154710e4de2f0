// The memory side of the `tensor` fidelity in the executor (tensor_side.h).
#include "exec/tensor_side.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/error.h"
#include "mem/residency/dram_curve_file.h"

namespace fusim::exec {

namespace {
// Cores per bin of private stacks (tensor_side.h): CPU lanes' core groups, or (unused: each
// SM set gets its own, TensorMemory::own_bin) one bin of
// every SM.
std::vector<int> bins_of(const Machine& m) {
  if (m.kind == compute::UnitKind::Gpu) return {m.compute.units};
  const int per = m.compute.threads_per_op;
  return std::vector<int>(static_cast<std::size_t>(std::max(1, m.compute.units / per)), per);
}
}  // namespace

residency::DramCurveParams TensorSide::curve_params(const Machine& m, const SimOptions& options) {
  const auto& levels = m.caches.levels;
  FUSIM_ASSERT(!levels.empty(), "a machine with at least one cache level");
  residency::DramCurveParams p;
  // Misses leave the hierarchy as lines of the first level (the unit, residency.h), each
  // holding an MSHR of each level on its way (the first level's bound a core's misses).
  p.request_bytes = static_cast<std::uint32_t>(levels.front().line_bytes);
  p.cores = m.kind == compute::UnitKind::Gpu ? m.compute.units : m.compute.threads_per_op;
  p.mshrs = static_cast<int>(levels.front().mshrs);
  Tick path = 0;
  for (const auto& l : levels) path += l.latency_cycles * l.clock_period;
  p.path_latency = path;
  p.chunk_bytes = static_cast<std::uint64_t>(options.chunk_bytes);
  // What the last level's ports can send (its bytes a cycle, per instance when it is
  // private): loads past it are never asked of memory.
  const auto& last = levels.back();
  const double instances = last.shared ? 1.0 : static_cast<double>(p.cores);
  p.max_bandwidth = instances * static_cast<double>(last.port_bytes_per_cycle()) /
                    (static_cast<double>(last.clock_period) * 1e-12);
  return p;
}

TensorSide::TensorSide(EventQueue& queue, const Machine& machine, const SimOptions& options)
    : gpu_(machine.kind == compute::UnitKind::Gpu),
      threads_per_op_(machine.compute.threads_per_op) {
  if (const auto* fixed = std::get_if<FixedLatency>(&machine.memory)) {
    curve_ =
        std::make_unique<residency::FixedMemoryCurve>(fixed->latency, fixed->bandwidth_gbps * 1e9);
  } else {
    const auto& spec = std::get<dram::DramSpec>(machine.memory);
    const auto params = curve_params(machine, options);
    curves_ = options.dram_curves ? options.dram_curves->get(spec, params)
                                  : std::make_shared<residency::DramCurves>(
                                        spec, params, residency::default_cache_dir());
    curve_ = std::make_unique<residency::DramMemoryCurve>(curves_);
  }
  memory_ = std::make_unique<residency::TensorMemory>(
      queue, machine.caches, bins_of(machine), *curve_,
      options.tensor_set_conflicts ? residency::Associativity::SetConflicts
                                   : residency::Associativity::FullyAssociative);
}

void TensorSide::issue(const std::vector<int>& cores,
                       const std::vector<residency::TensorRange>& ranges, MemoryTap& tap,
                       residency::TensorMemory::Done done) {
  FUSIM_ASSERT(!cores.empty(), "a chunk runs on at least one core");
  const int group = memory_->group_of(cores);
  const int bin = gpu_ ? memory_->own_bin(group, cores) : cores.front() / threads_per_op_;
  const residency::Served s =
      memory_->issue(bin, group, static_cast<int>(cores.size()), ranges, std::move(done));
  const auto bytes =
      static_cast<std::int64_t>(s.memory_read_bytes + s.memory_write_bytes + s.writeback_bytes);
  if (bytes == 0) return;
  const auto n = static_cast<std::int64_t>(cores.size());
  for (std::size_t c = 0; c < cores.size(); ++c)  // the remainder on the first core
    tap.count_only(cores[c], bytes / n + (c == 0 ? bytes % n : 0));
}

std::string TensorSide::describe_state() const {
  const auto& p = memory_->pipes();
  return fmt::format(
      "tensor memory: {} flows active, memory {:.3f} GB/s, read latency {} ps, "
      "posted backlog {:.0f} B",
      p.active(), p.memory_bandwidth() * 1e-9, p.memory_latency(), p.backlog_bytes());
}

}  // namespace fusim::exec

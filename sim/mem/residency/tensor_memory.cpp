#include "mem/residency/tensor_memory.h"

#include "core/error.h"

namespace fusim::residency {

PipeConfig TensorMemory::pipe_config(const cache::HierarchyConfig& config) {
  PipeConfig p;
  Tick path = 0;
  for (const cache::LevelConfig& c : config.levels) {
    PipeLevel l;
    l.shared = c.shared;
    // As cache::Hierarchy's port_occupancy in line fidelity: a line per cycle per port.
    l.unit_time = static_cast<Tick>(
        (static_cast<std::uint64_t>(c.clock_period) + static_cast<std::uint64_t>(c.ports) - 1) /
        static_cast<std::uint64_t>(c.ports));
    l.mshrs = c.mshrs;
    path += c.latency_cycles * c.clock_period;
    l.hit_latency = path;
    p.levels.push_back(l);
  }
  p.miss_path_latency = path;
  p.unit_bytes = static_cast<double>(config.levels.front().line_bytes);
  return p;
}

TensorMemory::TensorMemory(EventQueue& queue, const cache::HierarchyConfig& config,
                           const std::vector<int>& bin_cores, MemoryCurve& memory)
    : queue_(queue), hierarchy_(config, bin_cores), pipes_(queue, pipe_config(config), memory) {
  Tick path = 0;
  for (const cache::LevelConfig& c : config.levels) {
    path += c.latency_cycles * c.clock_period;
    hit_latency_.push_back(path);
  }
  for (const PipeLevel& l : pipe_config(config).levels) unit_time_.push_back(l.unit_time);
}

Tick TensorMemory::port_occupancy(int level) const {
  return unit_time_[static_cast<std::size_t>(level)];
}

int TensorMemory::group_of(const std::vector<int>& cores) {
  auto it = groups_.find(cores);
  if (it != groups_.end()) return it->second;
  const int id = static_cast<int>(groups_.size());
  groups_.emplace(cores, id);
  return id;
}

Served TensorMemory::issue(int bin, int group, int cores, const std::vector<TensorRange>& ranges,
                           Done done) {
  FUSIM_ASSERT(cores >= 1, "a chunk runs on at least one core");
  Served total;
  FlowWork w;
  w.group = group;
  w.cores = cores;
  w.read_regions = 0;
  for (const TensorRange& r : ranges) {
    if (r.bytes == 0) continue;
    Served s;
    AccessRequest a;
    a.bin = bin;
    // Each core holds the part of this slice that the even split gave it.
    a.owner = Owner{group, r.addr, r.addr + r.bytes, cores == 1};
    a.addr = r.addr;
    a.bytes = r.bytes;
    a.write = r.write;
    hierarchy_.access(a, s);
    if (s.memory_read_bytes > 0) ++w.read_regions;
    total += s;
  }
  const int n = hierarchy_.levels();
  w.units = static_cast<double>(total.units);
  for (int k = 0; k < n; ++k) {
    w.lookups[static_cast<std::size_t>(k)] =
        static_cast<double>(total.lookups[static_cast<std::size_t>(k)]);
    if (total.lookups[static_cast<std::size_t>(k)] > 0) w.deepest = k;
  }
  w.memory_read_bytes = static_cast<double>(total.memory_read_bytes);
  w.memory_write_bytes = static_cast<double>(total.memory_write_bytes + total.writeback_bytes);
  w.memory_reads = w.memory_read_bytes / static_cast<double>(hierarchy_.unit_bytes());
  if (total.memory_read_bytes + total.memory_write_bytes > 0) w.deepest = n;
  w.read_regions = std::max(1, w.read_regions);
  memory_bytes_ += total.memory_read_bytes + total.memory_write_bytes + total.writeback_bytes;
  if (total.units == 0) {  // nothing to move (the caller's ranges were all empty)
    const Tick now = queue_.now();
    queue_.schedule(now, Priority::Response, [done = std::move(done), now] { done(now); });
    return total;
  }
  pipes_.start(w, std::move(done));
  return total;
}

}  // namespace fusim::residency

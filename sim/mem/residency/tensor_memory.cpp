#include "mem/residency/tensor_memory.h"

#include "core/error.h"

#include <algorithm>

namespace fusim::residency {

double streaming_regions(std::vector<double> bytes) {
  bytes.erase(std::remove_if(bytes.begin(), bytes.end(), [](double b) { return b <= 0; }),
              bytes.end());
  if (bytes.empty()) return 0;
  std::sort(bytes.begin(), bytes.end());
  // Phase k: the ranges from k on are streaming (n - k of them), each reads its bytes past
  // the previous range's end, at equal rates.
  double weighted = 0, total = 0, before = 0;
  const std::size_t n = bytes.size();
  for (std::size_t k = 0; k < n; ++k) {
    const double streams = static_cast<double>(n - k);
    const double moved = streams * (bytes[k] - before);
    weighted += streams * moved;
    total += moved;
    before = bytes[k];
  }
  return weighted / total;
}

double aligned_share(const std::vector<TensorRange>& ranges,
                     const std::vector<double>& read_bytes) {
  constexpr Addr kPage = 4096;
  double total = 0, aligned = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (read_bytes[i] <= 0) continue;
    total += read_bytes[i];
    const Addr off = ranges[i].addr % kTensorAlignment / kPage;
    for (std::size_t j = 0; j < ranges.size(); ++j) {
      if (j == i || read_bytes[j] <= 0) continue;
      const Addr size_gap = ranges[i].bytes > ranges[j].bytes ? ranges[i].bytes - ranges[j].bytes
                                                              : ranges[j].bytes - ranges[i].bytes;
      if (ranges[j].addr % kTensorAlignment / kPage == off && size_gap < kPage) {
        aligned += read_bytes[i];
        break;
      }
    }
  }
  return total > 0 ? aligned / total : 0;
}

PipeConfig TensorMemory::pipe_config(const cache::HierarchyConfig& config) {
  PipeConfig p;
  Tick path = 0;
  for (const cache::LevelConfig& c : config.levels) {
    PipeLevel l;
    l.shared = c.shared;
    // As cache::Hierarchy's port_occupancy in line fidelity: a line's time at the port.
    l.unit_time = c.port_time(1);
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
                           const std::vector<int>& bin_cores, MemoryCurve& memory,
                           Associativity assoc)
    : queue_(queue),
      hierarchy_(config, bin_cores, assoc),
      pipes_(queue, pipe_config(config), memory) {
  Tick path = 0;
  for (const cache::LevelConfig& c : config.levels) {
    path += c.latency_cycles * c.clock_period;
    hit_latency_.push_back(path);
  }
  for (const PipeLevel& l : pipe_config(config).levels) unit_time_.push_back(l.unit_time);
  const cache::LevelConfig& first = config.levels.front();
  int cores = 0;
  for (int b : bin_cores) cores += b;
  first_level_per_core_ = static_cast<std::uint64_t>(first.size_bytes) /
                          static_cast<std::uint64_t>(first.shared ? std::max(1, cores) : 1);
}

Tick TensorMemory::port_occupancy(int level) const {
  return unit_time_[static_cast<std::size_t>(level)];
}

int TensorMemory::group_of(const std::vector<int>& cores) {
  if (last_group_ >= 0 && cores == last_cores_) return last_group_;  // a pass's chunks
  auto it = groups_.find(cores);
  int id = 0;
  if (it != groups_.end()) {
    id = it->second;
  } else {
    id = static_cast<int>(groups_.size());
    groups_.emplace(cores, id);
  }
  last_cores_ = cores;
  last_group_ = id;
  return id;
}

int TensorMemory::own_bin(int group, const std::vector<int>& cores) {
  const auto g = static_cast<std::size_t>(group);
  if (g >= own_bins_.size()) own_bins_.resize(g + 1, -1);
  if (own_bins_[g] < 0) own_bins_[g] = hierarchy_.add_bin(cores);
  return own_bins_[g];
}

Served TensorMemory::issue(int bin, int group, int cores, const std::vector<TensorRange>& ranges,
                           Done done) {
  FUSIM_ASSERT(cores >= 1, "a chunk runs on at least one core");
  Served total;
  FlowWork w;
  w.group = group;
  w.cores = cores;
  // The ranges advance together, a granule per core at a time (interleave_ below).
  const Addr unit = hierarchy_.unit_bytes();
  Addr nonempty = 0;
  for (const TensorRange& r : ranges) nonempty += r.bytes > 0 ? 1 : 0;
  const Addr per_core = std::max<Addr>(
      kInterleaveUnits * unit, first_level_per_core_ / std::max<Addr>(1, nonempty) / unit * unit);
  const Addr granule = per_core * static_cast<Addr>(cores);
  std::size_t steps = 0;
  for (const TensorRange& r : ranges)
    if (r.bytes > 0) {
      const Addr first = r.addr / unit * unit;
      steps = std::max<std::size_t>(steps, (r.addr + r.bytes - first + granule - 1) / granule);
    }
  std::vector<double> read_bytes(ranges.size(), 0.0);  // from memory, per range
  for (std::size_t i = 0; i < steps; ++i) {
    for (std::size_t j = 0; j < ranges.size(); ++j) {
      const TensorRange& r = ranges[j];
      if (r.bytes == 0) continue;
      const Addr first = r.addr / unit * unit, end = r.addr + r.bytes;
      const Addr lo = std::max(r.addr, first + i * granule);
      const Addr hi = std::min(end, first + (i + 1) * granule);
      if (lo >= hi) continue;
      Served s;
      AccessRequest a;
      a.bin = bin;
      // Each core holds the part of this slice that the split gave it.
      a.owner = Owner{group, r.addr, end, cores == 1};
      a.addr = lo;
      a.bytes = hi - lo;
      a.write = r.write;
      hierarchy_.access(a, s);
      read_bytes[j] += static_cast<double>(s.memory_read_bytes);
      total += s;
    }
  }
  w.aligned = aligned_share(ranges, read_bytes);
  w.read_regions = streaming_regions(std::move(read_bytes));
  const int n = hierarchy_.levels();
  w.units = static_cast<double>(total.units);
  for (int k = 0; k < n; ++k) {
    w.lookups[static_cast<std::size_t>(k)] =
        static_cast<double>(total.lookups[static_cast<std::size_t>(k)]);
    // The tail waits for the deepest level that served a unit, as the line model's
    // transfer finishes at the level that served its last unit: a store passed on through
    // a write-through level is looked up below (its port time) but served, and so done,
    // where it first landed (a GPU's L1 stores are posted to L2: tiny updates waited an L2
    // latency per pass, 2.8 us per batch-norm update on the H100 against line's ~1 us).
    if (total.served[static_cast<std::size_t>(k)] > 0) w.deepest = k;
  }
  w.memory_read_bytes = static_cast<double>(total.memory_read_bytes);
  w.memory_write_bytes = static_cast<double>(total.memory_write_bytes);
  w.writeback_bytes = static_cast<double>(total.writeback_bytes - total.unpaced_writeback_bytes);
  w.posted_bytes = static_cast<double>(total.unpaced_writeback_bytes);
  w.memory_reads = w.memory_read_bytes / static_cast<double>(hierarchy_.unit_bytes());
  if (total.memory_read_bytes + total.memory_write_bytes > 0) w.deepest = n;  // waits on memory
  w.read_regions = std::max(1.0, w.read_regions);
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

#include "exec/gemm_rereads.h"

#include <algorithm>
#include <utility>

#include "core/int_math.h"

namespace fusim::exec {

GemmRereads::GemmRereads(const EventQueue& queue, RereadTiming timing,
                         const cache::HierarchyConfig& config, MemoryTap& tap,
                         double memory_bytes_per_ps)
    : queue_(queue),
      timing_(std::move(timing)),
      tap_(tap),
      stats_(config.levels.size()),
      memory_bytes_per_ps_(memory_bytes_per_ps) {
  for (const auto& level : config.levels) level_bytes_.push_back(level.size_bytes);
}

cache::HierarchyStats GemmRereads::add_to(cache::HierarchyStats st) const {
  for (std::size_t l = 0; l < st.levels.size() && l < stats_.size(); ++l)
    st.levels[l].total += stats_[l];
  st.memory.reads += memory_.reads;
  st.memory.read_bytes += memory_.read_bytes;
  return st;
}

int GemmRereads::level_for(std::int64_t bytes) const {
  // The operand was just streamed in by this op's first read; its re-reads hit the first
  // level that holds it with room for the other operand and the output streaming beside it
  // (half the level, as the blocking model's residency rule).
  for (std::size_t l = 0; l < level_bytes_.size(); ++l)
    if (bytes <= level_bytes_[l] / 2) return static_cast<int>(l);
  return static_cast<int>(level_bytes_.size());
}

Tick GemmRereads::serve(int level, std::int64_t bytes, const std::vector<int>& units) {
  const auto unit = static_cast<std::int64_t>(timing_.unit_bytes);
  const auto n = static_cast<std::uint64_t>(ceil_div(bytes, unit));
  // Stats as the hierarchy would count them: a lookup (miss) at every level above the one
  // that serves the re-read, a hit there; past the last level, a memory read.
  for (int l = 0; l < static_cast<int>(stats_.size()); ++l) {
    if (l > level) break;
    auto& st = stats_[static_cast<std::size_t>(l)];
    st.accesses += n;
    (l == level ? st.hits : st.misses) += n;
  }
  const Tick now = queue_.now();
  if (level < static_cast<int>(timing_.hit_latency.size())) {
    // Hits stream at the first level's port rate of each of the op's cores (the timed
    // path's issue limit), after one lookup latency down to the serving level.
    double per_unit = static_cast<double>(timing_.first_port) /
                      static_cast<double>(std::max<std::size_t>(1, units.size()));
    return now + timing_.hit_latency[static_cast<std::size_t>(level)] +
           static_cast<Tick>(per_unit * static_cast<double>(n) + 0.5);
  }
  memory_.reads += n;
  memory_.read_bytes += static_cast<std::uint64_t>(bytes);
  tap_.count_only(units.empty() ? -1 : units.front(), bytes);
  // Main memory re-reads queue on one shared bandwidth pipe (other re-reads contend; the
  // controller's own traffic does not see them).
  if (memory_bytes_per_ps_ <= 0) return now + timing_.miss_issue;
  Tick start = std::max(now, memory_pipe_free_);
  memory_pipe_free_ =
      start + static_cast<Tick>(static_cast<double>(bytes) / memory_bytes_per_ps_ + 0.5);
  return memory_pipe_free_ + timing_.miss_issue;
}

}  // namespace fusim::exec

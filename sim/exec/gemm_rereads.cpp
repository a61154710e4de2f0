// The analytic GEMM re-reads of the simulator (see Simulator::issue_chunk): the first read
// of an operand streams through the hierarchy; its repeats - 1 re-reads are served by the
// level that holds it, counted in the stats as the hierarchy would count them.
#include <algorithm>

#include "exec/simulator.h"
#include "exec/tensor_side.h"

namespace fusim::exec {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}
}  // namespace

cache::HierarchyStats Simulator::cache_stats() const {
  cache::HierarchyStats st = tensor_ ? tensor_->stats() : caches_->stats();
  for (std::size_t l = 0; l < st.levels.size() && l < reread_stats_.size(); ++l)
    st.levels[l].total += reread_stats_[l];
  st.memory.reads += reread_memory_.reads;
  st.memory.read_bytes += reread_memory_.read_bytes;
  return st;
}

int Simulator::reread_level(std::int64_t bytes) const {
  // The operand was just streamed in by this op's first read; its re-reads hit the first
  // level that holds it with room for the other operand and the output streaming beside it
  // (half the level, as the blocking model's residency rule).
  for (std::size_t l = 0; l < level_bytes_.size(); ++l)
    if (bytes <= level_bytes_[l] / 2) return static_cast<int>(l);
  return static_cast<int>(level_bytes_.size());
}

Tick Simulator::serve_rereads(int id, int level, std::int64_t bytes) {
  OpState& s = ops_[static_cast<std::size_t>(id)];
  // The timing of whichever memory side runs (both give the line model's numbers).
  const bool t = tensor_ != nullptr;
  const auto unit = static_cast<std::int64_t>(t ? tensor_->unit_bytes() : caches_->unit_bytes());
  const int levels = t ? tensor_->levels() : caches_->levels();
  const Tick miss_issue = t ? tensor_->miss_issue_latency() : caches_->miss_issue_latency();
  const auto units = static_cast<std::uint64_t>(ceil_div(bytes, unit));
  // Stats as the hierarchy would count them: a lookup (miss) at every level above the one
  // that serves the re-read, a hit there; past the last level, a memory read.
  for (int l = 0; l < static_cast<int>(reread_stats_.size()); ++l) {
    if (l > level) break;
    auto& st = reread_stats_[static_cast<std::size_t>(l)];
    st.accesses += units;
    (l == level ? st.hits : st.misses) += units;
  }
  const Tick now = queue_.now();
  if (level < levels) {
    // Hits stream at the first level's port rate of each of the op's cores (the timed
    // path's issue limit), after one lookup latency down to the serving level.
    double per_unit =
        static_cast<double>(t ? tensor_->port_occupancy(0) : caches_->port_occupancy(0)) /
        static_cast<double>(std::max<std::size_t>(1, s.cores.size()));
    return now + (t ? tensor_->hit_latency(level) : caches_->hit_latency(level)) +
           static_cast<Tick>(per_unit * static_cast<double>(units) + 0.5);
  }
  reread_memory_.reads += units;
  reread_memory_.read_bytes += static_cast<std::uint64_t>(bytes);
  tap_->count_only(s.cores.empty() ? -1 : s.cores.front(), bytes);
  // Main memory re-reads queue on one shared bandwidth pipe (other re-reads contend; the
  // controller's own traffic does not see them).
  if (memory_bytes_per_ps_ <= 0) return now + miss_issue;
  Tick start = std::max(now, memory_pipe_free_);
  memory_pipe_free_ =
      start + static_cast<Tick>(static_cast<double>(bytes) / memory_bytes_per_ps_ + 0.5);
  return memory_pipe_free_ + miss_issue;
}

}  // namespace fusim::exec

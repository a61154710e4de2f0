#include "mem/dram/dram_stats.h"

#include <algorithm>

namespace fusim::dram {
namespace {

template <typename T>
std::vector<T> subtract(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> r = a;
  if (r.size() < b.size()) r.resize(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) r[i] = r[i] - b[i];
  return r;
}
template <typename T>
void add_into(std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() < b.size()) a.resize(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) a[i] += b[i];
}

}  // namespace

std::size_t LatencyHistogram::bin_of(Cycle latency) {
  if (latency < kLinear) return static_cast<std::size_t>(std::max<Cycle>(latency, 0));
  int p = 63 - __builtin_clzll(static_cast<unsigned long long>(latency));  // >= 11
  const Cycle sub = (latency >> (p - 4)) & 15;
  return static_cast<std::size_t>(kLinear + (p - 11) * 16 + sub);
}

Cycle LatencyHistogram::bin_upper(std::size_t bin) {
  if (bin < static_cast<std::size_t>(kLinear)) return static_cast<Cycle>(bin);
  const std::size_t k = bin - kLinear;
  const int p = static_cast<int>(k / 16) + 11;
  const Cycle sub = static_cast<Cycle>(k % 16);
  return (Cycle{16 + sub + 1} << (p - 4)) - 1;
}

void LatencyHistogram::grow(std::size_t bin) {
  bins_.resize(std::max<std::size_t>(bin + 1, 256), 0);
}

Cycle LatencyHistogram::percentile(double q) const {
  if (count_ == 0) return 0;
  const auto need =
      static_cast<std::uint64_t>(std::max(1.0, q * static_cast<double>(count_) - 1e-9) + 0.999999);
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < bins_.size(); ++b) {
    seen += bins_[b];
    if (seen >= need) return bin_upper(b);
  }
  return bin_upper(bins_.size() - 1);
}

LatencyHistogram LatencyHistogram::operator-(const LatencyHistogram& o) const {
  LatencyHistogram r;
  r.bins_ = subtract(bins_, o.bins_);
  r.count_ = count_ - o.count_;
  r.sum_ = sum_ - o.sum_;
  return r;
}

LatencyHistogram& LatencyHistogram::operator+=(const LatencyHistogram& o) {
  add_into(bins_, o.bins_);
  count_ += o.count_;
  sum_ += o.sum_;
  return *this;
}

RequesterStats RequesterStats::operator-(const RequesterStats& o) const {
  return {reads - o.reads,       writes - o.writes,
          bytes - o.bytes,       row_hits - o.row_hits,
          accesses - o.accesses, read_latency_cycles - o.read_latency_cycles};
}

RequesterStats& RequesterStats::operator+=(const RequesterStats& o) {
  reads += o.reads, writes += o.writes, bytes += o.bytes, row_hits += o.row_hits;
  accesses += o.accesses, read_latency_cycles += o.read_latency_cycles;
  return *this;
}

DramStats DramStats::operator-(const DramStats& o) const {
  DramStats r;
  r.tCK = tCK;
  r.elapsed = elapsed - o.elapsed;
  r.reads = reads - o.reads, r.writes = writes - o.writes;
  r.read_bytes = read_bytes - o.read_bytes, r.write_bytes = write_bytes - o.write_bytes;
  r.row_hits = row_hits - o.row_hits, r.row_misses = row_misses - o.row_misses;
  r.row_conflicts = row_conflicts - o.row_conflicts;
  r.activates = activates - o.activates, r.precharges = precharges - o.precharges;
  r.column_reads = column_reads - o.column_reads;
  r.column_writes = column_writes - o.column_writes;
  r.refreshes = refreshes - o.refreshes;
  r.per_bank_refreshes = per_bank_refreshes - o.per_bank_refreshes;
  r.read_latency = read_latency - o.read_latency;
  r.write_latency = write_latency - o.write_latency;
  r.requesters = subtract(requesters, o.requesters);
  r.bank_open_cycles = subtract(bank_open_cycles, o.bank_open_cycles);
  r.policy_epochs = subtract(policy_epochs, o.policy_epochs);
  return r;
}

double DramStats::row_hit_rate() const {
  const auto n = row_hits + row_misses + row_conflicts;
  return n ? static_cast<double>(row_hits) / n : 0.0;
}
double DramStats::row_miss_rate() const {
  const auto n = row_hits + row_misses + row_conflicts;
  return n ? static_cast<double>(row_misses) / n : 0.0;
}
double DramStats::row_conflict_rate() const {
  const auto n = row_hits + row_misses + row_conflicts;
  return n ? static_cast<double>(row_conflicts) / n : 0.0;
}

double DramStats::bank_utilization() const {
  if (bank_open_cycles.empty() || elapsed <= 0) return 0.0;
  double sum = 0;
  for (auto c : bank_open_cycles) sum += static_cast<double>(c);
  const double cycles = static_cast<double>(elapsed) / static_cast<double>(tCK);
  return sum / (cycles * static_cast<double>(bank_open_cycles.size()));
}

}  // namespace fusim::dram

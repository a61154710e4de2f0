#pragma once
// DRAM statistics as plain values: subtract a warm-up snapshot from a later one to get the
// steady state (operator-). Latencies are kept in DRAM cycles in a histogram so that
// percentiles survive subtraction; printers convert to ns with the clock period.
#include <cstdint>
#include <vector>

#include "core/time.h"
#include "mem/dram/dram_spec.h"

namespace fusim::dram {

// Exact 1-cycle bins below kLinear cycles, then 16 bins per power of two (6% wide).
class LatencyHistogram {
 public:
  static constexpr Cycle kLinear = 2048;
  void add(Cycle latency) {
    const std::size_t b =
        latency < kLinear ? static_cast<std::size_t>(latency < 0 ? 0 : latency) : bin_of(latency);
    if (b >= bins_.size()) grow(b);
    ++bins_[b];
    ++count_;
    sum_ += latency;
  }
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }
  // Smallest latency L with at least q of the samples <= L (q in (0, 1]); 0 when empty.
  Cycle percentile(double q) const;
  LatencyHistogram operator-(const LatencyHistogram& o) const;
  LatencyHistogram& operator+=(const LatencyHistogram& o);

 private:
  static std::size_t bin_of(Cycle latency);
  void grow(std::size_t bin);
  static Cycle bin_upper(std::size_t bin);
  std::vector<std::uint64_t> bins_;
  std::uint64_t count_ = 0;
  std::int64_t sum_ = 0;
};

struct RequesterStats {
  std::uint64_t reads = 0, writes = 0, bytes = 0, row_hits = 0, accesses = 0;
  std::int64_t read_latency_cycles = 0;  // sum, for the mean
  RequesterStats operator-(const RequesterStats& o) const;
  RequesterStats& operator+=(const RequesterStats& o);
};

struct DramStats {
  Tick tCK = 1;                         // to convert cycles
  Tick elapsed = 0;                     // simulated time the counters cover
  std::uint64_t reads = 0, writes = 0;  // requests completed (MemRequests)
  std::uint64_t read_bytes = 0, write_bytes = 0;
  // Per column access (atom): served from the open row / from a closed bank / after
  // closing another row.
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t activates = 0, precharges = 0, column_reads = 0, column_writes = 0;
  std::uint64_t refreshes = 0;                   // REFab commands
  std::uint64_t per_bank_refreshes = 0;          // REFpb commands
  LatencyHistogram read_latency, write_latency;  // cycles, arrival to data done
  std::vector<RequesterStats> requesters;        // indexed by MemRequest::requester
  std::vector<std::uint64_t> bank_open_cycles;   // per (channel, bank): cycles with a row open
  // The cads scheduler: epochs run with each of its policies (kCadsPolicies order), summed
  // over channels; empty under the other schedulers.
  std::vector<std::uint64_t> policy_epochs;

  DramStats operator-(const DramStats& o) const;

  std::uint64_t requests() const { return reads + writes; }
  double bandwidth_bytes_per_s() const {
    return elapsed > 0 ? static_cast<double>(read_bytes + write_bytes) / to_seconds(elapsed) : 0;
  }
  double row_hit_rate() const;
  double row_miss_rate() const;
  double row_conflict_rate() const;
  double cycles_to_ns(double cycles) const { return cycles * static_cast<double>(tCK) / 1000.0; }
  // Mean fraction of the elapsed time that a bank had a row open.
  double bank_utilization() const;
};

}  // namespace fusim::dram

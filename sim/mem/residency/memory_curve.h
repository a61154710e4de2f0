#pragma once
// Main memory as the `tensor` fidelity's pipes see it: a bandwidth that a read/write mix
// can sustain and the read latency at a given load. DRAM: the controller's own curves
// (dram_curve.h); the fixed-latency stub ({"preset": "fixed"}): its latency and bandwidth.
#include <memory>

#include "core/time.h"
#include "mem/residency/dram_curve.h"

namespace fusim::residency {

class MemoryCurve {
 public:
  virtual ~MemoryCurve() = default;
  // Bytes per second the memory sustains for a pass reading `regions` tensors with
  // `write_share` of its bytes written (0: unlimited).
  virtual double peak_bandwidth(int regions, double write_share) = 0;
  // Mean read latency (from the request reaching memory to its data) at `bandwidth`.
  virtual Tick read_latency(int regions, double write_share, double bandwidth) = 0;
};

class DramMemoryCurve final : public MemoryCurve {
 public:
  explicit DramMemoryCurve(std::shared_ptr<DramCurves> curves) : curves_(std::move(curves)) {}
  double peak_bandwidth(int regions, double write_share) override {
    return curves_->peak_bandwidth(DramPattern::Stream, regions, write_share);
  }
  Tick read_latency(int regions, double write_share, double bandwidth) override {
    return curves_->read_latency_at(DramPattern::Stream, regions, write_share, bandwidth);
  }

 private:
  std::shared_ptr<DramCurves> curves_;
};

// FixedLatencyMemory (sim/mem/cache/fixed_memory.h): requests back to back at the
// bandwidth, each `latency` after its transfer.
class FixedMemoryCurve final : public MemoryCurve {
 public:
  FixedMemoryCurve(Tick latency, double bytes_per_second)
      : latency_(latency), bandwidth_(bytes_per_second) {}
  double peak_bandwidth(int, double) override { return bandwidth_; }
  Tick read_latency(int, double, double) override { return latency_; }

 private:
  Tick latency_;
  double bandwidth_;
};

}  // namespace fusim::residency

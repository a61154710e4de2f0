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
  // `write_share` of its bytes written, `aligned` of its read bytes from tensors read
  // together at the same offset from a kTensorAlignment boundary (dram_curve.h) (0:
  // unlimited).
  virtual double peak_bandwidth(int regions, double write_share, double aligned) = 0;
  // Mean read latency (from the request reaching memory to its data) at `bandwidth`.
  virtual Tick read_latency(int regions, double write_share, double aligned, double bandwidth) = 0;
};

class DramMemoryCurve final : public MemoryCurve {
 public:
  explicit DramMemoryCurve(std::shared_ptr<DramCurves> curves) : curves_(std::move(curves)) {}
  // Between the Stream and AlignedStream curves by the aligned share (only one of them
  // is measured where the share is 0 or 1; one region is Stream's either way).
  double peak_bandwidth(int regions, double write_share, double aligned) override {
    const double a = regions > 1 ? aligned : 0;
    const double s =
        a >= 1 ? 0 : curves_->peak_bandwidth(DramPattern::Stream, regions, write_share);
    if (a <= 0) return s;
    return (1 - a) * s +
           a * curves_->peak_bandwidth(DramPattern::AlignedStream, regions, write_share);
  }
  Tick read_latency(int regions, double write_share, double aligned, double bandwidth) override {
    const double a = regions > 1 ? aligned : 0;
    const Tick s =
        a >= 1 ? 0 : curves_->read_latency_at(DramPattern::Stream, regions, write_share, bandwidth);
    if (a <= 0) return s;
    const Tick t =
        curves_->read_latency_at(DramPattern::AlignedStream, regions, write_share, bandwidth);
    return s + static_cast<Tick>(a * static_cast<double>(t - s) + 0.5);
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
  double peak_bandwidth(int, double, double) override { return bandwidth_; }
  Tick read_latency(int, double, double, double) override { return latency_; }

 private:
  Tick latency_;
  double bandwidth_;
};

}  // namespace fusim::residency

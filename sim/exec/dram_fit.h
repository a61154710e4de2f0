#pragma once
// The DRAM of a calibrated host: the channel count, then the data rate, whose simulated
// STREAM kernel runs closest to the measured one (`fusim calibrate`,
// backend/calibration_json.cpp).
//
// calibrate measures a STREAM triad a[i] = b[i] + s c[i] over arrays far larger than the
// last level on all of the host's threads and counts 3 arrays of bytes, as STREAM does. The
// DRAM moves more: a store that misses is a read for ownership first (write-allocate), so
// the triad's traffic is 4 arrays (McCalpin, STREAM FAQ: "counting bytes"), and how much
// of the channels' peak a read/write mix reaches is the simulated controller's to say (its
// bus turnarounds, refreshes, row conflicts), not one fraction for every host. So instead
// of a channel count from measured / (a fixed fraction x one channel's peak), the same
// kernel (an `add` of two arrays into a third: the triad's traffic, without its multiply)
// is simulated on the machine file, tensor fidelity as predictions run, its memory alone
// (no compute), counted the way the measurement counts: first at each channel count, the
// nearest in ratio kept; then at that count, the data rate. Whole channels move the
// bandwidth in steps of 1/c: on a 2-core EPYC VM (2026-12-07) the triad measured 45.2 GB/s
// and the model's were 40.1 and 52.0 at 3 and 4 DDR5-5600 channels, and at 3 the model's
// memory alone gave resnet18's SGD updates of its 9.4 MiB layers 0.62 ms where they
// measured 0.44.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workload/trace.h"

namespace fusim::exec {

// The probe: out = x + y over float32 arrays of `array_bytes` each ([1, n], n = bytes / 4),
// then a loss (every trace has one; only the add is simulated).
workload::Trace stream_add_trace(std::int64_t array_bytes);

struct DramChannelTrial {
  int channels = 0;
  double gbs = 0;  // simulated, 3 arrays counted per element
};

struct DramRateTrial {
  std::int64_t data_rate_mts = 0;
  double gbs = 0;
};

struct DramChannelFit {
  int channels = 0;
  std::int64_t data_rate_mts = 0;          // at `channels`: the preset's unless a rate came closer
  double simulated_gbs = 0;                // at both
  double channel_gbs = 0;                  // at `channels` and the preset's data rate
  std::vector<DramChannelTrial> trials;    // every count simulated: 1, 2, ...
  std::vector<DramRateTrial> rate_trials;  // then every data rate, in the order tried
};

// `machine` a machine document with a "dram" object ("preset", "channels": replaced);
// `measured_gbs` the triad's GB/s (1e9 B/s, 3 arrays of `array_bytes` counted per pass)
// on the threads the machine's ops use. Tries 1, 2, ... channels until two counts in a
// row simulate at least the measured bandwidth, or kSaturated counts in a row add under 1%
// to the highest so far, or kMaxChannels, and keeps the count nearest in ratio (the
// simulated bandwidth is not monotone in the channels: the mapping spreads a kernel's
// 2 MiB-aligned arrays differently at each count; on a 2-core DDR4-3200 model 3 channels
// streamed 42.8 GB/s and 4 39.6). Then, at that count, the data rate (an integer MT/s
// within a factor kRateRange of the preset's; timings the preset gives in ns stay ns, those
// in clocks scale), by at most kRateSteps secant steps on log bandwidth against log rate,
// stopping within kRateTolerance (log ratio) or where the rate stops moving the bandwidth
// (the cores' reads in flight bound it), and keeps the nearest rate tried: the bandwidth is
// jagged in the rate by ~2% (timings round to whole clocks). The document is not changed.
constexpr int kMaxChannels = 64, kSaturated = 4, kRateSteps = 6;
constexpr double kRateRange = 2.0, kRateTolerance = 0.005;
DramChannelFit fit_dram_channels(const nlohmann::json& machine, double measured_gbs,
                                 std::int64_t array_bytes);

}  // namespace fusim::exec

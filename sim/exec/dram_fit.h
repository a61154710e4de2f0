#pragma once
// The DRAM channel count of a calibrated host: the one whose simulated STREAM kernel runs
// closest to the measured one (`fusim calibrate`, backend/calibration_json.cpp).
//
// calibrate measures a STREAM triad a[i] = b[i] + s c[i] over arrays far larger than the
// last level on all of the host's threads and counts 3 arrays of bytes, as STREAM does. The
// DRAM moves more: a store that misses is a read for ownership first (write-allocate), so
// the triad's traffic is 4 arrays (McCalpin, STREAM FAQ: "counting bytes"), and how much
// of the channels' peak a read/write mix reaches is the simulated controller's to say (its
// bus turnarounds, refreshes, row conflicts), not one fraction for every host. A channel
// count from measured / (fixed fraction x peak) so left the simulated DRAM 1.3-1.5x slower
// than the host (2026-12-07, a 2-core EPYC VM: its triad 44 GB/s on 3 DDR5-5600 channels,
// resnet18's SGD updates of 9.4 MiB layers measured 0.44 ms where the model's memory
// alone took 0.65 ms). This closes the loop instead: the same kernel (an `add` of two
// arrays into a third: the triad's traffic, without its multiply) is simulated on the
// machine file at each channel count, tensor fidelity as predictions run, its
// memory alone (no compute), counted the way the measurement counts, and the count whose
// time is nearest in ratio wins.
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

struct DramChannelFit {
  int channels = 0;
  double simulated_gbs = 0;              // at `channels`
  std::vector<DramChannelTrial> trials;  // every count simulated: 1, 2, ...
};

// `machine` a machine document with a "dram" object ("preset", "channels": replaced);
// `measured_gbs` the triad's GB/s (1e9 B/s, 3 arrays of `array_bytes` counted per pass)
// on the threads the machine's ops use. Tries 1, 2, ... channels until two counts in a
// row simulate at least the measured bandwidth, or kSaturated counts in a row add under 1%
// to the highest so far, or kMaxChannels, and returns the count nearest in ratio. The document is
// not changed.
constexpr int kMaxChannels = 64, kSaturated = 4;
DramChannelFit fit_dram_channels(const nlohmann::json& machine, double measured_gbs,
                                 std::int64_t array_bytes);

}  // namespace fusim::exec

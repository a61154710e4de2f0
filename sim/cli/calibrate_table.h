#pragma once
// calibrate's summary table: one row per quantity it measured of the host and fitted, from
// the machine file it wrote (as read back) and the probe samples behind its "host" section.
#include <vector>

#include "backend/calibration.h"
#include "backend/executor.h"
#include "core/table.h"
#include "exec/machine.h"

namespace fusim::cli {

struct HostProbeSamples {
  std::vector<double> dram_gbs;         // the DRAM probe's samples (host.dram_triad_samples)
  backend::SampleSpread speed;          // the op speed probe's samples the costs describe
  bool normalized = false;              // the op costs were normalized to speed.median
  std::vector<double> core_to_core_ns;  // the core-to-core probe's (empty: not taken)
};

Table calibration_table(const backend::Calibration& c, const exec::Machine& written,
                        const HostProbeSamples& probes);

}  // namespace fusim::cli

// The memory side of a machine (machine_memory.h).
#include "exec/machine_memory.h"

#include <fmt/format.h>

#include "mem/cache/fixed_memory.h"
#include "mem/dram/dram_system.h"

namespace fusim::exec {
namespace {

// Share of a DRAM system's peak bandwidth that long sequential read streams sustain under
// FR-FCFS with open rows: refresh alone takes tRFC/tREFI (350 ns / 7.8 us = 4.5% on 16 Gb
// DDR4, JESD79-4), row switches and read/write turnarounds the rest; STREAM on DDR4/DDR5
// servers reaches 80-90% of peak (e.g. McCalpin's STREAM results; Intel's Xeon 8380
// reference ~ 170 of 204.8 GB/s). Used only for the analytic GEMM re-reads.
constexpr double kStreamingEfficiency = 0.85;

}  // namespace

MainMemory make_main_memory(const Machine& m, EventQueue& queue) {
  MainMemory out;
  if (const auto* fixed = std::get_if<FixedLatency>(&m.memory)) {
    auto memory = std::make_unique<mem::FixedLatencyMemory>(queue, fixed->latency,
                                                            fixed->bandwidth_gbps * 1e9);
    const mem::FixedLatencyMemory* f = memory.get();
    out.busy = [f] { return f->in_flight() > 0; };
    out.describe = [f] {
      return fmt::format("fixed-latency memory: {} requests in flight; {} reads, {} writes sent\n",
                         f->in_flight(), f->stats().reads, f->stats().writes);
    };
    out.port = std::move(memory);
    return out;
  }
  auto system =
      std::make_unique<dram::DramSystem>(std::get<dram::DramSpec>(m.memory), queue, m.file);
  system->set_wake_mode(dram::WakeMode::Lookahead);
  const dram::DramSystem* d = system.get();
  out.busy = [d] { return d->in_flight() > 0; };
  out.describe = [d] {
    const dram::DramStats s = d->stats();
    return fmt::format(
        "DRAM {} ({} channels): {} requests in flight; {} reads, {} writes completed; last "
        "data at {} ps\n",
        d->spec().name, d->channel_count(), d->in_flight(), s.reads, s.writes,
        d->last_completion());
  };
  out.requesters = [d] {
    const dram::DramStats s = d->stats();
    std::vector<DramRequesterReads> r(s.requesters.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
      r[i].requester = static_cast<int>(i);
      r[i].reads = static_cast<std::int64_t>(s.requesters[i].reads);
      r[i].latency = s.requesters[i].read_latency_cycles * s.tCK;
    }
    return r;
  };
  out.port = std::move(system);
  return out;
}

double streaming_bytes_per_ps(const Machine& m) {
  if (const auto* fixed = std::get_if<FixedLatency>(&m.memory)) return fixed->bandwidth_gbps * 1e-3;
  return std::get<dram::DramSpec>(m.memory).peak_bandwidth_bytes_per_s() * kStreamingEfficiency *
         1e-12;
}

}  // namespace fusim::exec

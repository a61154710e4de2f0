#include "cli/calibrate_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compute/cost_fit.h"
#include "core/units.h"

namespace fusim::cli {

Table calibration_table(const backend::Calibration& c, const exec::Machine& written,
                        const HostProbeSamples& probes) {
  Table table({"quantity", "value"});
  table.add_row({"cores", std::to_string(c.cores)});
  table.add_row({"threads per op", std::to_string(c.threads)});
  table.add_row({"clock", fmt::format("{:.0f} MHz", c.clock_mhz)});
  table.add_row({"FP32 FLOP/cycle/core", fmt::format("{:.1f}", c.vector_flops_per_cycle)});
  for (const auto& l : c.levels)
    table.add_row(
        {l.name, fmt::format("{} , {:.2f} ns ({})", format_bytes(l.size), l.latency_ns, l.how)});
  table.add_row({"DRAM idle latency", fmt::format("{:.1f} ns", c.dram_latency_ns)});
  table.add_row(
      {"DRAM read/copy/triad, 1 thread",
       fmt::format("{:.1f} / {:.1f} / {:.1f} GB/s", c.bw_one.read, c.bw_one.copy, c.bw_one.triad)});
  table.add_row(
      {fmt::format("DRAM read/copy/triad, {} threads", c.cores),
       fmt::format("{:.1f} / {:.1f} / {:.1f} GB/s", c.bw_all.read, c.bw_all.copy, c.bw_all.triad)});
  table.add_row({fmt::format("DRAM probe, {} thread(s), samples", written.compute.threads_per_op),
                 fmt::format("{:.1f} GB/s (median {:.1f}: host.dram_triad_gbs)",
                             fmt::join(probes.dram_gbs.begin(), probes.dram_gbs.end(), " / "),
                             written.host.dram_triad_gbs)});
  table.add_row(
      {fmt::format("op speed probe, {} thread(s)", written.compute.threads_per_op),
       fmt::format("{:.0f} to {:.0f} us over {} samples (median {:.0f}: "
                   "host.op_probe_us{})",
                   probes.speed.min, probes.speed.max, probes.speed.samples, probes.speed.median,
                   probes.normalized ? ", the op costs normalized to it" : "")});
  if (!probes.core_to_core_ns.empty())
    table.add_row(
        {"core-to-core probe, samples",
         fmt::format("{:.0f} ns (median {:.0f}: host.core_to_core_ns)",
                     fmt::join(probes.core_to_core_ns.begin(), probes.core_to_core_ns.end(), " / "),
                     written.host.core_to_core_ns)});
  table.add_row(
      {"GEMM / conv", fmt::format("{:.1f} / {:.1f} GFLOP/s", c.ops.gemm / 1e9, c.ops.conv / 1e9)});
  table.add_row({"dispatch overhead", fmt::format("{:.0f} ns", c.ops.dispatch_ns)});
  for (const auto& [family, f] : written.compute.op_costs.families) {
    const bool fixed_only = family.rfind("view.", 0) == 0 || family.rfind("default.", 0) == 0 ||
                            family.rfind("switch.", 0) == 0;
    std::string terms =
        f.per_kernel_ns > 0 ? fmt::format(" + {:.0f} ns/kernel", f.per_kernel_ns) : "";
    if (f.per_channel_ns > 0) terms += fmt::format(" + {:.0f} ns/channel", f.per_channel_ns);
    if (f.per_ragged_plane_ns > 0)
      terms += fmt::format(" + {:.0f} ns/ragged plane", f.per_ragged_plane_ns);
    const std::string dropped = f.dropped_points > 0
                                    ? fmt::format(
                                          " ({} more left out: the model's memory alone was "
                                          "slower than measured)",
                                          f.dropped_points)
                                    : "";
    table.add_row(
        {"op_costs." + family,
         family.rfind("default.", 0) == 0
             ? fmt::format("fixed {:.0f} ns (median of {} families' fixed costs)", f.fixed_ns,
                           f.points)
         : family.rfind("switch.", 0) == 0
             ? fmt::format("{:.0f} ns + {:.0f} ns per MiB the update touches (over {} layers "
                           "at 2 widths)",
                           f.fixed_ns, f.per_mib_ns, f.points)
         : fixed_only
             ? fmt::format("fixed {:.0f} ns, fit error {:.1f}% over {} points", f.fixed_ns,
                           f.fit_error_pct, f.points)
             : fmt::format("fixed {:.0f} ns{}, eff {:.3f}, fit error {:.1f}%{} over {} points{}",
                           f.fixed_ns, terms, f.efficiency, f.fit_error_pct,
                           f.anchors.empty() ? std::string()
                           : f.anchor_reach == compute::kExactReach
                               ? std::string(" (anchors for the probed shapes alone)")
                               : fmt::format(" ({:.1f}% with anchors of reach x{:.2f}, "
                                             "leave-one-out)",
                                             f.local_error_pct, f.anchor_reach),
                           f.points, dropped)});
  }
  if (const auto& mc = written.compute.model_context; mc.given()) {
    std::string parts = fmt::format("{:.1f} us + {:.1f} us x (1 - exp(-dt / {:g} ms))",
                                    mc.base_ns / 1e3, mc.cold_ns / 1e3, mc.decay_us / 1e3);
    for (const auto& p : mc.slower)
      parts +=
          fmt::format(" + {:.1f} us x (1 - exp(-dt / {:g} ms))", p.cold_ns / 1e3, p.decay_us / 1e3);
    table.add_row({"model context", parts + " per op, dt since its family last ran"});
  }
  return table;
}

}  // namespace fusim::cli

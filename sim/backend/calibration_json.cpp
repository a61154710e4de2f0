// The machine file `fusim calibrate` writes: host-template.json's shape, every number
// measured here and its method cited under "sources".
#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "backend/calibration.h"
#include "core/json_view.h"
#include "core/units.h"
#include "exec/machine.h"

namespace fusim::backend {
namespace {
double fraction(double v) {
  return std::clamp(v, 1e-4, 1.0);
}
// Four significant digits: memory-light op classes reach a few thousandths of peak.
double round3(double v) {
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(v)));
  return std::round(v * scale) / scale;
}

// A DDR5 platform since AMD Zen 4 (family 0x19 model >= 0x10, and family 0x1A) and Intel
// Sapphire Rapids (AMX): the preset only sets the device timing; the channel count is fitted
// to the measured bandwidth below.
std::string dram_preset() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-tile") ? "ddr5-5600"
                                                                                    : "ddr4-3200";
}
}  // namespace

nlohmann::json machine_json(const Calibration& c, const std::string& name) {
  using nlohmann::json;
  const double ghz = c.clock_mhz / 1000.0;
  // The op classes ran on c.threads cores: their efficiency is against those cores' peak,
  // as the simulator divides an op's work by the peak of its threads_per_op cores.
  const double peak = c.threads * c.clock_mhz * 1e6 * c.vector_flops_per_cycle;
  json sources;
  json compute{{"cores", c.cores},
               {"clock_mhz", std::round(c.clock_mhz)},
               {"vector_flops_per_cycle", {{"float32", std::round(c.vector_flops_per_cycle)}}},
               {"efficiency",
                {{"gemm", round3(fraction(c.ops.gemm / peak))},
                 {"conv", round3(fraction(c.ops.conv / peak))},
                 {"elementwise", round3(fraction(c.ops.elementwise / peak))},
                 {"norm", round3(fraction(c.ops.norm / peak))},
                 {"reduction", round3(fraction(c.ops.reduction / peak))},
                 {"pool", round3(fraction(c.ops.pool / peak))},
                 {"attention", round3(fraction(c.ops.attention / peak))}}},
               {"dispatch_overhead_ns", std::round(c.ops.dispatch_ns)},
               {"threads_per_op", c.threads}};
  sources["compute.cores"] = "std::thread::hardware_concurrency (logical CPUs this process sees)";
  sources["compute.threads_per_op"] =
      fmt::format("calibrate --threads: the op probes ran on {} thread{}", c.threads,
                  c.threads == 1 ? "" : "s");
  sources["compute.clock_mhz"] = "8 dependent IMUL r64 per loop iteration, 3 cycles each";
  sources["compute.vector_flops_per_cycle"] =
      fmt::format("measured: 12 independent FMA chains, widest ISA, {:.1f} FLOP/cycle",
                  c.vector_flops_per_cycle);
  sources["compute.efficiency"] = fmt::format(
      "libtorch forward on in-cache operands, FLOPs by workload::layer_cost, / peak {:.1f} "
      "GFLOP/s: gemm {:.1f}, conv {:.1f}, elementwise {:.2f}, norm {:.2f}, reduction {:.2f}, "
      "pool {:.2f}, attention {:.1f} GFLOP/s",
      peak / 1e9, c.ops.gemm / 1e9, c.ops.conv / 1e9, c.ops.elementwise / 1e9, c.ops.norm / 1e9,
      c.ops.reduction / 1e9, c.ops.pool / 1e9, c.ops.attention / 1e9);
  sources["compute.dispatch_overhead_ns"] = "best mean time of a 1-element at::add, 20000 calls";

  // MSHRs by Little's law: misses in flight = bandwidth x latency / line, for one core
  // streaming from DRAM, and (where the LLC was found by streaming) from the LLC: the
  // hardware's prefetchers keep that many lines in flight, whichever level serves them.
  const double mlp_dram = c.bw_one.read * c.dram_latency_ns / 64.0;
  const double llc_ns = c.levels.empty() ? 0 : c.levels.back().latency_ns;
  const double mlp_llc = c.llc_triad_one * llc_ns / 64.0;
  const double mlp_one = std::max(mlp_dram, mlp_llc);
  json levels = json::array();
  double prev_ns = 0;
  const auto widths = stream_port_widths(c.levels, c.bw_curve, c.threads, c.clock_mhz);
  for (std::size_t k = 0; k < c.levels.size(); ++k) {
    const auto& l = c.levels[k];
    const auto cycles = std::max<std::int64_t>(1, std::llround((l.latency_ns - prev_ns) * ghz));
    prev_ns = l.latency_ns;
    const auto mshrs =
        std::max<std::int64_t>(4, std::llround(l.shared ? mlp_one * c.cores : mlp_one));
    levels.push_back({{"name", l.name},
                      {"size", format_bytes(l.size)},
                      {"assoc", l.assoc},
                      {"line", 64},
                      {"policy", "lru"},
                      {"latency_cycles", cycles},
                      {"mshrs", mshrs},
                      {"shared", l.shared}});
    if (widths[k].bytes_per_cycle > 0) {
      levels.back()["bytes_per_cycle"] = widths[k].bytes_per_cycle;
      sources["caches." + l.name + ".bytes_per_cycle"] =
          widths[k].points == 0
              ? fmt::format(
                    "no triad footprint in its range: the narrowest level above it "
                    "({:.1f} GB/s), as nothing streams faster from farther out",
                    widths[k].gbs)
              : fmt::format(
                    "the {}-thread triad streams {:.1f} GB/s{} from here (median of {} "
                    "footprint{} in its range, caches.triad_gbs) at {:.0f} MHz",
                    c.threads, widths[k].gbs, l.shared ? "" : " a thread", widths[k].points,
                    widths[k].points == 1 ? "" : "s", c.clock_mhz);
    }
    sources["caches." + l.name + ".size"] = l.how;
    sources["caches." + l.name + ".latency_cycles"] =
        fmt::format("pointer chase plateau {:.2f} ns, minus the level above, at {:.0f} MHz",
                    l.latency_ns, c.clock_mhz);
  }
  sources["caches.levels.mshrs"] = fmt::format(
      "Little's law, the larger of: 1-thread DRAM read {:.1f} GB/s x idle latency {:.1f} ns / 64 "
      "B = {:.1f}; 1-thread triad in the LLC {:.1f} GB/s x its latency {:.1f} ns / 64 B = {:.1f} "
      "(x cores for shared levels)",
      c.bw_one.read, c.dram_latency_ns, mlp_dram, c.llc_triad_one, llc_ns, mlp_llc);
  std::string bw_curve = fmt::format(
      "{} thread{}, each point the best of {} sweep{}{}: ", c.threads, c.threads == 1 ? "" : "s",
      c.bw_sweeps, c.bw_sweeps == 1 ? "" : "s",
      c.bw_disturbed > 0
          ? fmt::format(" ({} point{} differed by more than {:.0f}% between sweeps: a busy host)",
                        c.bw_disturbed, c.bw_disturbed == 1 ? "" : "s", (kSweepSpread - 1) * 100)
          : std::string());
  for (const auto& p : c.bw_curve)
    bw_curve += fmt::format("{} {:.1f}; ", format_bytes(p.bytes), p.gbs);
  sources["caches.triad_gbs"] = bw_curve;
  std::string curve;
  for (const auto& p : c.curve) curve += fmt::format("{} {:.2f}; ", format_bytes(p.bytes), p.ns);
  sources["caches.curve_ns"] = curve;

  // Channels, a first guess: measured all-thread triad over ~75% of one channel's peak (a
  // typical STREAM fraction of DDR peak), at least 1. calibrate then simulates the triad on
  // the model and moves to the count that matches it (exec/dram_fit.h).
  const std::string preset = dram_preset();
  const auto preset_doc = load_json_file(exec::machines_dir() + "/dram/" + preset + ".json");
  const double rate = preset_doc.at("data_rate_mts").get<double>();
  const double width = preset_doc.at("organization").at("bus_width_bits").get<double>();
  const double channel_gbs = rate * 1e6 * width / 8 / 1e9;
  // Rounded up: the simulated DRAM must be able to carry what was measured.
  const int channels = std::max(1, int(std::ceil(c.bw_all.triad / (0.75 * channel_gbs) - 0.05)));
  json dram{{"preset", preset}, {"channels", channels}};
  sources["dram"] = fmt::format(
      "STREAM-like, {} arrays: 1 thread read/copy/triad {:.1f}/{:.1f}/{:.1f} GB/s, {} "
      "threads {:.1f}/{:.1f}/{:.1f} GB/s; idle latency {:.1f} ns (pointer chase at {}); preset "
      "by CPU generation, channels first guessed as triad / (0.75 x {:.1f} GB/s per channel), "
      "rounded up (dram.channels: the count calibrate chose)",
      format_bytes(c.dram_array_bytes), c.bw_one.read, c.bw_one.copy, c.bw_one.triad, c.cores,
      c.bw_all.read, c.bw_all.copy, c.bw_all.triad, c.dram_latency_ns,
      format_bytes(c.curve.back().bytes), channel_gbs);

  return json{
      {"name", name},
      {"kind", "cpu"},
      {"description", "This host as measured by `fusim calibrate`."},
      {"compute", compute},
      {"caches", {{"clock", fmt::format("{}MHz", std::lround(c.clock_mhz))}, {"levels", levels}}},
      {"dram", dram},
      {"sources", sources}};
}

}  // namespace fusim::backend

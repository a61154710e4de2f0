// fusim calibrate: measures this host (cache levels by pointer chase, DRAM bandwidth and
// latency, per-op-class libtorch throughput, dispatch overhead) into a machine file that
// `fusim simulate --machine` reads. Built only with libtorch (FUSIM_WITH_TORCH).
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>
#include <chrono>

#include "backend/calibration.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/units.h"
#include "exec/machine.h"

namespace fusim::cli {
namespace {

struct CalibrateCmdOptions {
  std::string output = "models/machines/host.json", name = "host";
  OutputFormat format;
};

void run_calibrate(const CalibrateCmdOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  auto progress = [&](const std::string& phase) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "calibrate [{:5.1f} s]: {}\n", s, phase);
  };
  const auto c = backend::calibrate_host(progress);
  const auto doc = backend::machine_json(c, opt.name);
  // The output must load as a machine: a failure here is a bug in calibrate, not bad input.
  exec::parse_machine(doc, opt.output);
  write_file_atomically(opt.output, doc.dump(2) + "\n", "-o");
  progress("wrote " + opt.output);

  Table table({"quantity", "value"});
  table.add_row({"cores", std::to_string(c.cores)});
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
  table.add_row(
      {"GEMM / conv", fmt::format("{:.1f} / {:.1f} GFLOP/s", c.ops.gemm / 1e9, c.ops.conv / 1e9)});
  table.add_row({"dispatch overhead", fmt::format("{:.0f} ns", c.ops.dispatch_ns)});
  print_result(opt.format, doc, table);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto opt = std::make_shared<CalibrateCmdOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure this host into a machine model (models/machines/SCHEMA.md): cache levels\n"
      "and latencies from a pointer-chase latency-vs-footprint curve (sysfs/CPUID sizes\n"
      "only as hints), DRAM read/copy/triad bandwidth with 1 and all threads and idle\n"
      "latency, clock and FMA throughput, per-op-class libtorch throughput (GEMM, conv,\n"
      "elementwise, norm, reduction, pool, attention) and the per-op dispatch overhead.\n"
      "Progress on stderr; about a minute. The file is checked with the machine reader.");
  cmd->add_option("-o,--output", opt->output, "Machine file to write")->capture_default_str();
  cmd->add_option("--name", opt->name, "The machine's name in the file")->capture_default_str();
  add_output_flags(cmd, opt->format, false);
  cmd->callback([opt] { run_calibrate(*opt); });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH

// `fusim bench dram`: replay speed of the DRAM model in requests per second of wall time,
// on the scenarios DRAMsim3 is usually timed with (DDR4-3200, one channel, random and
// stream traces) and on an HBM3 stack (32 pseudo-channels). Trace generation is not timed.
#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/error.h"
#include "mem/dram/trace_replay.h"

namespace fusim::cli {
namespace {

struct BenchDramOptions {
  std::uint64_t requests = 2'000'000;
  OutputFormat format;
};

struct Scenario {
  const char* name;
  const char* preset;
  dram::TracePattern pattern;
};

void run_bench_dram(const BenchDramOptions& opt) {
  if (opt.requests < 1000) throw InputError("--requests: expected at least 1000");
  const Scenario scenarios[] = {
      {"ddr4-3200 1ch random", "ddr4-3200", dram::TracePattern::Random},
      {"ddr4-3200 1ch stream", "ddr4-3200", dram::TracePattern::Stream},
      {"hbm3 16ch x 2pc random", "hbm3", dram::TracePattern::Random},
      {"hbm3 16ch x 2pc stream", "hbm3", dram::TracePattern::Stream},
  };
  Table table(
      {"scenario", "requests", "simulated_us", "bandwidth_GBps", "wall_s", "requests_per_s"});
  nlohmann::json rows = nlohmann::json::array();
  for (const Scenario& sc : scenarios) {
    const dram::DramSpec spec = dram::load_dram_preset(sc.preset);
    dram::TraceGenOptions o;
    o.pattern = sc.pattern;
    o.reads = 2;  // two reads per write, one request offered per DRAM cycle
    o.writes = 1;
    o.count = opt.requests;
    o.interval = 1;
    o.footprint = std::uint64_t{1} << 32;
    o.seed = 42;
    const auto trace = dram::generate_trace(o);
    EventQueue queue;
    dram::DramSystem system(spec, queue, sc.preset);
    std::fprintf(stderr, "bench dram: %s, %llu requests...\n", sc.name,
                 static_cast<unsigned long long>(opt.requests));
    const auto t0 = std::chrono::steady_clock::now();
    const dram::ReplayResult r = dram::replay_trace(system, queue, trace);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = static_cast<double>(r.stats.requests()) / wall;
    const double bw = r.stats.bandwidth_bytes_per_s() / 1e9;
    std::fprintf(stderr, "bench dram: %s: %.3f s, %.2f M requests/s\n", sc.name, wall, rate / 1e6);
    table.add_row({sc.name, std::to_string(r.stats.requests()),
                   fmt::format("{:.1f}", to_us(r.stats.elapsed)), fmt::format("{:.2f}", bw),
                   fmt::format("{:.3f}", wall), fmt::format("{:.0f}", rate)});
    rows.push_back({{"scenario", sc.name},
                    {"preset", sc.preset},
                    {"requests", r.stats.requests()},
                    {"simulated_seconds", to_seconds(r.stats.elapsed)},
                    {"bandwidth_gbps", bw},
                    {"wall_seconds", wall},
                    {"requests_per_s", rate}});
  }
  print_result(opt.format, nlohmann::json{{"dram", rows}}, table);
}

}  // namespace

void add_bench_dram_command(CLI::App& bench) {
  auto opt = std::make_shared<BenchDramOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "dram",
      "Requests per second (wall time) of DRAM trace replay: DDR4-3200 one channel, random\n"
      "and stream traces, and an HBM3 stack (16 channels x 2 pseudo-channels), random and\n"
      "stream; 2:1 reads to writes, one request offered per cycle (saturating, like\n"
      "DRAMsim3's random/stream generators). Trace generation is not timed.");
  cmd->add_option("--requests", opt->requests, "Requests per scenario")->capture_default_str();
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_bench_dram(*opt); });
}

}  // namespace fusim::cli

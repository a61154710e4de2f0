// `fusim bench dram`: replay speed of the DRAM model in requests per second of wall and of
// CPU time (the process's std::clock(): on a loaded machine wall time also counts the
// time other processes hold the cores),
// on the scenarios DRAMsim3 is usually timed with (DDR4-3200, one channel, random and
// stream traces) and on an HBM3 stack (32 pseudo-channels). Trace generation is not timed.
// The replay drives the controllers directly by default (DirectReplay);
// --driver events times the event-driven replay (a wake-up event per channel), whose
// commands are the same, to show what the event queue costs; --driver lookahead the same
// with one lookahead wake-up for all channels, as simulate drives a machine's DRAM.
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "mem/dram/trace_replay.h"

namespace fusim::cli {
namespace {

struct BenchDramOptions {
  std::uint64_t requests = 2'000'000;
  std::string driver = "direct";
  std::vector<std::string> only;  // scenario keys; empty = all
  OutputFormat format;
};

struct Scenario {
  const char* key;
  const char* name;
  const char* preset;
  dram::TracePattern pattern;
};

void run_bench_dram(const BenchDramOptions& opt) {
  if (opt.requests < 1000) throw InputError("--requests: expected at least 1000");
  // Generated in memory per scenario (as dram gen's -n): refused before allocating.
  check_memory_budget("--requests", "", "generated requests", opt.requests,
                      sizeof(dram::TraceRequest));
  const Scenario scenarios[] = {
      {"ddr4-random", "ddr4-3200 1ch random", "ddr4-3200", dram::TracePattern::Random},
      {"ddr4-stream", "ddr4-3200 1ch stream", "ddr4-3200", dram::TracePattern::Stream},
      {"hbm3-random", "hbm3 16ch x 2pc random", "hbm3", dram::TracePattern::Random},
      {"hbm3-stream", "hbm3 16ch x 2pc stream", "hbm3", dram::TracePattern::Stream},
  };
  Table table({"scenario", "requests", "simulated_us", "bandwidth_GBps", "wall_s", "cpu_s",
               "requests_per_s", "requests_per_cpu_s"});
  nlohmann::json rows = nlohmann::json::array();
  for (const Scenario& sc : scenarios) {
    if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), sc.key) == opt.only.end())
      continue;
    const dram::DramSpec spec = dram::load_dram_preset(sc.preset);
    dram::TraceGenOptions o;
    o.pattern = sc.pattern;
    o.reads = 4;  // 20% writes (as issue #17 times it), one request offered per DRAM cycle
    o.writes = 1;
    o.count = opt.requests;
    o.interval = 1;
    o.footprint = std::uint64_t{1} << 32;
    o.seed = 42;
    const auto trace = dram::generate_trace(o);
    EventQueue queue;
    dram::DramSystem system(spec, queue, sc.preset);
    if (opt.driver == "lookahead") system.set_wake_mode(dram::WakeMode::Lookahead);
    std::fprintf(stderr, "bench dram: %s, %llu requests...\n", sc.name,
                 static_cast<unsigned long long>(opt.requests));
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    const dram::ReplayResult r = dram::replay_trace(
        system, queue, trace, dram::kNoCycle, 64,
        opt.driver == "direct" ? dram::ReplayDriver::Direct : dram::ReplayDriver::Events);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const double rate = static_cast<double>(r.stats.requests()) / wall;
    const double cpu_rate = static_cast<double>(r.stats.requests()) / std::max(cpu, 1e-9);
    const double bw = r.stats.bandwidth_bytes_per_s() / 1e9;
    std::fprintf(stderr, "bench dram: %s: %.3f s wall (%.2f M requests/s), %.3f s CPU (%.2f M/s)\n",
                 sc.name, wall, rate / 1e6, cpu, cpu_rate / 1e6);
    table.add_row({sc.name, std::to_string(r.stats.requests()),
                   fmt::format("{:.1f}", to_us(r.stats.elapsed)), fmt::format("{:.2f}", bw),
                   fmt::format("{:.3f}", wall), fmt::format("{:.3f}", cpu),
                   fmt::format("{:.0f}", rate), fmt::format("{:.0f}", cpu_rate)});
    rows.push_back({{"scenario", sc.name},
                    {"preset", sc.preset},
                    {"driver", opt.driver},
                    {"requests", r.stats.requests()},
                    {"simulated_seconds", to_seconds(r.stats.elapsed)},
                    {"bandwidth_gbps", bw},
                    {"wall_seconds", wall},
                    {"cpu_seconds", cpu},
                    {"requests_per_s", rate},
                    {"requests_per_cpu_s", cpu_rate}});
  }
  print_result(opt.format, nlohmann::json{{"dram", rows}}, table,
               {{rows,
                 {"scenario", "preset", "driver", "requests", "simulated_seconds", "bandwidth_gbps",
                  "wall_seconds", "cpu_seconds", "requests_per_s", "requests_per_cpu_s"}}});
}

}  // namespace

void add_bench_dram_command(CLI::App& bench) {
  auto opt = std::make_shared<BenchDramOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "dram",
      "Requests per second (wall and CPU time) of DRAM trace replay: DDR4-3200 one channel, "
      "random\n"
      "and stream traces, and an HBM3 stack (16 channels x 2 pseudo-channels), random and\n"
      "stream; 20% writes, one request offered per cycle (saturating, like\n"
      "DRAMsim3's random/stream generators). Trace generation is not timed.\n"
      "Example:\n"
      "  fusim bench dram --scenario hbm3-random --driver lookahead");
  cmd->add_option("--requests", opt->requests, "Requests per scenario")->capture_default_str();
  cmd->add_option("--driver", opt->driver,
                  "direct: the replay drives the controllers itself (as `fusim dram` does);\n"
                  "events: every arrival, retry and channel wake-up is an event on the\n"
                  "event queue; lookahead: the same with one wake-up event running every\n"
                  "channel up to a safe horizon (as simulate drives a machine's DRAM).\n"
                  "All three issue the same commands.")
      ->check(CLI::IsMember({"direct", "events", "lookahead"}))
      ->capture_default_str();
  cmd->add_option("--scenario", opt->only,
                  "Run only these scenarios (repeatable; default: all four), e.g. to profile\n"
                  "one of them")
      ->check(CLI::IsMember({"ddr4-random", "ddr4-stream", "hbm3-random", "hbm3-stream"}));
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_bench_dram(*opt); });
}

}  // namespace fusim::cli

// `fusim bench`: speed of the simulator's own parts. `bench caches` measures accesses per
// second through a 3-level hierarchy (synchronous path) in line and block fidelity on a mix
// of streaming and reuse; the median of several repetitions, each on a fresh hierarchy.
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <vector>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/error.h"
#include "core/json_view.h"
#include "mem/cache/hierarchy.h"

namespace fusim::cli {
namespace {

// A server core of today (Sapphire Rapids-like: 48 KiB L1D, 2 MiB L2, shared 32 MiB LLC).
constexpr const char* kBenchHierarchy = R"({"clock":"3GHz","levels":[
  {"name":"L1","size":"48KiB","assoc":12,"line":64,"latency_cycles":5},
  {"name":"L2","size":"2MiB","assoc":16,"line":64,"latency_cycles":16,"policy":"srrip"},
  {"name":"LLC","size":"32MiB","assoc":16,"line":64,"latency_cycles":60,"shared":true}]})";

struct BenchCachesOptions {
  int reps = 5;
  double line_accesses = 20e6;
  OutputFormat format;
};

// One round is a streaming + reuse mix of 2560 unit accesses in line fidelity: a 16 KiB read
// of never-seen data (streaming activations: misses to memory), a 16 KiB write inside a 1 MiB
// region that stays in L2 (gradients reused op after op), and eight reads of a 16 KiB tile
// that stays in L1 (a blocked kernel's working set): 80% of the accesses hit L1.
std::uint64_t run_rounds(cache::Hierarchy& h, std::uint64_t rounds) {
  constexpr std::uint64_t kStreamBase = 1ull << 32, kReuseBase = 1ull << 30, kReuse = 1u << 20;
  constexpr std::uint64_t kTileBase = 1ull << 28, kTile = 16 * 1024;
  std::uint64_t units = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    units += h.access_range(0, kStreamBase + r * kTile, kTile, cache::AccessKind::Read).units;
    units +=
        h.access_range(0, kReuseBase + (r * kTile) % kReuse, kTile, cache::AccessKind::Write).units;
    for (int pass = 0; pass < 8; ++pass)
      units += h.access_range(0, kTileBase, kTile, cache::AccessKind::Read).units;
  }
  return units;
}

// CPU time of this thread: the simulator's speed on one core, undisturbed by other processes
// sharing the machine (wall time is reported beside it).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Measured {
  std::uint64_t units = 0;
  double median_cpu_s = 0, median_wall_s = 0;
};

Measured measure(const cache::HierarchyConfig& config, cache::Fidelity fidelity,
                 std::uint64_t rounds, int reps) {
  std::vector<double> cpu, wall;
  Measured m;
  for (int i = 0; i < reps; ++i) {
    cache::Hierarchy h(config, fidelity, 1);
    auto w0 = std::chrono::steady_clock::now();
    double c0 = thread_cpu_seconds();
    m.units = run_rounds(h, rounds);
    cpu.push_back(thread_cpu_seconds() - c0);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    std::fprintf(stderr, "bench caches: %s fidelity, repetition %d/%d: %.3f s cpu, %.3f s wall\n",
                 cache::to_string(fidelity), i + 1, reps, cpu.back(), wall.back());
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  m.median_cpu_s = cpu[cpu.size() / 2];
  m.median_wall_s = wall[wall.size() / 2];
  return m;
}

void run_bench_caches(const BenchCachesOptions& opt) {
  if (opt.reps < 1) throw InputError("--reps: expected a positive integer");
  if (!(opt.line_accesses >= 2560)) throw InputError("--accesses: expected at least 2560");
  nlohmann::json doc = parse_json_text(kBenchHierarchy, "bench hierarchy");
  cache::HierarchyConfig config = cache::parse_hierarchy_config(JsonView(doc, "bench hierarchy"));
  auto rounds = static_cast<std::uint64_t>(opt.line_accesses / 2560);
  Measured line = measure(config, cache::Fidelity::Line, rounds, opt.reps);
  // Block mode moves 64x fewer units per byte: run 16x the bytes so the timing is not noise.
  Measured block = measure(config, cache::Fidelity::Block, rounds * 16, opt.reps);
  double line_rate = static_cast<double>(line.units) / line.median_cpu_s;
  double block_rate = static_cast<double>(block.units) / block.median_cpu_s;
  Table table({"fidelity", "unit_bytes", "accesses", "median_cpu_s", "median_wall_s",
               "accesses_per_s", "simulated_GB_per_s"});
  nlohmann::json rows = nlohmann::json::array();
  auto row = [&](const char* name, std::int64_t unit, const Measured& m, double rate) {
    const double gb_per_s = rate * static_cast<double>(unit) / 1e9;
    table.add_row({name, std::to_string(unit), std::to_string(m.units),
                   fmt::format("{:.4f}", m.median_cpu_s), fmt::format("{:.4f}", m.median_wall_s),
                   fmt::format("{:.4g}", rate), fmt::format("{:.3g}", gb_per_s)});
    rows.push_back({{"fidelity", name},
                    {"unit_bytes", unit},
                    {"accesses", m.units},
                    {"median_cpu_s", m.median_cpu_s},
                    {"median_wall_s", m.median_wall_s},
                    {"accesses_per_s", rate},
                    {"simulated_gb_per_s", gb_per_s}});
  };
  row("line", config.levels[0].line_bytes, line, line_rate);
  row("block", config.block_bytes, block, block_rate);
  const nlohmann::json json{{"line_accesses_per_s", line_rate},
                            {"block_accesses_per_s", block_rate},
                            {"fidelities", rows}};
  print_result(opt.format, json, table,
               {{rows,
                 {"fidelity", "unit_bytes", "accesses", "median_cpu_s", "median_wall_s",
                  "accesses_per_s", "simulated_gb_per_s"}}});
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench",
                                       "Measure the speed of the simulator's own parts.\n"
                                       "Example:\n"
                                       "  fusim bench caches --reps 3 --json");
  bench->require_subcommand(1);

  auto opt = std::make_shared<BenchCachesOptions>();
  CLI::App* caches = bench->add_subcommand(
      "caches",
      "Accesses per second through a 3-level hierarchy (48KiB L1, 2MiB L2, shared 32MiB LLC)\n"
      "in line (64 B) and block (4 KiB) fidelity, on a mix of streaming reads (misses to\n"
      "memory), writes to an L2-resident region and re-reads of an L1-resident tile (80% of\n"
      "line accesses hit L1); median of --reps repetitions, progress on stderr.\n"
      "Rates are per second of this thread's CPU time (one core; wall time shown beside).\n"
      "Example:\n"
      "  fusim bench caches --reps 5");
  caches->add_option("--reps", opt->reps, "Repetitions (the median is reported)")
      ->capture_default_str();
  caches->add_option("--accesses", opt->line_accesses, "Line accesses per line-mode repetition")
      ->capture_default_str();
  add_output_flags(caches, opt->format);
  caches->callback([opt] { run_bench_caches(*opt); });
  add_bench_dram_command(*bench);      // sim/cli/bench_dram_cmd.cpp
  add_bench_simulate_command(*bench);  // sim/cli/bench_simulate_cmd.cpp
}

}  // namespace fusim::cli

// `fusim bench simulate`: the simulator's speed goals of issue 17 and the accuracy of the
// `tensor` fidelity against `line`, each figure the median of repeated runs:
//  - speed: one ordering-step (eager, Adam, --steps 1, no warm-up) of resnet50 batch 32,
//    224x224 on xeon-8380-ddr4 and h100-sxm5, in each --fidelity; goal: tensor < 0.2 s
//    wall; block and line 10x and 5x faster than the README's 350 s / 2430 s (Xeon);
//  - linearity: tensor on an MLP of 16, 32 and 64 hidden layers (2048 wide, batch 128):
//    cost per layer should stay flat;
//  - accuracy: tensor vs line step time and DRAM bytes per step where line finishes in
//    minutes (resnet18 batch 1 32x32, eager SGD, 3 steps, the first excluded: the cases of
//    tests/exec/test_fidelity.cpp) on the 4-core Xeon 8380 and the A100.
// DRAM curves are measured (or read from the curve cache folder) by an untimed first run
// and shared by the others. Peak RSS is the process's so far (rows run smallest first).
#include <fmt/format.h>
#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/table.h"
#include "exec/simulate.h"
#include "mem/residency/dram_curve.h"
#include "mem/residency/dram_curve_file.h"
#include "networks/networks.h"
#include "schedule/request.h"

namespace fusim::cli {
namespace {

struct BenchSimulateOptions {
  int reps = 5;
  std::vector<std::string> fidelities{"tensor"};
  std::vector<std::string> machines{"xeon-8380-ddr4", "h100-sxm5"};
  bool accuracy = true, linearity = true;
  OutputFormat format;
};

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Timed {
  exec::RunResult result;
  double wall = 0, cpu = 0;  // medians, seconds
};

// Simulates `schedule` once untimed (curves) and then `reps` times.
Timed time_runs(const workload::Trace& trace, const schedule::Schedule& schedule,
                const exec::Machine& machine, const exec::SimOptions& so, int reps,
                const std::string& label) {
  std::vector<double> wall, cpu;
  Timed t;
  for (int i = 0; i <= reps; ++i) {
    const double c0 = process_cpu_seconds();
    const auto w0 = std::chrono::steady_clock::now();
    t.result = exec::simulate(trace, schedule, machine, so);
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    const double c = process_cpu_seconds() - c0;
    std::fprintf(stderr, "bench simulate: %s, run %d/%d%s: %.3f s wall, %.3f s CPU\n",
                 label.c_str(), i, reps, i == 0 ? " (untimed: curves)" : "", w, c);
    if (i == 0) continue;
    wall.push_back(w);
    cpu.push_back(c);
  }
  t.wall = median(wall);
  t.cpu = median(cpu);
  return t;
}

schedule::Schedule one_schedule(const workload::Trace& trace, const exec::Machine& m,
                                const std::string& optimizer, int steps) {
  schedule::ScheduleRequest request;
  request.optimizer = optimizer;
  request.steps = steps;
  request.gpu_streams = m.kind == compute::UnitKind::Gpu;
  return schedule::build_schedule(trace,
                                  schedule::schedule_options(schedule::Ordering::Eager, request));
}

void run_bench_simulate(const BenchSimulateOptions& opt) {
  // Wall times mean something only on a quiet machine: say how busy it was.
  double load[1] = {-1};
  if (getloadavg(load, 1) != 1) load[0] = -1;
  std::fprintf(stderr, "bench simulate: load average %.2f at start\n", load[0]);
  auto curves = std::make_shared<residency::DramCurveStore>(residency::default_cache_dir());
  nlohmann::json speed = nlohmann::json::array(), linear = nlohmann::json::array(),
                 accuracy = nlohmann::json::array();
  Table table({"row", "machine", "fidelity", "median wall s", "median CPU s", "step ms",
               "DRAM GB/step", "peak RSS MB", "goal"});

  // Linearity first (small), then speed with tensor before block and line (RSS).
  if (opt.linearity) {
    const exec::Machine m = exec::load_machine("xeon-8380-ddr4");
    double per_layer_1x = 0;
    for (int layers : {16, 32, 64}) {
      networks::NetworkOptions no;
      no.batch = 128;
      no.layers = layers;
      no.hidden = 2048;
      const auto trace = networks::make_network("mlp", no);
      const auto sched = one_schedule(trace, m, "adam", 1);
      exec::SimOptions so;
      so.fidelity = exec::Fidelity::Tensor;
      so.warmup_steps = 0;
      so.dram_curves = curves;
      const Timed t = time_runs(trace, sched, m, so, opt.reps, fmt::format("mlp x{}", layers));
      const double per_layer = t.cpu / layers;  // CPU: steadier than wall under load
      if (per_layer_1x == 0) per_layer_1x = per_layer;
      const std::string row = fmt::format("mlp {} layers", layers);
      table.add_row({row, m.name, "tensor", fmt::format("{:.4f}", t.wall),
                     fmt::format("{:.4f}", t.cpu), fmt::format("{:.3f}", to_ms(t.result.step_time)),
                     fmt::format("{:.3f}", static_cast<double>(t.result.dram_bytes) / 1e9),
                     fmt::format("{:.0f}", peak_rss_mb()),
                     fmt::format("CPU per layer {:.2f}x of 16", per_layer / per_layer_1x)});
      linear.push_back({{"layers", layers},
                        {"wall_s", t.wall},
                        {"cpu_s", t.cpu},
                        {"per_layer_vs_first", per_layer / per_layer_1x}});
    }
  }

  networks::NetworkOptions r50;
  r50.batch = 32;
  r50.resolution = 224;
  const auto resnet50 = networks::make_network("resnet50", r50);
  for (const std::string& fid : opt.fidelities) {
    const exec::Fidelity fidelity = exec::parse_fidelity_name(fid);
    for (const std::string& name : opt.machines) {
      const exec::Machine m = exec::load_machine(name);
      const auto sched = one_schedule(resnet50, m, "adam", 1);
      exec::SimOptions so;
      so.fidelity = fidelity;
      so.warmup_steps = 0;
      so.dram_curves = curves;
      const int reps = fidelity == exec::Fidelity::Tensor ? opt.reps : std::min(opt.reps, 3);
      const Timed t =
          time_runs(resnet50, sched, m, so, reps, fmt::format("resnet50 b32 {} {}", fid, name));
      // Goals: tensor < 0.2 s; block / line 10x / 5x faster than the README's Xeon figures.
      double goal = 0.2;
      if (fidelity == exec::Fidelity::Block) goal = name == "xeon-8380-ddr4" ? 35.0 : 0;
      if (fidelity == exec::Fidelity::Line) goal = name == "xeon-8380-ddr4" ? 486.0 : 0;
      const double rss = peak_rss_mb();
      const bool met = goal > 0 && t.wall < goal && rss < 1024;
      table.add_row(
          {"resnet50 b32 step", m.name, fid, fmt::format("{:.4f}", t.wall),
           fmt::format("{:.4f}", t.cpu), fmt::format("{:.3f}", to_ms(t.result.step_time)),
           fmt::format("{:.3f}", static_cast<double>(t.result.dram_bytes) / 1e9),
           fmt::format("{:.0f}", rss),
           goal > 0 ? fmt::format("< {} s, RSS < 1 GiB: {}", goal, met ? "met" : "NOT met") : "-"});
      speed.push_back({{"machine", m.name},
                       {"fidelity", fid},
                       {"wall_s", t.wall},
                       {"cpu_s", t.cpu},
                       {"step_ms", to_ms(t.result.step_time)},
                       {"dram_bytes", t.result.dram_bytes},
                       {"peak_rss_mb", rss},
                       {"goal_wall_s", goal},
                       {"met", met}});
    }
  }

  if (opt.accuracy) {
    networks::NetworkOptions r18;
    r18.batch = 1;
    r18.resolution = 32;
    const auto resnet18 = networks::make_network("resnet18", r18);
    const std::vector<std::pair<std::string, exec::Machine>> machines{
        {"xeon-8380-ddr4 (4 cores)",
         exec::load_machine("xeon-8380-ddr4", {{"compute.cores", "4"},
                                               {"compute.threads_per_op", "4"},
                                               {"caches.LLC.size", "6MiB"},
                                               {"caches.LLC.mshrs", "192"}})},
        {"a100-sxm4-80gb", exec::load_machine("a100-sxm4-80gb")}};
    for (const auto& [label, m] : machines) {
      const auto sched = one_schedule(resnet18, m, "sgd", 3);
      exec::SimOptions so;
      so.dram_curves = curves;
      so.fidelity = exec::Fidelity::Line;
      const Timed line = time_runs(resnet18, sched, m, so, 1, "accuracy line " + label);
      so.fidelity = exec::Fidelity::Tensor;
      const Timed tensor = time_runs(resnet18, sched, m, so, opt.reps, "accuracy tensor " + label);
      auto err = [](double a, double ref) { return ref == 0 ? 0.0 : (a - ref) / ref * 100; };
      const double step_err = err(static_cast<double>(tensor.result.step_time),
                                  static_cast<double>(line.result.step_time));
      const double dram_err = err(static_cast<double>(tensor.result.dram_bytes),
                                  static_cast<double>(line.result.dram_bytes));
      table.add_row({"resnet18 b1 32x32 accuracy", label, "tensor vs line",
                     fmt::format("{:.4f} / {:.3f}", tensor.wall, line.wall),
                     fmt::format("{:.4f} / {:.3f}", tensor.cpu, line.cpu),
                     fmt::format("{:.4f} / {:.4f}", to_ms(tensor.result.step_time),
                                 to_ms(line.result.step_time)),
                     fmt::format("{:+.2f}% DRAM", dram_err), fmt::format("{:.0f}", peak_rss_mb()),
                     fmt::format("step {:+.2f}% (goal within 2%)", step_err)});
      accuracy.push_back({{"machine", label},
                          {"line_step_ms", to_ms(line.result.step_time)},
                          {"tensor_step_ms", to_ms(tensor.result.step_time)},
                          {"step_error_percent", step_err},
                          {"line_dram_bytes", line.result.dram_bytes},
                          {"tensor_dram_bytes", tensor.result.dram_bytes},
                          {"dram_error_percent", dram_err},
                          {"line_wall_s", line.wall},
                          {"tensor_wall_s", tensor.wall}});
    }
  }
  // --csv: the three lists as three blocks, in the JSON's keys.
  const std::vector<CsvRecords> csv{
      {speed,
       {"machine", "fidelity", "wall_s", "cpu_s", "step_ms", "dram_bytes", "peak_rss_mb",
        "goal_wall_s", "met"}},
      {linear, {"layers", "wall_s", "cpu_s", "per_layer_vs_first"}},
      {accuracy,
       {"machine", "line_step_ms", "tensor_step_ms", "step_error_percent", "line_dram_bytes",
        "tensor_dram_bytes", "dram_error_percent", "line_wall_s", "tensor_wall_s"}}};
  print_result(
      opt.format,
      nlohmann::json{{"load_average", load[0] < 0 ? nlohmann::json() : nlohmann::json(load[0])},
                     {"speed", speed},
                     {"linearity", linear},
                     {"accuracy", accuracy}},
      table, csv);
  if (!opt.format.json && !opt.format.csv)
    std::printf("load average %.2f at start (wall times are for a quiet machine)\n", load[0]);
}

}  // namespace

void add_bench_simulate_command(CLI::App& bench) {
  auto opt = std::make_shared<BenchSimulateOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "simulate",
      "The simulator's speed goals and the tensor fidelity's accuracy (issue 17), medians of\n"
      "--reps runs after an untimed one (DRAM curves): one eager step of resnet50 batch 32\n"
      "224x224 (Adam) per --machine and --fidelity (goal: tensor < 0.2 s wall, peak RSS\n"
      "< 1 GiB); tensor cost per layer on MLPs of 16/32/64 layers (linear in trace length);\n"
      "tensor vs line step time and DRAM bytes on resnet18 batch 1 32x32 (eager SGD, 3 steps)\n"
      "on a 4-core Xeon 8380 and the A100 (goal: within 2%). Progress on stderr.\n"
      "Example:\n"
      "  fusim bench simulate --no-accuracy --machine h100-sxm5 --json");
  cmd->add_option("--reps", opt->reps, "Timed repetitions (block and line: at most 3)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--fidelity", opt->fidelities,
                  "Comma list of fidelities for the resnet50 rows (block and line take minutes)")
      ->delimiter(',')
      ->check(CLI::IsMember({"tensor", "block", "line"}))
      ->capture_default_str();
  cmd->add_option("--machine", opt->machines, "Comma list of presets for the resnet50 rows")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("!--no-accuracy", opt->accuracy, "Leave out the tensor vs line rows (minutes)");
  cmd->add_flag("!--no-linearity", opt->linearity, "Leave out the MLP rows");
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_bench_simulate(*opt); });
}

}  // namespace fusim::cli

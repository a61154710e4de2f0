// fusim calibrate: measures this host (cache levels by pointer chase, DRAM bandwidth and
// latency, per-op-class libtorch throughput, dispatch overhead) into a machine file that
// `fusim simulate --machine` reads. Built only with libtorch (FUSIM_WITH_TORCH).
#ifdef FUSIM_WITH_TORCH
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "backend/calibration.h"
#include "backend/executor.h"
#include "backend/family_probe.h"
#include "backend/memory_probe.h"
#include "backend/model_context_probe.h"
#include "backend/speed_probe.h"
#include "backend/step_probe.h"
#include "backend/switch_probe.h"
#include "cli/backend_commands.h"
#include "cli/calibrate_table.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "compute/compute_config.h"
#include "core/error.h"
#include "core/json_view.h"
#include "core/output_file.h"
#include "core/progress.h"
#include "core/units.h"
#include "exec/dram_fit.h"
#include "exec/machine.h"
#include "networks/networks.h"

namespace fusim::cli {
namespace {

struct CalibrateCmdOptions {
  std::string output, name = "host";  // output: default host.json where --machine finds it
  std::string op_context = "step";    // where each probed op is timed (backend/family_probe.h)
  std::string points;                 // --points: every probe point as CSV
  int threads = 0;                    // --threads: intra-op threads (0: every allowed core)
  std::string memory_overlap = "double-buffered";  // --memory-overlap: compute.memory_overlap
  bool op_costs = true;
  bool speed_normalization = true;  // --no-speed-normalization turns it off
  OutputFormat format;
};

// --points: one row per probe point (backend::ProbePoint), full precision; error_pct is the
// fitted cost against the solved one, the residual behind the family's fit error (for the
// model context's ops: the simulated time plus the term against the measured one).
void write_points_csv(const std::string& path, const std::vector<backend::ProbePoint>& points) {
  std::string csv =
      "family,probe,measured_ns,cost_ns,fitted_ns,error_pct,work,channels,kernels,exact,used,"
      "speed_factor,since_us\n";
  for (const auto& p : points)
    csv += fmt::format("{},\"{}\",{},{},{},{},{},{},{},{},{},{},{}\n", p.family, p.probe,
                       p.measured_ns, p.cost_ns, p.fitted_ns, 100 * (p.fitted_ns / p.cost_ns - 1),
                       p.work, p.channels, p.kernels, p.exact, p.used, p.speed_factor, p.since_us);
  write_file_atomically(path, csv, "--points");
}

// --memory-overlap: a name for every op class, or CLASS=NAME pairs (and default=NAME)
// separated by commas, as compute.memory_overlap's object; checked by the machine's own
// parser (compute_config.h parse_memory_overlap).
nlohmann::json memory_overlap_json(const std::string& text) {
  nlohmann::json value = text;
  if (text.find('=') != std::string::npos) {
    value = nlohmann::json::object();
    std::size_t at = 0;
    while (at <= text.size()) {
      const std::size_t comma = std::min(text.find(',', at), text.size());
      const std::string pair = text.substr(at, comma - at);
      const std::size_t eq = pair.find('=');
      if (eq == std::string::npos || eq == 0)
        throw InputError(fmt::format(
            "--memory-overlap: expected NAME or CLASS=NAME pairs separated by commas, got \"{}\"",
            pair));
      value[pair.substr(0, eq)] = pair.substr(eq + 1);
      at = comma + 1;
    }
  }
  compute::parse_memory_overlap(JsonView(value, "--memory-overlap"));
  return value;
}

void run_calibrate(CalibrateCmdOptions opt) {
  const nlohmann::json overlap = memory_overlap_json(opt.memory_overlap);  // refused up front
  // Where `--machine host` looks (exec::machines_dir(): $FUSIM_MACHINES, else the source
  // tree's models/machines), whatever the current folder; checked before measuring.
  if (opt.output.empty()) opt.output = exec::machines_dir() + "/" + opt.name + ".json";
  check_output_path(opt.output, "-o");
  if (!opt.points.empty()) {
    if (!opt.op_costs)
      throw InputError(
          "--points: expected the op-family calibration, which --no-op-costs leaves out");
    check_output_path(opt.points, "--points");
  }
  const int cores = backend::allowed_cpus();
  if (opt.threads > cores)
    throw InputError(
        fmt::format("--threads: expected at most the {} cores this process may use, got {}", cores,
                    opt.threads));
  const auto t0 = std::chrono::steady_clock::now();
  auto progress = [&](const std::string& phase) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "calibrate [{:5.1f} s]: {}\n", s, phase);
  };
  // Bandwidths, latencies and op times measured beside other work describe that work's
  // leftovers, not this host: say so where it is recorded (the file's sources) and here.
  // Other processes' CPU from /proc/stat (backend/step_probe.h: the load average trails by a
  // minute, so a run just before this one would read as busy): a short look before measuring,
  // to warn while the user can still stop, and the whole calibration at the end.
  const backend::CpuReading cpu_start = backend::read_cpu();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto busy = [](double others) { return others > backend::kBusyCores; };
  auto busy_text = [&](double others, const char* when) {
    return fmt::format(
        "other processes kept {:.2f} cores busy {} (/proc/stat, this process's CPU time "
        "taken out) on {} cores: they share the cores and memory bandwidth, so the machine "
        "file describes what they left; calibrate on a quiet machine",
        others, when, cores);
  };
  const double others_before = backend::other_cpu_between(cpu_start, backend::read_cpu()).cores;
  if (busy(others_before))
    fmt::print(stderr, "calibrate: warning: {}\n", busy_text(others_before, "before measuring"));
  const auto c = backend::calibrate_host(progress, opt.threads > 0 ? opt.threads : cores);
  if (c.bw_disturbed > 0)
    fmt::print(stderr,
               "calibrate: warning: {} of {} triad footprints differed by more than {:.0f}% "
               "between the {} sweeps: something else ran; the LLC is sized from each point's "
               "best sweep (caches.triad_gbs in the file's sources)\n",
               c.bw_disturbed, c.bw_curve.size(), (backend::kSweepSpread - 1) * 100, c.bw_sweeps);
  auto doc = backend::machine_json(c, opt.name);
  // Before the op probes: their compute is solved on the simulated probe step, so it must be
  // the engine the predictions will use.
  if (opt.memory_overlap != "double-buffered") doc["compute"]["memory_overlap"] = overlap;
  // The DRAM channels, then data rate, whose simulated triad is nearest the measured one
  // (exec/dram_fit.h): the op probes' memory time below is simulated on them.
  progress("DRAM channels and data rate: the measured triad simulated on the model");
  const exec::DramChannelFit dram_fit =
      exec::fit_dram_channels(doc, c.bw_all.triad, c.dram_array_bytes);
  doc["dram"]["channels"] = dram_fit.channels;
  std::string trials, rates;
  for (const auto& t : dram_fit.trials) trials += fmt::format("{} {:.1f}; ", t.channels, t.gbs);
  for (const auto& t : dram_fit.rate_trials)
    rates += fmt::format("{} {:.1f}; ", t.data_rate_mts, t.gbs);
  doc["sources"]["dram.channels"] = fmt::format(
      "the count whose simulated triad (an add of two {} arrays into a third, tensor "
      "fidelity, memory alone, 3 arrays counted) is nearest the measured {:.1f} GB/s; "
      "channels: simulated GB/s tried: {}",
      format_bytes(c.dram_array_bytes), c.bw_all.triad, trials);
  if (!dram_fit.rate_trials.empty()) {
    doc["dram"]["data_rate_mts"] = dram_fit.data_rate_mts;
    doc["sources"]["dram.data_rate_mts"] = fmt::format(
        "at {} channels ({:.1f} GB/s at the preset's rate), the data rate whose simulated "
        "triad is nearest the measured {:.1f} GB/s: {:.1f} GB/s; MT/s: simulated GB/s tried: "
        "{}",
        dram_fit.channels, dram_fit.channel_gbs, c.bw_all.triad, dram_fit.simulated_gbs, rates);
  }
  doc["sources"]["conditions"] =
      others_before < 0 ? fmt::format("on {} cores (/proc/stat not readable)", cores)
                        : fmt::format(
                              "{:.2f} cores busy with other processes before measuring, "
                              "on {} cores",
                              others_before, cores);
  // The output must load as a machine: a failure here is a bug in calibrate, not bad input.
  const exec::Machine host = exec::parse_machine(doc, opt.output);
  // The DRAM bandwidth the op probes had (backend/memory_probe.h, dram_probe_gbs): sampled
  // before, between and after them, as `run` samples it during its steps, so that a
  // validation can tell a model error from a host whose memory bandwidth moved since.
  // The op speed probe (backend/speed_probe.h) beside it: how fast the host ran small ops.
  std::vector<double> dram_samples, speed_samples, c2c_samples;
  // The speed the op costs describe: the median of the samples taken around every op probe
  // when they were normalized to it (backend/family_probe.h, speed_probe), else of these.
  std::vector<double> normalized_to;
  // And where the cores sit (backend/memory_probe.h core_to_core_ns, on the first two cores
  // `run` pins its threads to): a VM's two vCPUs may share a chiplet's L3 at one time and
  // not at another, and `validate` says when its steps had another placement.
  std::vector<int> c2c_cpus = backend::affinity_cpus();
  if (host.compute.threads_per_op < 2 || c2c_cpus.size() < 2) c2c_cpus.clear();
  auto sample_dram = [&] {
    dram_samples.push_back(backend::probe::dram_probe_gbs(host.compute.threads_per_op));
    speed_samples.push_back(backend::probe::op_speed_probe_us(host.compute.threads_per_op));
    if (!c2c_cpus.empty()) c2c_samples.push_back(backend::probe::core_to_core_ns(c2c_cpus));
  };
  progress(fmt::format("DRAM bandwidth and op speed probes ({} triad, {} thread{})",
                       format_bytes(backend::probe::kDramProbeBytes), host.compute.threads_per_op,
                       host.compute.threads_per_op == 1 ? "" : "s"));
  sample_dram();
  compute::OpCostModel costs;
  if (opt.op_costs) {
    // Per-op-family costs, fitted so that the simulated ops on this very machine model
    // reproduce the measured ones (backend/family_probe.h).
    backend::FamilyProbeOptions fo;
    fo.threads = host.compute.threads_per_op;
    fo.in_step = opt.op_context == "step";
    std::vector<backend::ProbePoint> points;
    if (!opt.points.empty()) fo.points = &points;
    std::vector<double> probe_speeds;
    if (opt.speed_normalization) {
      fo.speed_probe = [&] { return backend::probe::op_speed_probe_us(fo.threads); };
      fo.speed_samples = &probe_speeds;
    }
    // The shared progress reporter (core/progress.h): shapes measured, rate and ETA.
    std::unique_ptr<Progress> bar;
    int reported = 0;
    fo.progress = [&](int done, int total, const std::string&) {
      if (!bar)
        bar = std::make_unique<Progress>("calibrate: op families", std::size_t(total), 0, true,
                                         "shapes");
      bar->advance(std::size_t(std::max(0, done - reported)));
      reported = std::max(reported, done);
    };
    // Then each probe's ops solved on its simulated step (the longer phase on few cores).
    std::unique_ptr<Progress> solve_bar;
    int solved = 0;
    fo.solve_progress = [&](int done, int total, const std::string&) {
      if (!solve_bar) {
        if (bar) bar->finish(), bar.reset();
        solve_bar =
            std::make_unique<Progress>("calibrate: solving", std::size_t(total), 0, true, "probes");
      }
      solve_bar->advance(std::size_t(std::max(0, done - solved)));
      solved = std::max(solved, done);
    };
    progress("op families: each through the backend's layer ops, fitted per family");
    costs = backend::calibrate_op_costs(host, fo);
    if (bar) bar->finish();
    if (solve_bar) solve_bar->finish();
    normalized_to = probe_speeds;
    sample_dram();
    // What crossing the update boundary costs (backend/switch_probe.h): fused orderings
    // cross it twice per layer.
    progress(
        "switch costs: 12-layer MLPs and a 12-block CNN eager and backward-fused, per op (adam, "
        "sgd)");
    const double typical = fo.speed_probe ? backend::sample_spread(normalized_to).median : 0;
    const std::string switch_how = backend::calibrate_switch_costs(host, fo.threads, fo.speed_probe,
                                                                   typical, costs, speed_samples);
    // What ops pay in a model's step over the warm probes (compute/model_context.h), on two
    // bundled zoo networks: small ops (mobilenet_v2's) and large ones (resnet18's).
    progress("model context: zoo resnet18 and mobilenet_v2 (batch 8, 64x64), eager, per op");
    std::vector<workload::Trace> references;
    for (const char* name : {"resnet18", "mobilenet_v2"}) {
      networks::NetworkOptions net;
      net.batch = 8;
      net.resolution = 64;
      net.source = fmt::format("fusim calibrate (model context reference {})", name);
      references.push_back(networks::make_network(name, net));
    }
    exec::Machine fitted = host;
    fitted.compute.op_costs = costs;
    std::string context_how;
    const compute::ModelContext context = backend::calibrate_model_context(
        references, fitted, fo.threads, fo.speed_probe, typical, speed_samples, context_how,
        opt.points.empty() ? nullptr : &points);
    if (context.given()) {  // no op measured: no term
      doc["compute"]["model_context"] = compute::model_context_json(context);
      doc["sources"]["compute.model_context"] = context_how;
    }
    doc["compute"]["op_costs"] = compute::op_cost_model_json(costs);
    doc["sources"]["compute.op_costs"] =
        fo.in_step ? "each probed op timed inside 12 running eager steps of its probe (after 2 "
                     "warm-up steps), its compute solved on the simulated probe step"
                   : "each probed op timed alone, repeated from the same state, its compute "
                     "solved on the op simulated alone";
    doc["sources"]["compute.op_costs.switch"] = switch_how;
    if (!opt.points.empty()) write_points_csv(opt.points, points);
  }
  sample_dram();
  backend::RunConditions sampled;  // the same median as `run` reports for its rounds
  sampled.dram_triad_gbs = dram_samples;
  const auto speed = backend::sample_spread(normalized_to.empty() ? speed_samples : normalized_to);
  const double speed_us = speed.median;
  speed_samples.insert(speed_samples.end(), normalized_to.begin(), normalized_to.end());
  doc["host"] = {{"dram_triad_gbs", backend::dram_spread(sampled).median},
                 {"threads", host.compute.threads_per_op},
                 {"dram_triad_samples", dram_samples},
                 {"op_probe_us", speed_us},
                 {"op_probe_samples", speed_samples}};
  if (!c2c_samples.empty()) {
    doc["host"]["core_to_core_ns"] = backend::sample_spread(c2c_samples).median;
    doc["host"]["core_to_core_samples"] = c2c_samples;
    doc["sources"]["host.core_to_core_ns"] = fmt::format(
        "median of {} samples of the core-to-core probe (cores {} and {}: ns a line one had "
        "just written took the other to read, {} chased; with the DRAM probe): {:.1f} ns",
        c2c_samples.size(), c2c_cpus[0], c2c_cpus[1],
        format_bytes(backend::probe::kCoreToCoreBytes),
        fmt::join(c2c_samples.begin(), c2c_samples.end(), " "));
  }
  for (const std::string& drift : {backend::calibration_drift_note(dram_samples),
                                   backend::calibration_speed_note(speed_samples),
                                   backend::calibration_slow_note(speed_samples, speed_us)}) {
    if (drift.empty()) continue;
    fmt::print(stderr, "calibrate: warning: {}\n", drift);
    doc["sources"]["conditions"] = doc["sources"]["conditions"].get<std::string>() + "; " + drift;
  }
  const backend::OtherCpu others = backend::other_cpu_between(cpu_start, backend::read_cpu());
  std::vector<std::string> disturbed;
  if (busy(others.cores))
    disturbed.push_back(busy_text(others.cores, "on average while calibrate measured"));
  if (busy(others.steal_cores))
    disturbed.push_back(fmt::format(
        "the hypervisor ran other guests on this VM's cores: {:.2f} cores of steal time on "
        "average while calibrate measured",
        others.steal_cores));
  for (const std::string& text : disturbed) {
    fmt::print(stderr, "calibrate: warning: {}\n", text);
    doc["sources"]["conditions"] = doc["sources"]["conditions"].get<std::string>() + "; " + text;
  }
  doc["sources"]["host.dram_triad_gbs"] = fmt::format(
      "median of {} samples of a {} triad on {} thread(s) (before, between and after the op "
      "probes): {:.1f} GB/s",
      dram_samples.size(), format_bytes(backend::probe::kDramProbeBytes),
      host.compute.threads_per_op, fmt::join(dram_samples.begin(), dram_samples.end(), " "));
  doc["sources"]["host.op_probe_us"] =
      normalized_to.empty()
          ? fmt::format(
                "median of {} samples of the op speed probe (a 3x3 convolution's forward and "
                "backwards, batch norm, relu and a foreach Adam update, batch 8, 32 channels of "
                "16x16) on {} thread(s), with the DRAM probe",
                speed.samples, host.compute.threads_per_op)
          : fmt::format(
                "median of the {} samples of the op speed probe (a 3x3 convolution's forward and "
                "backwards, batch norm, relu and a foreach Adam update, batch 8, 32 channels of "
                "16x16) on {} thread(s) taken around every op probe, {:.0f} to {:.0f} us: each "
                "probe's times were divided by the samples around it over this median, so the "
                "op costs describe the host at this speed (op_probe_samples: those taken with "
                "the DRAM probe and around the switch probes, then those around every op probe)",
                speed.samples, host.compute.threads_per_op, speed.min, speed.max);
  const exec::Machine written = exec::parse_machine(doc, opt.output);
  write_file_atomically(opt.output, doc.dump(2) + "\n", "-o");
  progress("wrote " + opt.output);

  const Table table =
      calibration_table(c, written, {dram_samples, speed, !normalized_to.empty(), c2c_samples});
  print_result(opt.format, doc, table, {});  // no --csv: the machine file is a tree
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto opt = std::make_shared<CalibrateCmdOptions>();
  auto* cmd = app.add_subcommand("calibrate", kCalibrateDescription);
  cmd->add_option("-o,--output", opt->output,
                  "Machine file to write (default: NAME.json in the machines folder, "
                  "$FUSIM_MACHINES or the source tree's models/machines, where `--machine NAME` "
                  "finds it from any folder)");
  cmd->add_option("--name", opt->name, "The machine's name in the file")->capture_default_str();
  cmd->add_flag("!--no-op-costs", opt->op_costs,
                "Leave out the per-op-family costs (compute.op_costs): the op classes' "
                "efficiencies and the dispatch overhead alone");
  cmd->add_option("--op-context", opt->op_context,
                  "Where each probed op is timed: step (inside running steps of its probe, as "
                  "`run` times ops: what an op pays in a step, allocator and framework work "
                  "between calls included) | isolated (alone, repeated from the same state)")
      ->check(CLI::IsMember({"step", "isolated"}))
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads,
                  "Intra-op threads the predictions are for (compute.threads_per_op): every op "
                  "probe runs with them (0: every core this process may use). `run`/`validate` "
                  "then measure with the same threads. 1 keeps a step on one core and its "
                  "private caches")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd->add_option(
         "--memory-overlap", opt->memory_overlap,
         "How an op's memory time meets its compute in the model the costs are fitted "
         "for (compute.memory_overlap): double-buffered (overlapped, the slower sets "
         "the pace), serial (added, as the ECM model has it for x86 cores) or serial-reads "
         "(loads added, stores posted behind the work); or one per op class, as "
         "CLASS=NAME pairs (gemm, conv, elementwise, norm, reduction, pool, attention, "
         "default), e.g. gemm=serial-reads,conv=serial-reads,default=double-buffered")
      ->capture_default_str();
  cmd->add_option("--points", opt->points,
                  "Also write every probe point as CSV (family, probe, measured_ns, cost_ns "
                  "solved from it, fitted_ns the family's fit gives back, error_pct, work, "
                  "channels, kernels, exact, used, speed_factor, since_us): where a family's fit "
                  "error comes from; and the model context's ops (family "
                  "model_context.<family>: cost_ns the measured time at the calibrated speed, "
                  "fitted_ns the simulated time plus the term, since_us the time since its "
                  "family last started)")
      ->type_name("FILE");
  cmd->add_flag("--no-speed-normalization{false}", opt->speed_normalization,
                "Leave each op probe's times as measured (default: the op speed probe runs "
                "before every op probe, and each probe's times are divided by the host's speed "
                "around it over its median, so that the costs describe the host at its median "
                "speed: host.op_probe_us)");
  add_output_flags(cmd, opt->format, false);
  cmd->callback([opt] { run_calibrate(*opt); });
}

}  // namespace fusim::cli
#endif  // FUSIM_WITH_TORCH

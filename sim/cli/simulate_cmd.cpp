// fusim simulate: predicts the step time of each ordering of a trace on a machine model
// (sim/exec/simulate.h), steady state only, with speedup over eager.
#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_format.h"
#include "cli/plan_options.h"
#include "cli/plan_simulate.h"
#include "cli/profile_option.h"
#include "cli/trace_option.h"
#include "core/compare.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/progress.h"
#include "core/units.h"
#include "exec/machine.h"
#include "exec/run_result_json.h"
#include "exec/simulate.h"
#include "exec/timeline.h"
#include "schedule/request.h"
#include "workload/trace_io.h"

namespace fusim::cli {
namespace {

struct SimulateCmdOptions {
  std::string trace, machine, ordering = "all", optimizer = "adam", impl = "foreach";
  ZooBatch batch;  // --batch of a zoo --trace
  // tensor by default (issue 23: the README's first command, resnet18 at batch 32, answers
  // in seconds; line took minutes and printed nothing meanwhile); line stays the reference.
  std::string fidelity = "tensor", block = "4KiB", chunk = "auto", timeline, mixed, profile;
  std::string execution = "layers";
  std::vector<std::string> sets;
  // --compute-scale: every op's compute cost times this (memory unchanged); 1 leaves the
  // machine as it is.
  double compute_scale = 1;
  // 4 steps: forward-fused needs warm-up step 0, step 1 (its first updates ever: the
  // optimizer state's compulsory misses), a measured step 2 and a step 3 that the final
  // flush trails; the other orderings measure steps 1 and 2.
  int steps = 4, warmup = 1;
  bool per_op = true;
  OutputFormat format;
  // Issue 19: a parallel plan on a cluster (cli/plan_options.h, cli/plan_simulate.h).
  parallel::PlanArgs plan;
  std::string cluster;
  bool with_plan = false, microbatch_given = false, fidelity_given = false;
};

// --chunk: "auto" (0: the machine's, Machine::default_chunk_bytes) or a size of at least 64 B.
std::int64_t parse_chunk_option(const std::string& text) {
  if (text == "auto") return 0;
  const std::int64_t bytes = parse_size_option("--chunk", text);
  if (bytes < 64)
    throw InputError(
        fmt::format("--chunk: expected auto or a size of at least 64 bytes, got {}", text));
  return bytes;
}

std::string fixed(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

// Bytes as MiB with one decimal, "-" where unknown.
std::string mib_text(std::int64_t bytes) {
  return bytes < 0 ? "-" : fixed(static_cast<double>(bytes) / double(1 << 20), 1);
}

// The multi-device step of a parallel plan: the cluster's GPU is the machine, `tensor` the
// default fidelity (100-layer models), the trace one microbatch.
void run_plan_simulate(const SimulateCmdOptions& opt) {
  const std::pair<const char*, bool> single_device_only[] = {
      {"--machine", !opt.machine.empty()},
      {"--mixed", !opt.mixed.empty()},
      {"--profile", !opt.profile.empty()},
      {"--set", !opt.sets.empty()},
      {"--compute-scale", opt.compute_scale != 1}};
  for (auto [name, given] : single_device_only)
    if (given)
      throw InputError(fmt::format(
          "{}: expected none with a parallel plan (--cluster chooses the GPU machine)", name));
  const workload::Trace trace = load_trace_option(opt.trace, opt.batch);
  PlanSimulation r;
  parallel::PlanArgs args = opt.plan;
  if (!opt.microbatch_given) args.microbatch = trace.batch;  // the trace is one microbatch
  r.base.plan = parallel::parse_plan(args);
  if (r.base.plan.microbatch != trace.batch)
    throw InputError(fmt::format("--microbatch: expected the batch {} of {}, got {}", trace.batch,
                                 opt.trace, r.base.plan.microbatch));
  r.base.optimizer = opt.optimizer;
  r.base.impl = schedule::parse_impl_option(opt.impl);
  r.cluster = opt.cluster;
  r.orderings = schedule::with_eager_baseline(schedule::parse_orderings(opt.ordering));
  r.fidelity_name = opt.fidelity_given ? opt.fidelity : "tensor";
  r.sim.fidelity = exec::parse_fidelity_name(r.fidelity_name);
  r.sim.block_bytes = parse_size_option("--block", opt.block);
  r.sim.chunk_bytes = parse_chunk_option(opt.chunk);
  r.trace_file = opt.trace;
  r.timeline = opt.timeline;
  r.format = opt.format;
  print_plan_simulation(trace, r);
}

void run_simulate(const SimulateCmdOptions& opt) {
  check_output_path(opt.timeline, "--timeline");  // before any work
  if (opt.with_plan) return run_plan_simulate(opt);
  if (opt.machine.empty())
    throw InputError(
        "--machine: expected a machine preset or JSON file, required without a parallel "
        "plan (--tp/--pp/... --cluster)");
  // Eager always runs: the baseline of the speedups.
  const auto orderings = schedule::with_eager_baseline(schedule::parse_orderings(opt.ordering));
  schedule::check_mixed_option(orderings, opt.mixed);
  std::vector<exec::Override> overrides;
  for (const auto& s : opt.sets) overrides.push_back(exec::parse_override(s));
  exec::Machine machine = exec::load_machine(opt.machine, overrides);
  // The analytic op costs at another speed of the same cores: a host that ran slower than
  // it was calibrated (`validate --host-speed run` does this with the op speed probe's ratio),
  // or a what-if of faster cores under the same memory system.
  if (opt.compute_scale != 1) {
    if (!opt.profile.empty())
      throw InputError(fmt::format(
          "--compute-scale: expected no --profile (got {}): a profile's compute times are "
          "measured ones",
          opt.profile));
    machine.compute = compute::with_compute_time_scaled(machine.compute, opt.compute_scale);
  }
  const workload::Trace trace = load_trace_option(opt.trace, opt.batch);
  schedule::ScheduleRequest request;
  request.optimizer = opt.optimizer;
  request.impl = schedule::parse_impl_option(opt.impl);
  request.steps = opt.steps;
  request.mixed_file = opt.mixed;
  request.gpu_streams = machine.kind == compute::UnitKind::Gpu;
  request.device = request.gpu_streams ? schedule::DeviceKind::Gpu : schedule::DeviceKind::Cpu;
  const auto executions = schedule::parse_executions(opt.execution);
  if (executions.size() != 1)
    throw InputError(
        fmt::format("--execution: expected layers or graph, got \"{}\"", opt.execution));
  request.execution = executions.front();

  exec::SimOptions sim;
  sim.fidelity = exec::parse_fidelity_name(opt.fidelity);
  sim.block_bytes = parse_size_option("--block", opt.block);
  sim.chunk_bytes = parse_chunk_option(opt.chunk);
  sim.warmup_steps = opt.warmup;
  sim.dram_series = !opt.timeline.empty();  // the timeline's DRAM counter track
  // Per ordering, for runs longer than a second: the shared reporter (ETA; a line per 10%
  // when stderr is not a terminal).
  std::unique_ptr<Progress> progress;
  sim.progress = [&](double fraction) { progress->set_fraction(fraction); };

  struct Run {
    exec::SimulationDetail detail;
    schedule::Schedule schedule;
  };
  // --profile: the compute times are this host's, solved on the machine before --set (a
  // what-if changes the memory system around the measured compute).
  ProfileOption profile(
      opt.profile,
      opt.profile.empty() || overrides.empty() ? machine : exec::load_machine(opt.machine), sim);
  std::vector<Run> runs;
  for (auto ordering : orderings) {
    Run run;
    run.schedule = schedule::build_schedule(trace, schedule::schedule_options(ordering, request));
    progress = std::make_unique<Progress>("simulate " + std::string(schedule::to_string(ordering)),
                                          1000, 0, true, "%", 1.0);
    run.detail = profile.simulate(trace, run.schedule, machine, sim);
    progress.reset();  // its last line
    runs.push_back(std::move(run));
  }
  profile.report();

  const Tick eager = runs.front().detail.result.step_time;
  const std::string llc =
      runs.front().detail.last_level.empty() ? "LLC" : runs.front().detail.last_level;
  // For people: ms and MiB, rounded; the CSV carries the JSON's values (output_format.h).
  Table table({"ordering", "optimizer", "impl", "step ms", "speedup vs eager", "DRAM MiB/step",
               llc + " hit %", "peak memory MiB"});
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json events = nlohmann::json::array();
  int pid = 1;
  for (const auto& run : runs) {
    const auto& r = run.detail.result;
    const double vs_eager = speedup(eager, r.step_time);
    table.add_row({r.ordering, r.optimizer, r.impl, fixed(to_ms(r.step_time), 3),
                   fixed(vs_eager, 3), mib_text(r.dram_bytes),
                   r.llc_hit_rate < 0 ? "-" : fixed(r.llc_hit_rate * 100, 1),
                   mib_text(r.peak_memory_bytes)});
    nlohmann::json j = exec::to_json(r, opt.per_op);
    j["speedup_vs_eager"] = vs_eager;
    // JSON only, like per_op: the DRAM's reads per requester (core / SM) over the measured
    // steps, named as `fusim dram --json` names its requesters.
    auto& dram = j["dram_requesters"] = nlohmann::json::array();
    for (const auto& q : run.detail.dram_requesters)
      dram.push_back({{"requester", q.requester},
                      {"reads", q.reads},
                      {"read_latency_ns_mean", to_ns(q.latency) / static_cast<double>(q.reads)}});
    results.push_back(std::move(j));
    if (!opt.timeline.empty())
      exec::append_timeline(events, pid++, trace,
                            {exec::timeline_process_name(r), &r, &run.schedule, &run.detail.dram});
  }
  if (!opt.timeline.empty())
    write_file_atomically(
        opt.timeline,
        exec::timeline_document(std::move(events), "fusim simulate", machine.name, opt.trace)
                .dump() +
            "\n",
        "--timeline");
  nlohmann::json doc = {{"machine", machine.name},
                        {"trace", opt.trace},
                        {"fidelity", opt.fidelity},
                        {"steps", opt.steps},
                        {"results", std::move(results)}};
  if (opt.compute_scale != 1) doc["compute_scale"] = opt.compute_scale;
  CsvRecords csv{doc["results"],
                 exec::csv_columns(runs.front().detail.result, {"speedup_vs_eager"})};
  print_result(opt.format, doc, table, {csv});
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto opt = std::make_shared<SimulateCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Predict the steady-state step time of each ordering of a trace on a machine model.\n"
      "Runs K training steps of the schedule (sim/schedule) as one event simulation of the\n"
      "machine's cores/SMs, cache hierarchy and DRAM controller; step 0 is warm-up (and\n"
      "step 1 for forward-fused, whose first updates run there), and the last step is left\n"
      "out when an update flush trails it (forward-fused). Prints per\n"
      "ordering: step time, speedup over eager, DRAM bytes per step, last-level-cache hit\n"
      "rate and peak memory.\n"
      "  eager           F1..Fn, Bn..B1, U1..Un\n"
      "  backward-fused  F1..Fn, Bn Un, ..., B1 U1   (U on a 2nd stream on GPUs)\n"
      "  forward-fused   U1 F1, U2 F2, ..., Bn..B1   (U_i of step t-1 before F_i of step t)\n"
      "With a parallel plan (--tp/--pp/--dp/... --cluster PRESET) it times one training step\n"
      "on the cluster instead: each stage's passes at their costs from this engine on the\n"
      "cluster's GPU, its pipeline order, P2P transfers, TP\n"
      "collectives and bucketed DP gradient reductions on contending links; per ordering the\n"
      "step time, per stage busy / bubble / exposed communication, peak memory, weight\n"
      "versions and gradient delay.\n"
      "Example:\n"
      "  fusim simulate --trace resnet18 --machine h100-sxm5 --optimizer adam\n"
      "  fusim simulate --trace traces/mlp.json --machine xeon-8380-ddr4 --fidelity line  "
      "(the reference)");
  cmd->add_option("--trace", opt->trace, kTraceOptionHelp)->required();
  add_batch_option(cmd, opt->batch);
  cmd->add_option("--machine", opt->machine,
                  "Machine preset (file stem in models/machines: h100-sxm5, xeon-8380-ddr4, "
                  "...) or path to a machine JSON (required without a parallel plan)");
  cmd->add_option("--ordering", opt->ordering,
                  "all | comma-separated eager,backward-fused,forward-fused,mixed (mixed: with "
                  "--mixed); eager is always run as the speedup baseline")
      ->capture_default_str();
  cmd->add_option("--mixed", opt->mixed, "Per-layer ordering JSON for --ordering mixed");
  cmd->add_option("--profile", opt->profile, kProfileOptionHelp)
      ->check(existing_file("a profile JSON file (fusim profile -o)"));
  cmd->add_option("--optimizer", opt->optimizer,
                  "sgd | momentum | nesterov | adam | adamw | adagrad | rmsprop | lamb")
      ->capture_default_str();
  cmd->add_option("--impl", opt->impl, "Optimizer implementation: loop | foreach | fused")
      ->capture_default_str();
  cmd->add_option("--execution", opt->execution,
                  "The execution predicted, as `fusim run --execution` names it: layers (each "
                  "op its own call) | graph (a PyTorch user's loop: per-parameter optimizers "
                  "where the update is fused)")
      ->capture_default_str();
  cmd->add_option("--steps", opt->steps,
                  "Training steps simulated (>= warm-up + 2 to measure a steady-state step "
                  "between warm-up and the last step)")
      ->capture_default_str()
      ->check(int_range(1, 1000));
  cmd->add_option("--warmup", opt->warmup, "Warm-up steps excluded from the stats")
      ->capture_default_str()
      ->check(int_range(0, 100));
  cmd->add_option("--fidelity", opt->fidelity,
                  "tensor (the default): no lines: each chunk's bytes served by "
                  "range residency per cache level (fully associative LRU: associativity and "
                  "replacement policy are not used) through bandwidth pipes, DRAM as the "
                  "controller's own bandwidth-latency curves, measured once per DRAM config "
                  "and kept in $FUSIM_CACHE_DIR (else ~/.cache/fusim); fast (resnet50 at "
                  "batch 32 in a fraction of a second), within a few percent of line "
                  "(README, Fidelity and speed); line: every 64 B line through caches and "
                  "DRAM (the reference); block: --block units")
      ->capture_default_str();
  cmd->add_option("--block", opt->block, "Unit of block fidelity (power of two)")
      ->capture_default_str();
  cmd->add_option("--chunk", opt->chunk,
                  "Bytes of an op's streams issued per chunk (interleaving of concurrent ops; "
                  "two chunks of an op are in flight at once). auto: 1 MiB, or what the "
                  "machine's cores can have in flight (cores x MSHRs x line, down to a power "
                  "of two) where that is more: 4 MiB on h100-sxm5 and h200, 2 MiB on "
                  "a100-sxm4-80gb")
      ->capture_default_str();
  cmd->add_option("--set", opt->sets,
                  "Override a machine field before simulating: PATH=VALUE, e.g. "
                  "caches.LLC.size=32MiB, dram.channels=4 (repeatable)");
  cmd->add_option("--compute-scale", opt->compute_scale,
                  "Every op's compute cost times this factor, memory as the machine has it: "
                  "1.2 is a host running its ops 20% slower than it was calibrated (what "
                  "`validate --host-speed run` applies from its op speed probe), 0.5 cores "
                  "twice as fast (not with --profile)")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  cmd->add_option("--timeline", opt->timeline,
                  "Write a Chrome/Perfetto trace JSON (open in ui.perfetto.dev): a track per "
                  "stream, ops as slices, DRAM bandwidth counter (the shape of `fusim run "
                  "--timeline`; with a plan: a track per device and per link)");
  cmd->add_flag("!--no-per-op", opt->per_op, "Leave the per-op list out of --json");
  add_plan_options(cmd, opt->plan);
  add_cluster_options(cmd, opt->plan, opt->cluster);
  add_output_flags(cmd, opt->format);
  cmd->callback([opt, cmd] {
    opt->with_plan = plan_requested(*cmd);
    opt->microbatch_given = cmd->count("--microbatch") > 0;
    opt->fidelity_given = cmd->count("--fidelity") > 0;
    if (opt->with_plan)
      for (const char* name : {"--steps", "--warmup", "--execution", "--no-per-op"})
        if (cmd->count(name) > 0)
          warn_no_effect(name,
                         "with a parallel plan (its single-device runs take 4 steps, 1 of "
                         "them warm-up, and it reports no per-op list)");
    if (cmd->count("--block") > 0 && opt->fidelity != "block")
      warn_no_effect("--block",
                     "with --fidelity " + opt->fidelity + " (it is the unit of --fidelity block)");
    run_simulate(*opt);
  });
}

}  // namespace fusim::cli

#include "backend/switch_probe.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "backend/executor.h"
#include "backend/optimizer_config.h"
#include "backend/probe_trace.h"
#include "backend/run_plan.h"
#include "backend/speed_probe.h"
#include "compute/op_cost_model.h"
#include "exec/simulate.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

namespace fusim::backend {
namespace {

using nlohmann::json;

constexpr int kLayers = 12, kBatch = 8;
// The CNN probe: kLayers blocks of a 3x3 convolution, batch norm and relu, kCnnChannels
// channels of kCnnSide x kCnnSide (mobilenet_v2's and efficientnet_b0's small layers).
constexpr int kCnnChannels = 32, kCnnSide = 16;

}  // namespace

// linear, relu, linear, relu, ..., a 4-class head and cross-entropy.
workload::Trace switch_probe_mlp(int kWidth) {
  json layers = json::array();
  int id = 0;
  json input = "input";
  int last = -1;
  for (int l = 0; l < kLayers; ++l) {
    const std::string name = fmt::format("fc{}", l);
    layers.push_back({{"id", id},
                      {"name", name},
                      {"op", "linear"},
                      {"attrs", {{"bias", true}}},
                      {"inputs", {input}},
                      {"output", {kBatch, kWidth}},
                      {"params",
                       {probe_tensor(name + ".weight", {kWidth, kWidth}),
                        probe_tensor(name + ".bias", {kWidth})}}});
    layers.push_back({{"id", id + 1},
                      {"name", fmt::format("relu{}", l)},
                      {"op", "relu"},
                      {"inputs", {id}},
                      {"output", {kBatch, kWidth}}});
    input = last = id + 1;
    id += 2;
  }
  append_head_and_loss(layers, id, last, kBatch, kWidth);
  return parse_probe_trace(json{kBatch, kWidth}, layers, "calibrate-switch-probe",
                           "calibrate switch probe");
}

// conv, batch norm, relu, conv, ..., flatten, a 4-class head and cross-entropy.
workload::Trace switch_probe_cnn() {
  const json map{kBatch, kCnnChannels, kCnnSide, kCnnSide};
  json layers = json::array();
  int id = 0;
  json input = "input";
  for (int l = 0; l < kLayers; ++l) {
    const std::string conv = fmt::format("conv{}", l), bn = fmt::format("bn{}", l);
    layers.push_back(
        {{"id", id},
         {"name", conv},
         {"op", "conv2d"},
         {"attrs", {{"kernel", {3, 3}}, {"stride", {1, 1}}, {"padding", {1, 1}}, {"bias", false}}},
         {"inputs", {input}},
         {"output", map},
         {"params", {probe_tensor(conv + ".weight", {kCnnChannels, kCnnChannels, 3, 3})}}});
    layers.push_back(
        {{"id", id + 1},
         {"name", bn},
         {"op", "batch_norm"},
         {"inputs", {id}},
         {"output", map},
         {"params",
          {probe_tensor(bn + ".weight", {kCnnChannels}),
           probe_tensor(bn + ".bias", {kCnnChannels})}},
         {"buffers",
          {{{"name", bn + ".running_mean"}, {"shape", {kCnnChannels}}, {"requires_grad", false}},
           {{"name", bn + ".running_var"}, {"shape", {kCnnChannels}}, {"requires_grad", false}}}}});
    layers.push_back({{"id", id + 2},
                      {"name", fmt::format("relu{}", l)},
                      {"op", "relu"},
                      {"inputs", {id + 1}},
                      {"output", map}});
    input = id + 2;
    id += 3;
  }
  const int features = kCnnChannels * kCnnSide * kCnnSide;
  layers.push_back({{"id", id},
                    {"name", "flatten"},
                    {"op", "flatten"},
                    {"attrs", {{"start_dim", 1}, {"end_dim", -1}}},
                    {"inputs", {input}},
                    {"output", {kBatch, features}}});
  append_head_and_loss(layers, id + 1, id, kBatch, features);
  return parse_probe_trace(map, layers, "calibrate-switch-probe-cnn", "calibrate switch probe");
}

namespace {

bool is_update(const schedule::Op& op) {
  return op.kind == schedule::OpKind::Update;
}

// Per op id of a schedule: 1 where it is an update after a non-update op on its stream, 2
// where it is a non-update op after an update, 0 otherwise.
std::vector<int> switches(const schedule::Schedule& s) {
  std::vector<int> out(s.ops.size(), 0);
  std::map<int, const schedule::Op*> last;  // per stream
  for (const auto& op : s.ops) {
    if (auto it = last.find(op.stream); it != last.end() && is_update(*it->second) != is_update(op))
      out[std::size_t(op.id)] = is_update(op) ? 1 : 2;
    last[op.stream] = &op;
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median measured time in ns of each (kind, layer) of one step's ops.
std::map<std::pair<std::string, int>, double> op_medians(const exec::RunResult& r) {
  std::map<std::pair<std::string, int>, std::vector<double>> times;
  for (const auto& t : r.per_op)
    if (t.measured) times[{t.kind, t.layer}].push_back(double(t.end - t.start) / 1e3);
  std::map<std::pair<std::string, int>, double> out;
  for (auto& [k, v] : times) out[k] = median(std::move(v));
  return out;
}

// A probe's two schedules run (or simulated) on this host.
std::map<std::string, SwitchSamples> measure(const workload::Trace& trace,
                                             const std::string& optimizer, int threads,
                                             const exec::Machine* model) {
  RunOptions ro;
  ro.threads = threads;
  ro.warmup = 2;
  ro.steps = 20;
  ro.block = 5;
  ro.min_cpu_ratio = 0;  // short steps: the medians are robust, keep them all
  const auto schedules =
      build_run_schedules(trace, {schedule::Ordering::Eager, schedule::Ordering::BackwardFused},
                          optimizer, schedule::OptimizerImpl::Foreach, ro);
  const RunReport report = run_schedules(trace, schedules, optimizer_config(optimizer), ro);
  if (!model)
    return switch_samples(schedules.at(0), schedules.at(1), report.results.at(0),
                          report.results.at(1));
  // The same schedules on the model (tensor fidelity, as predictions run): the memory side's
  // difference between the two, which the simulation gives by itself.
  exec::SimOptions sim;
  sim.fidelity = exec::Fidelity::Tensor;
  sim.warmup_steps = 1;
  const exec::RunResult eager = exec::simulate(trace, schedules.at(0), *model, sim);
  const exec::RunResult fused = exec::simulate(trace, schedules.at(1), *model, sim);
  return switch_samples(schedules.at(0), schedules.at(1), report.results.at(0),
                        report.results.at(1), &eager, &fused);
}

// fixed + per_mib x MiB through the two widths' points, both >= 0.
std::pair<double, double> line(double mib_a, double ns_a, double mib_b, double ns_b) {
  double per_mib = mib_b > mib_a ? (ns_b - ns_a) / (mib_b - mib_a) : 0;
  if (per_mib <= 0) return {std::max(0.0, (ns_a + ns_b) / 2), 0.0};
  double fixed = ns_a - per_mib * mib_a;
  if (fixed < 0) return {0.0, std::max(0.0, ns_b) / mib_b};
  return {fixed, per_mib};
}

}  // namespace

std::map<std::string, SwitchSamples> switch_samples(const schedule::Schedule& es,
                                                    const schedule::Schedule& fs,
                                                    const exec::RunResult& eager_measured,
                                                    const exec::RunResult& fused_measured,
                                                    const exec::RunResult* eager_simulated,
                                                    const exec::RunResult* fused_simulated) {
  const auto eager = op_medians(eager_measured);
  const auto fused = op_medians(fused_measured);
  const bool simulated = eager_simulated && fused_simulated;
  std::map<std::pair<std::string, int>, double> sim_eager, sim_fused;
  if (simulated) sim_eager = op_medians(*eager_simulated), sim_fused = op_medians(*fused_simulated);
  // An op's key at a switch in backward-fused and at none in eager (eager's first update
  // and first forward of a step sit at one: left out).
  std::map<std::pair<std::string, int>, int> eager_switch;
  const auto ew = switches(es);
  for (const auto& op : es.ops)
    if (ew[std::size_t(op.id)])
      eager_switch[{std::string(schedule::to_string(op.kind)), op.layer}] = 1;
  const auto fw = switches(fs);
  // Per group ("" every layer, else the update's layer op; an op after an update counts
  // in "" only): the differences and the updates' bytes.
  struct Samples {
    std::vector<double> update, after, bytes, simulated_update;
  };
  std::map<std::string, Samples> groups;
  std::map<std::pair<std::string, int>, bool> seen;
  for (const auto& op : fs.ops) {
    const int w = fw[std::size_t(op.id)];
    if (!w) continue;
    const std::pair<std::string, int> key{std::string(schedule::to_string(op.kind)), op.layer};
    if (eager_switch.count(key) || seen[key]) continue;
    seen[key] = true;
    const auto e = eager.find(key), f = fused.find(key);
    if (e == eager.end() || f == fused.end()) continue;
    double modelled = 0;
    if (simulated) {
      const auto se = sim_eager.find(key), sf = sim_fused.find(key);
      if (se == sim_eager.end() || sf == sim_fused.end()) continue;
      modelled = sf->second - se->second;
    }
    const double extra = f->second - e->second - modelled;
    if (w == 2) {
      groups[""].after.push_back(extra);
      continue;
    }
    const double b = double(compute::touched_bytes(fs, op));
    for (const std::string& g : {std::string(), std::string(workload::to_string(op.layer_op))}) {
      groups[g].update.push_back(extra);
      groups[g].bytes.push_back(b);
      groups[g].simulated_update.push_back(modelled);
    }
  }
  std::map<std::string, SwitchSamples> out;
  for (auto& [g, v] : groups)
    out[g] = {median(v.update),           median(v.after), median(v.bytes),
              median(v.simulated_update), v.update.size(), v.after.size()};
  return out;
}

SwitchCosts measure_switch_costs(const std::string& optimizer, int threads,
                                 const exec::Machine* model) {
  const SwitchSamples a = measure(switch_probe_mlp(256), optimizer, threads, model)[""];
  const SwitchSamples b = measure(switch_probe_mlp(1024), optimizer, threads, model)[""];
  const double mib_a = a.bytes / double(1 << 20), mib_b = b.bytes / double(1 << 20);
  SwitchCosts c;
  std::tie(c.update_ns, c.update_per_mib_ns) = line(mib_a, a.update_ns, mib_b, b.update_ns);
  std::tie(c.after_update_ns, c.after_update_per_mib_ns) =
      line(mib_a, a.after_ns, mib_b, b.after_ns);
  c.samples = static_cast<int>(std::min({a.updates, a.afters, b.updates, b.afters}));
  c.how = fmt::format(
      "{}-layer MLPs 256 and 1024 wide (batch {}, {} foreach: updates of {:.2f} and {:.2f} "
      "MiB) run eager and backward-fused, blocks interleaved, 20 steps each: per layer the "
      "median time of an op at a switch in backward-fused minus the same op's in eager; "
      "medians {:.0f} / {:.0f} ns (update) and {:.0f} / {:.0f} ns (after one), a line "
      "through them",
      kLayers, kBatch, optimizer, mib_a, mib_b, a.update_ns, b.update_ns, a.after_ns, b.after_ns);
  if (model)
    c.how += fmt::format(
        " (each difference less the same op's simulated on this host's model with the fitted "
        "op costs, tensor fidelity: the caches' part, which predictions simulate themselves; "
        "simulated update differences {:.0f} / {:.0f} ns)",
        a.simulated_update_ns, b.simulated_update_ns);
  // The CNN's layers: each layer op's median is its fixed part (>= 0), with no per-MiB
  // part. The MLPs' slope was measured on linear layers and does not carry to these: with
  // it, two fidelity checks of nine torchvision CNNs (2-core EPYC VM, 2026-12-06/07, 54
  // speedups each, --profile in-run) predicted backward-fused 1.5 and 1.9 points too slow
  // with Adam, 1.0 and 2.3 with AdamW, on average (resnet18's 45 MiB of parameters alone
  // gave its updates ~2 ms a step of switch cost where they measured 0.4-1.2 ms more than
  // eager's); without it 0.7 and 0.7, 0.1 and 1.2. One CNN size measures no slope.
  const auto cnn = measure(switch_probe_cnn(), optimizer, threads, model);
  for (const auto& [op, m] : cnn) {
    if (op.empty() || m.updates < 3) continue;
    const double mib = m.bytes / double(1 << 20);
    c.by_layer_op.push_back({op, std::max(0.0, m.update_ns), 0.0, static_cast<int>(m.updates)});
    c.how += fmt::format(
        "; {}: {}-block CNN ({} channels of {}x{}, 3x3 convolutions, batch norm, relu), its "
        "updates at a switch {:.0f} ns more (median of {}, {:.3f} MiB), no per-MiB part",
        op, kLayers, kCnnChannels, kCnnSide, kCnnSide, m.update_ns, m.updates, mib);
  }
  return c;
}

std::string calibrate_switch_costs(const exec::Machine& host, int threads,
                                   const std::function<double()>& speed_probe, double typical_us,
                                   compute::OpCostModel& costs,
                                   std::vector<double>& speed_samples) {
  std::string how;
  exec::Machine fitted = host;
  fitted.compute.op_costs = costs;
  for (const std::string optimizer : {"adam", "sgd"}) {
    SwitchCosts sw;
    const double factor = probe::speed_factor_around(speed_probe, typical_us, speed_samples, [&] {
      sw = measure_switch_costs(optimizer, threads, &fitted);
    });
    const std::string suffix = optimizer == "adam" ? "" : "." + optimizer;
    compute::FamilyCost su, sa;
    su.fixed_ns = sw.update_ns / factor;
    su.per_mib_ns = sw.update_per_mib_ns / factor;
    sa.fixed_ns = sw.after_update_ns / factor;
    sa.per_mib_ns = sw.after_update_per_mib_ns / factor;
    su.points = sa.points = sw.samples;
    costs.families["switch.U" + suffix] = su;
    costs.families["switch.after_U" + suffix] = sa;
    for (const auto& l : sw.by_layer_op) {
      compute::FamilyCost f;
      f.fixed_ns = l.update_ns / factor;
      f.per_mib_ns = l.update_per_mib_ns / factor;
      f.points = l.samples;
      costs.families["switch.U" + suffix + "." + l.layer_op] = f;
    }
    how += (how.empty() ? "" : "; ") + sw.how;
    if (factor != 1)
      how += fmt::format(" (divided by the host's speed factor around them, {:.3f})", factor);
  }
  return how;
}

}  // namespace fusim::backend

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
#include "compute/op_cost_model.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

namespace fusim::backend {
namespace {

using nlohmann::json;

constexpr int kLayers = 12, kBatch = 8;

// linear, relu, linear, relu, ..., a 4-class head and cross-entropy.
workload::Trace probe_trace(int kWidth) {
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

// One width's medians: an update's extra time at a switch, the op's after one, and the
// bytes an update touches.
struct Measured {
  double update_ns = 0, after_ns = 0, bytes = 0;
  std::size_t updates = 0, afters = 0;
};

Measured measure(int width, const std::string& optimizer, int threads) {
  const workload::Trace trace = probe_trace(width);
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
  const auto eager = op_medians(report.results.at(0));
  const auto fused = op_medians(report.results.at(1));
  // An op's key at a switch in backward-fused and at none in eager (eager's first update
  // and first forward of a step sit at one: left out).
  std::map<std::pair<std::string, int>, int> eager_switch;
  const auto& es = schedules.at(0);
  const auto ew = switches(es);
  for (const auto& op : es.ops)
    if (ew[std::size_t(op.id)])
      eager_switch[{std::string(schedule::to_string(op.kind)), op.layer}] = 1;
  const auto& fs = schedules.at(1);
  const auto fw = switches(fs);
  std::vector<double> update, after, bytes;
  std::map<std::pair<std::string, int>, bool> seen;
  for (const auto& op : fs.ops) {
    const int w = fw[std::size_t(op.id)];
    if (!w) continue;
    const std::pair<std::string, int> key{std::string(schedule::to_string(op.kind)), op.layer};
    if (eager_switch.count(key) || seen[key]) continue;
    seen[key] = true;
    const auto e = eager.find(key), f = fused.find(key);
    if (e == eager.end() || f == fused.end()) continue;
    (w == 1 ? update : after).push_back(f->second - e->second);
    if (w == 1) bytes.push_back(double(compute::touched_bytes(fs, op)));
  }
  return {median(update), median(after), median(bytes), update.size(), after.size()};
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

SwitchCosts measure_switch_costs(const std::string& optimizer, int threads) {
  const Measured a = measure(256, optimizer, threads), b = measure(1024, optimizer, threads);
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
  return c;
}

}  // namespace fusim::backend

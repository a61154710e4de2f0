#include "cli/plan_simulate.h"

#include <fmt/format.h>
#include <algorithm>
#include <future>
#include <map>
#include <thread>

#include "core/compare.h"
#include "core/error.h"
#include "core/output_file.h"
#include "core/table.h"
#include "exec/cluster_step.h"
#include "exec/machine.h"
#include "exec/timeline.h"
#include "parallel/interconnect.h"
#include "parallel/parallel_schedule.h"
#include "parallel/step_timing.h"

namespace fusim::cli {
namespace {
using namespace fusim::parallel;

std::string ms(Tick t) {
  return fmt::format("{:.3f}", to_ms(t));
}
std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f}", double(bytes) / double(std::int64_t{1} << 30));
}

const char* kind_name(ItemKind k) {
  switch (k) {
    case ItemKind::F:
      return "F";
    case ItemKind::B:
      return "B";
    case ItemKind::W:
      return "W";
    case ItemKind::U:
      return "U";
  }
  return "?";
}

struct OrderingRun {
  schedule::Ordering ordering;
  ParallelSchedule layout;  // the checked plan: layers, memory, weight versions
  StepTiming timing;
};

nlohmann::json run_json(const OrderingRun& run, Tick eager) {
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t s = 0; s < run.timing.stages.size(); ++s) {
    const StageStep& st = run.timing.stages[s];
    const StageSchedule& lay = run.layout.stages[s];
    stages.push_back({{"stage", int(s)},
                      {"first_layer", lay.first_layer},
                      {"last_layer", lay.last_layer},
                      {"busy_ms", to_ms(st.busy)},
                      {"bubble_ms", to_ms(st.bubble)},
                      {"exposed_communication_ms", to_ms(st.exposed_communication)},
                      {"bubble_fraction", st.busy > 0 ? double(st.bubble) / double(st.busy) : 0.0},
                      {"peak_memory_bytes", lay.memory.total},
                      {"weight_versions", lay.weight_versions},
                      {"gradient_delay_steps", lay.gradient_delay}});
  }
  return {{"ordering", std::string(schedule::to_string(run.ordering))},
          {"step_time_ms", to_ms(run.timing.step_time)},
          {"speedup_vs_eager", speedup(eager, run.timing.step_time)},
          {"bubble_fraction", run.timing.bubble_fraction()},
          {"stages", stages}};
}

// A Perfetto process per ordering: a thread per pipeline stage's device (tp rank 0 of the
// timed replica) and one per link that carried a message (each GPU's switch port, its NIC).
void append_events(nlohmann::json& events, int pid, const OrderingRun& run) {
  const ParallelPlan& plan = run.layout.plan;
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", 0},
                    {"args", {{"name", std::string(schedule::to_string(run.ordering))}}}});
  for (std::size_t s = 0; s < run.timing.stages.size(); ++s) {
    const int tid = int(s);
    events.push_back(
        {{"name", "thread_name"},
         {"ph", "M"},
         {"pid", pid},
         {"tid", tid},
         {"args",
          {{"name", fmt::format("GPU {} (stage {})", gpu_rank(plan, 0, 0, 0, int(s)), s)}}}});
    for (const auto& it : run.timing.stages[s].items)
      events.push_back(
          {{"name", fmt::format("{}{}.{}", kind_name(it.kind), it.microbatch, it.chunk)},
           {"cat", kind_name(it.kind)},
           {"ph", "X"},
           {"pid", pid},
           {"tid", tid},
           {"ts", to_us(it.start)},
           {"dur", to_us(it.end - it.start)},
           {"args",
            {{"step", it.step},
             {"bucket", it.bucket},
             {"tp_communication_us", to_us(it.communication)}}}});
  }
  std::map<std::pair<int, bool>, int> links;
  for (const auto& m : run.timing.messages) {
    auto [i, added] = links.insert({{m.gpu, m.inter}, 0});
    if (added) {
      i->second = 1000 + 2 * m.gpu + (m.inter ? 1 : 0);
      events.push_back(
          {{"name", "thread_name"},
           {"ph", "M"},
           {"pid", pid},
           {"tid", i->second},
           {"args", {{"name", fmt::format("GPU {} {}", m.gpu, m.inter ? "NIC" : "switch port")}}}});
    }
    events.push_back({{"name", "message"},
                      {"cat", "link"},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", i->second},
                      {"ts", to_us(m.start)},
                      {"dur", to_us(m.end - m.start)},
                      {"args", {{"bytes", m.bytes}}}});
  }
}
}  // namespace

void print_plan_simulation(const workload::Trace& trace, const PlanSimulation& r) {
  if (r.cluster.empty())
    throw InputError(
        fmt::format("--cluster: expected one of {} with a parallel plan", cluster_presets()));
  const ClusterSpec& cluster = cluster_preset(r.cluster);
  // Every ordering's plan is checked before the first simulation.
  std::vector<OrderingRun> runs;
  for (auto ordering : r.orderings) {
    if (ordering == schedule::Ordering::Mixed)
      throw InputError(
          "--ordering: expected eager, backward-fused or forward-fused with a parallel plan, got "
          "mixed");
    MemoryQuery q = r.base;
    q.ordering = ordering;
    runs.push_back({ordering, plan_schedule(trace, q, cluster), {}});
  }
  const exec::Machine machine = exec::load_machine(std::string(cluster.gpu));
  const ParallelPlan& plan = r.base.plan;
  std::vector<exec::ClusterStepRequest> requests;
  for (const auto& run : runs) {
    exec::ClusterStepRequest q;
    q.plan = plan;
    q.cluster = cluster;
    q.ordering = run.ordering;
    q.optimizer = r.base.optimizer;
    q.impl = r.base.impl;
    q.memory.mixed_precision = r.base.mixed_precision;
    q.memory.attention = r.base.attention;
    q.sim = r.sim;
    q.record_links = !r.timeline.empty();
    requests.push_back(q);
  }
  // Each ordering's single-device run (nearly all of the time: the multi-device step itself
  // is well under 1%) is independent of the others: they run at once, on up to the host's
  // threads (exec::simulate is thread-safe, as the sweep's threads use it); the results are
  // the same as one after the other.
  const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::vector<LayerTimes>> times(runs.size());
  for (std::size_t first = 0; first < runs.size(); first += threads) {
    std::vector<std::future<std::vector<LayerTimes>>> batch;
    for (std::size_t i = first; i < std::min(runs.size(), first + threads); ++i) {
      const exec::ClusterStepRequest* q = &requests[i];
      batch.push_back(std::async(std::launch::async, [&trace, &machine, q] {
        return exec::single_device_layer_times(trace, machine, *q);
      }));
    }
    for (std::size_t k = 0; k < batch.size(); ++k) times[first + k] = batch[k].get();
  }
  for (std::size_t i = 0; i < runs.size(); ++i)
    runs[i].timing = exec::time_cluster_step(trace, times[i], requests[i]);
  const std::int64_t bucket = plan.bucket_size > 0 ? plan.bucket_size : kDefaultBucketBytes;

  const Tick eager = runs.front().timing.step_time;
  Table table({"ordering", "stage", "layers", "busy ms", "bubble ms", "exposed comm ms", "peak GiB",
               "weight versions", "gradient delay"});
  nlohmann::json results = nlohmann::json::array();
  std::string text;
  for (const auto& run : runs) {
    results.push_back(run_json(run, eager));
    text += fmt::format(
        "{}: tp {} pp {} dp {} cp {} = {} GPUs on {} {} node{}, {} x {} microbatches: step "
        "{} ms ({:.3f}x eager), bubble fraction {:.4f}\n",
        schedule::to_string(run.ordering), plan.tp, plan.pp, plan.dp, plan.cp, plan.gpus(),
        run.layout.nodes, run.layout.cluster, run.layout.nodes == 1 ? "" : "s",
        to_string(plan.schedule), plan.microbatches(), ms(run.timing.step_time),
        speedup(eager, run.timing.step_time), run.timing.bubble_fraction());
    for (std::size_t s = 0; s < run.timing.stages.size(); ++s) {
      const StageStep& st = run.timing.stages[s];
      const StageSchedule& lay = run.layout.stages[s];
      table.add_row({std::string(schedule::to_string(run.ordering)), std::to_string(s),
                     lay.first_layer + " .. " + lay.last_layer, ms(st.busy), ms(st.bubble),
                     ms(st.exposed_communication), gib(lay.memory.total),
                     std::to_string(lay.weight_versions), std::to_string(lay.gradient_delay)});
    }
  }
  if (!r.timeline.empty()) {
    nlohmann::json events = nlohmann::json::array();
    int pid = 1;
    for (const auto& run : runs) append_events(events, pid++, run);
    write_file_atomically(
        r.timeline,
        exec::timeline_document(std::move(events), "fusim simulate", r.cluster, r.trace_file)
                .dump() +
            "\n",
        "--timeline");
  }
  nlohmann::json doc = {{"cluster", r.cluster},
                        {"machine", machine.name},
                        {"trace", r.trace_file},
                        {"fidelity", r.fidelity_name},
                        {"tp", plan.tp},
                        {"pp", plan.pp},
                        {"dp", plan.dp},
                        {"cp", plan.cp},
                        {"microbatches", plan.microbatches()},
                        {"pipeline_schedule", std::string(to_string(plan.schedule))},
                        {"virtual_stages", plan.virtual_stages},
                        {"bucket_size", bucket},
                        {"results", results}};
  // --csv: one record per ordering and stage (/results/*/stages/*), in the order of
  // docs/output_schema.md: the ordering's step, then the stage's figures.
  CsvRecords csv;
  csv.columns = {"ordering",
                 "step_time_ms",
                 "speedup_vs_eager",
                 "stage",
                 "first_layer",
                 "last_layer",
                 "busy_ms",
                 "bubble_ms",
                 "exposed_communication_ms",
                 "bubble_fraction",
                 "peak_memory_bytes",
                 "weight_versions",
                 "gradient_delay_steps"};
  for (const auto& res : results)
    for (const auto& stage : res["stages"]) {
      nlohmann::json row = {{"ordering", res["ordering"]},
                            {"step_time_ms", res["step_time_ms"]},
                            {"speedup_vs_eager", res["speedup_vs_eager"]}};
      row.update(stage);
      csv.rows.push_back(row);
    }
  if (r.format.json || r.format.csv) {
    print_result(r.format, doc, table, {csv});
    return;
  }
  fmt::print("{}\n{}", text, table.to_text());
}

}  // namespace fusim::cli

#include "cli/plan_schedule.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/table.h"
#include "parallel/interconnect.h"
#include "parallel/parallel_schedule.h"

namespace fusim::cli {
namespace {
using namespace fusim::parallel;

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f}", double(bytes) / double(std::int64_t{1} << 30));
}

std::string pass_order(const std::vector<Pass>& passes) {
  std::string s;
  for (const auto& p : passes) s += (s.empty() ? "" : " ") + to_string(p);
  return s;
}

nlohmann::json schedule_json(const ParallelSchedule& ps, schedule::Ordering ordering) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : ps.stages)
    stages.push_back({{"stage", st.stage},
                      {"first_layer", st.first_layer},
                      {"last_layer", st.last_layer},
                      {"passes", pass_order(st.passes)},
                      {"max_in_flight_chunk_microbatches", st.max_in_flight},
                      {"weight_versions", st.weight_versions},
                      {"gradient_delay_steps", st.gradient_delay},
                      {"total_bytes", st.memory.total},
                      {"grad_reduction_bytes", st.reduced_bytes},
                      {"grad_reduction_us", to_us(st.grad_reduction)},
                      {"weight_gather_bytes", st.gathered_bytes},
                      {"weight_gather_us", to_us(st.weight_gather)}});
  const auto& p = ps.plan;
  return {{"ordering", std::string(schedule::to_string(ordering))},
          {"cluster", ps.cluster},
          {"nodes", ps.nodes},
          {"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"cp", p.cp},
          {"microbatches", p.microbatches()},
          {"pipeline_schedule", std::string(to_string(p.schedule))},
          {"virtual_stages", p.virtual_stages},
          {"unit_bubble_rate", ps.unit_bubble_rate},
          {"max_total_bytes", ps.memory.max_total},
          {"gpu_memory_bytes", ps.memory.gpu_memory},
          {"stages", stages}};
}
}  // namespace

void print_plan_schedules(const workload::Trace& trace,
                          const std::vector<schedule::Ordering>& orderings, MemoryQuery base,
                          const std::string& cluster_name, const OutputFormat& format) {
  if (cluster_name.empty())
    throw InputError(
        fmt::format("--cluster: expected one of {} with a parallel plan", cluster_presets()));
  const ClusterSpec& cluster = cluster_preset(cluster_name);
  nlohmann::json json = nlohmann::json::array();
  Table table({"ordering", "stage", "layers", "held", "weight versions", "gradient delay",
               "total GiB", "grad reduce us", "weight gather us"});
  std::string text;
  for (auto ordering : orderings) {
    if (ordering == schedule::Ordering::Mixed)
      throw InputError(
          "--ordering: expected eager, backward-fused or forward-fused with a "
          "parallel plan, got mixed");
    MemoryQuery q = base;
    q.ordering = ordering;
    const ParallelSchedule ps = plan_schedule(trace, q, cluster);
    json.push_back(schedule_json(ps, ordering));
    const auto& p = ps.plan;
    text += fmt::format(
        "{}: tp {} pp {} dp {} cp {} = {} GPUs on {} {} node{}, {} x {} microbatches, "
        "bubble at equal pass costs {:.4f}\n",
        schedule::to_string(ordering), p.tp, p.pp, p.dp, p.cp, p.gpus(), ps.nodes, ps.cluster,
        ps.nodes == 1 ? "" : "s", to_string(p.schedule), p.microbatches(), ps.unit_bubble_rate);
    for (const auto& st : ps.stages) {
      const std::string layers = st.first_layer + " .. " + st.last_layer;
      table.add_row({std::string(schedule::to_string(ordering)), std::to_string(st.stage), layers,
                     std::to_string(st.max_in_flight), std::to_string(st.weight_versions),
                     std::to_string(st.gradient_delay), gib(st.memory.total),
                     fmt::format("{:.1f}", to_us(st.grad_reduction)),
                     fmt::format("{:.1f}", to_us(st.weight_gather))});
      text += fmt::format(
          "  stage {} ({}), {} GiB per GPU, holds {}, {} weight version{}, gradient delay {} "
          "step{}: {}\n",
          st.stage, layers, gib(st.memory.total), st.max_in_flight, st.weight_versions,
          st.weight_versions == 1 ? "" : "s", st.gradient_delay, st.gradient_delay == 1 ? "" : "s",
          pass_order(st.passes));
    }
  }
  if (format.json || format.csv) {
    // --csv: one record per ordering and stage: the stage's keys and the ordering.
    CsvRecords csv;
    for (const auto& doc : json)
      for (const auto& stage : doc["stages"]) {
        nlohmann::json row = {{"ordering", doc["ordering"]}};
        row.update(stage);
        csv.rows.push_back(row);
      }
    if (!csv.rows.empty())
      for (const auto& [key, value] : csv.rows.front().items()) csv.columns.push_back(key);
    print_result(format, json.size() == 1 ? json.front() : json, table, {csv});
    return;
  }
  fmt::print("{}\n{}", text, table.to_text());
}

}  // namespace fusim::cli

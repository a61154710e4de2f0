#include "exec/timeline.h"

#include <fmt/format.h>
#include <algorithm>

namespace fusim::exec {

void append_timeline(nlohmann::json& events, int pid, const std::string& process_name,
                     const workload::Trace& trace, const schedule::Schedule& schedule,
                     const SimulationDetail& d, std::size_t max_points) {
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", 0},
                    {"args", {{"name", process_name}}}});
  for (std::size_t l = 0; l < d.lane_names.size(); ++l)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", static_cast<int>(l)},
                      {"args", {{"name", d.lane_names[l]}}}});
  const auto& per_op = d.result.per_op;
  for (std::size_t i = 0; i < per_op.size(); ++i) {
    const auto& t = per_op[i];
    const auto& op = schedule.ops[i];
    if (op.kernels == 0) continue;  // views: no kernel ran
    std::string layer = t.layer >= 0 && static_cast<std::size_t>(t.layer) < trace.layers.size()
                            ? trace.layers[static_cast<std::size_t>(t.layer)].name
                            : std::string("model");
    events.push_back({{"name", fmt::format("{} {}", t.kind, layer)},
                      {"cat", t.kind},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", d.op_lane[i]},
                      {"ts", to_us(t.start)},
                      {"dur", to_us(t.end - t.start)},
                      {"args",
                       {{"op", t.id},
                        {"step", t.step},
                        {"stream", t.stream},
                        {"units", d.op_units[i]},
                        {"kernels", op.kernels},
                        {"flops", op.flops},
                        {"dram_bytes", t.dram_bytes}}}});
  }
  // DRAM bandwidth: merge 1-us buckets so at most max_points samples are written.
  const auto& b = d.dram_bytes_per_bucket;
  if (b.empty() || d.dram_bucket <= 0) return;
  std::size_t merge = std::max<std::size_t>(1, (b.size() + max_points - 1) / max_points);
  const Tick width = d.dram_bucket * static_cast<Tick>(merge);
  for (std::size_t i = 0; i < b.size(); i += merge) {
    std::int64_t bytes = 0;
    for (std::size_t j = i; j < std::min(b.size(), i + merge); ++j) bytes += b[j];
    double gbps = static_cast<double>(bytes) / to_seconds(width) / 1e9;
    events.push_back({{"name", "DRAM bandwidth"},
                      {"ph", "C"},
                      {"pid", pid},
                      {"ts", to_us(d.dram_bucket * static_cast<Tick>(i))},
                      {"args", {{"GB/s", gbps}}}});
  }
}

nlohmann::json timeline_document(nlohmann::json events, const std::string& machine,
                                 const std::string& trace_file) {
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"generator", "fusim simulate"}, {"machine", machine}, {"trace", trace_file}}}};
}

}  // namespace fusim::exec

#include "exec/timeline.h"

#include <fmt/format.h>
#include <algorithm>
#include <set>

#include "core/int_math.h"

namespace fusim::exec {
namespace {
nlohmann::json known(std::int64_t v) {
  return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
}
}  // namespace

std::string timeline_process_name(const RunResult& r) {
  // The graph execution is named, so that both executions of one ordering can be told apart.
  return fmt::format("{} ({}, {}) {}{}", r.ordering, r.optimizer, r.impl, r.executor,
                     r.execution == "graph" ? " graph" : "");
}

void append_timeline(nlohmann::json& events, int pid, const workload::Trace& trace,
                     const TimelineRun& run, std::size_t max_points) {
  const RunResult& r = *run.result;
  const schedule::Schedule& schedule = *run.schedule;
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", 0},
                    {"args", {{"name", run.name}}}});
  std::set<int> streams;
  for (const auto& t : r.per_op) streams.insert(t.stream);
  for (int s : streams)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", s},
                      {"args", {{"name", fmt::format("stream {}", s)}}}});
  for (const auto& t : r.per_op) {
    const auto& op = schedule.ops[static_cast<std::size_t>(t.id)];
    if (op.kernels == 0) continue;  // views: no kernel ran
    std::string layer = t.layer >= 0 && static_cast<std::size_t>(t.layer) < trace.layers.size()
                            ? trace.layers[static_cast<std::size_t>(t.layer)].name
                            : std::string("model");
    events.push_back({{"name", fmt::format("{} {}", t.kind, layer)},
                      {"cat", t.kind},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", t.stream},
                      {"ts", to_us(t.start)},
                      {"dur", to_us(t.end - t.start)},
                      {"args",
                       {{"op", t.id},
                        {"step", t.step},
                        {"stream", t.stream},
                        {"units", known(t.units)},
                        {"kernels", op.kernels},
                        {"flops", op.flops},
                        {"dram_bytes", known(t.dram_bytes)}}}});
  }
  // DRAM bandwidth: merge buckets so at most max_points samples are written.
  if (!run.dram || run.dram->bytes.empty() || run.dram->bucket <= 0) return;
  const auto& b = run.dram->bytes;
  const Tick bucket = run.dram->bucket;
  std::size_t merge = std::max<std::size_t>(1, ceil_div(b.size(), max_points));
  const Tick width = bucket * static_cast<Tick>(merge);
  for (std::size_t i = 0; i < b.size(); i += merge) {
    std::int64_t bytes = 0;
    for (std::size_t j = i; j < std::min(b.size(), i + merge); ++j) bytes += b[j];
    double gbps = static_cast<double>(bytes) / to_seconds(width) / 1e9;
    events.push_back({{"name", "DRAM bandwidth"},
                      {"ph", "C"},
                      {"pid", pid},
                      {"ts", to_us(bucket * static_cast<Tick>(i))},
                      {"args", {{"GB/s", gbps}}}});
  }
}

nlohmann::json timeline_document(nlohmann::json events, const std::string& generator,
                                 const std::string& machine, const std::string& trace_file) {
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"generator", generator}, {"machine", machine}, {"trace", trace_file}}}};
}

}  // namespace fusim::exec

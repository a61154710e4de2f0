#include "exec/run_result_json.h"

namespace fusim::exec {
namespace {
// Values an executor does not know (kUnknown, a rate of -1) are null, never a number.
nlohmann::json known(std::int64_t v) {
  return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
}
nlohmann::json known_rate(double v) {
  return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
}
}  // namespace

nlohmann::json to_json(const RunResult& r, bool with_per_op) {
  nlohmann::json j;
  j["executor"] = r.executor;
  j["ordering"] = r.ordering;
  j["optimizer"] = r.optimizer;
  j["impl"] = r.impl;
  j["execution"] = r.execution;
  j["steps_measured"] = r.steps_measured;
  j["step_time_ms"] = to_ms(r.step_time);
  j["step_time_p25_ms"] = to_ms(r.step_time_p25);
  j["step_time_p75_ms"] = to_ms(r.step_time_p75);
  auto& steps = j["step_times_ms"] = nlohmann::json::array();
  for (Tick t : r.step_times) steps.push_back(to_ms(t));
  if (!r.step_rounds.empty()) j["step_rounds"] = r.step_rounds;
  j["dram_bytes"] = known(r.dram_bytes);
  j["llc_hit_rate"] = known_rate(r.llc_hit_rate);
  auto& levels = j["hit_rates"] = nlohmann::json::object();  // level name -> rate
  for (const auto& level : r.hit_rates) levels[level.level] = known_rate(level.hit_rate);
  j["peak_memory_bytes"] = known(r.peak_memory_bytes);
  if (with_per_op) {
    auto& ops = j["per_op"] = nlohmann::json::array();
    for (const auto& op : r.per_op) {
      ops.push_back({{"id", op.id},
                     {"kind", op.kind},
                     {"layer", op.layer},
                     {"step", op.step},
                     {"stream", op.stream},
                     {"start_us", to_us(op.start)},
                     {"end_us", to_us(op.end)},
                     {"dram_bytes", known(op.dram_bytes)}});
    }
  }
  return j;
}

std::vector<std::string> csv_columns(const RunResult& r,
                                     const std::vector<std::string>& after_times) {
  std::vector<std::string> c{"ordering",     "optimizer",        "impl",
                             "execution",    "executor",         "steps_measured",
                             "step_time_ms", "step_time_p25_ms", "step_time_p75_ms"};
  c.insert(c.end(), after_times.begin(), after_times.end());
  for (const char* name : {"dram_bytes", "llc_hit_rate", "peak_memory_bytes"}) c.emplace_back(name);
  for (const auto& level : r.hit_rates) c.push_back("hit_rates." + level.level);
  return c;
}

}  // namespace fusim::exec

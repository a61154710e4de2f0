#include "cli/op_comparison_output.h"

#include <fmt/format.h>

namespace fusim::cli {

nlohmann::json op_groups_json(const std::vector<exec::OpGroupComparison>& rows, bool per_layer) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j = per_layer ? nlohmann::json{{"layer", r.layer}, {"op", r.op}}
                                 : nlohmann::json{{"kind", r.kind}, {"op", r.op}};
    j["predicted_ms"] = r.predicted_ms;
    j["measured_ms"] = r.measured_ms;
    // Nothing measured: no ratio (null), not 0.
    j["ratio"] = r.measured_ms > 0 ? nlohmann::json(r.ratio) : nlohmann::json();
    j["ops_per_step"] = r.ops_per_step;
    j["predicted_share"] = r.predicted_share;
    j["measured_share"] = r.measured_share;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<std::string> op_groups_csv_columns(bool per_layer) {
  return {"ordering",
          "execution",
          per_layer ? "layer" : "kind",
          "op",
          "ops_per_step",
          "predicted_ms",
          "measured_ms",
          "ratio",
          "predicted_share",
          "measured_share"};
}

OpGroupTable::OpGroupTable(bool per_layer)
    : per_layer_(per_layer),
      table_(per_layer
                 ? std::vector<std::string>{"ordering", "layer", "op", "ops/step", "predicted ms",
                                            "measured ms", "ratio", "pred share %", "meas share %"}
                 : std::vector<std::string>{"ordering", "kind", "op", "ops/step", "predicted ms",
                                            "measured ms", "ratio", "pred share %",
                                            "meas share %"}) {}

void OpGroupTable::add(const std::string& ordering,
                       const std::vector<exec::OpGroupComparison>& rows) {
  for (const auto& r : rows)
    table_.add_row({ordering, per_layer_ ? r.layer : r.kind, r.op, std::to_string(r.ops_per_step),
                    fmt::format("{:.3f}", r.predicted_ms), fmt::format("{:.3f}", r.measured_ms),
                    r.measured_ms > 0 ? fmt::format("{:.2f}", r.ratio) : "-",
                    fmt::format("{:.1f}", 100 * r.predicted_share),
                    fmt::format("{:.1f}", 100 * r.measured_share)});
}

}  // namespace fusim::cli

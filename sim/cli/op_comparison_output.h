#pragma once
// `fusim validate --per-op / --per-layer`: the rows of exec/op_comparison.h as tables and
// as the JSON of each result ("per_op_kinds": [{"kind", "op", "predicted_ms",
// "measured_ms", "ratio", ...}], "per_layer": [{"layer", "op", ...}]). Wiring only.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/table.h"
#include "exec/op_comparison.h"

namespace fusim::cli {

// One JSON object per row: the contract keys first, then ops_per_step and both shares.
nlohmann::json op_groups_json(const std::vector<exec::OpGroupComparison>& rows, bool per_layer);
// --csv: those keys, after the result's ordering and execution.
std::vector<std::string> op_groups_csv_columns(bool per_layer);

// A table of the rows of several orderings (one "ordering" column); per_layer switches the
// group columns from (kind, op) to (layer, op).
class OpGroupTable {
 public:
  explicit OpGroupTable(bool per_layer);
  void add(const std::string& ordering, const std::vector<exec::OpGroupComparison>& rows);
  const Table& table() const { return table_; }

 private:
  bool per_layer_;
  Table table_;
};

}  // namespace fusim::cli

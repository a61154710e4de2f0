#include "core/stats.h"

#include <fmt/format.h>

#include "core/error.h"

namespace fusim {

std::uint64_t StatsNode::get(const std::string& counter) const {
  for (const auto& [name, value] : counters)
    if (name == counter) return value;
  return 0;
}

StatsNode operator-(const StatsNode& a, const StatsNode& b) {
  FUSIM_ASSERT(
      a.name == b.name && a.counters.size() == b.counters.size() &&
          a.children.size() == b.children.size(),
      fmt::format("subtracting stats trees of different shape at '{}' / '{}'", a.name, b.name));
  StatsNode out{a.name, {}, {}};
  for (std::size_t i = 0; i < a.counters.size(); ++i) {
    FUSIM_ASSERT(a.counters[i].first == b.counters[i].first, "counter names differ");
    out.add(a.counters[i].first, a.counters[i].second - b.counters[i].second);
  }
  for (std::size_t i = 0; i < a.children.size(); ++i) out.child(a.children[i] - b.children[i]);
  return out;
}

nlohmann::json stats_to_json(const StatsNode& node) {
  nlohmann::json j = nlohmann::json::object();
  j["name"] = node.name;
  for (const auto& [name, value] : node.counters) j[name] = value;
  if (!node.children.empty()) {
    j["children"] = nlohmann::json::array();
    for (const auto& c : node.children) j["children"].push_back(stats_to_json(c));
  }
  return j;
}

namespace {
void collect(const StatsNode& node, const std::string& prefix,
             std::vector<std::pair<std::string, const StatsNode*>>& rows,
             std::vector<std::string>& columns) {
  std::string path = prefix.empty() ? node.name : prefix + "/" + node.name;
  rows.emplace_back(path, &node);
  for (const auto& [name, value] : node.counters) {
    (void)value;
    bool seen = false;
    for (const auto& c : columns) seen = seen || c == name;
    if (!seen) columns.push_back(name);
  }
  for (const auto& c : node.children) collect(c, path, rows, columns);
}
}  // namespace

Table stats_to_table(const StatsNode& root, const std::string& first_header) {
  std::vector<std::pair<std::string, const StatsNode*>> rows;
  std::vector<std::string> columns;
  for (const auto& c : root.children) collect(c, "", rows, columns);
  std::vector<std::string> headers{first_header};
  headers.insert(headers.end(), columns.begin(), columns.end());
  Table table(headers);
  for (const auto& [path, node] : rows) {
    std::vector<std::string> cells{path};
    for (const auto& col : columns) {
      std::string cell = "-";
      for (const auto& [name, value] : node->counters)
        if (name == col) cell = std::to_string(value);
      cells.push_back(cell);
    }
    table.add_row(cells);
  }
  return table;
}

std::string format_ratio(std::uint64_t num, std::uint64_t den) {
  if (den == 0) return "-";
  return fmt::format("{:.3f}", static_cast<double>(num) / static_cast<double>(den));
}

}  // namespace fusim

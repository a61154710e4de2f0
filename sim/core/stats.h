#pragma once
// Stats are plain value structs owned by components, shaped like the component tree and
// subtractable (steady state = end - after warm-up). For printing, a component converts its
// struct into a StatsNode tree; the printers below walk that tree. Nothing here is on a
// hot path: counters are struct members, never looked up by string while simulating.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/table.h"

namespace fusim {

struct StatsNode {
  std::string name;
  std::vector<std::pair<std::string, std::uint64_t>> counters;  // in print order
  std::vector<StatsNode> children;

  StatsNode& add(std::string counter, std::uint64_t value) {
    counters.emplace_back(std::move(counter), value);
    return *this;
  }
  StatsNode& child(StatsNode node) {
    children.push_back(std::move(node));
    return children.back();
  }
  // Value of a counter (0 when absent): for tests and derived figures, not hot paths.
  std::uint64_t get(const std::string& counter) const;
};

// Counter-wise difference of two trees of the same shape (node names matched by position,
// checked): for trees built from structs that were not subtracted first.
StatsNode operator-(const StatsNode& a, const StatsNode& b);

// {"name": ..., counters..., "children": [...]} ("children" omitted when empty).
nlohmann::json stats_to_json(const StatsNode& root);
// One row per node below the root, named by its path ("L1/core0"); one column per counter
// name, in first-seen order; "-" where a node lacks a counter.
Table stats_to_table(const StatsNode& root, const std::string& first_header = "component");

// Ratio helper for printers: "0.873" or "-" when the denominator is 0.
std::string format_ratio(std::uint64_t num, std::uint64_t den);

}  // namespace fusim

#include "exec/op_comparison.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace fusim::exec {
namespace {

struct Sums {
  Tick predicted = 0, measured = 0;
  int measured_ops = 0;
};

// Sums end - start of the measured ops of `r` into the group `key(op)` names.
template <typename Key, typename KeyOf>
void add_result(const RunResult& r, std::map<Key, Sums>& groups, bool predicted, KeyOf key_of) {
  for (const auto& op : r.per_op) {
    if (!op.measured || op.layer < 0) continue;
    Sums& s = groups[key_of(op)];
    if (predicted) {
      s.predicted += op.end - op.start;
    } else {
      s.measured += op.end - op.start;
      ++s.measured_ops;
    }
  }
}

OpGroupComparison finish(const Sums& s, const RunResult& predicted, const RunResult& measured) {
  OpGroupComparison c;
  const double p_steps = std::max(1, predicted.steps_measured);
  const double m_steps = std::max(1, measured.steps_measured);
  c.predicted_ms = to_ms(s.predicted) / p_steps;
  c.measured_ms = to_ms(s.measured) / m_steps;
  c.ops_per_step = static_cast<int>(s.measured_ops / m_steps + 0.5);
  c.ratio = c.measured_ms > 0 ? c.predicted_ms / c.measured_ms : 0.0;
  if (predicted.step_time > 0) c.predicted_share = c.predicted_ms / to_ms(predicted.step_time);
  if (measured.step_time > 0) c.measured_share = c.measured_ms / to_ms(measured.step_time);
  return c;
}

void check_pair(const RunResult& predicted, const RunResult& measured) {
  FUSIM_ASSERT(predicted.ordering == measured.ordering && predicted.optimizer == measured.optimizer,
               "a per-op comparison of results of different schedules");
}
}  // namespace

std::vector<OpGroupComparison> compare_per_op_kind(const workload::Trace& trace,
                                                   const RunResult& predicted,
                                                   const RunResult& measured) {
  check_pair(predicted, measured);
  using Key = std::pair<std::string, std::string>;  // kind, layer op
  std::map<Key, Sums> groups;
  auto key_of = [&](const OpTiming& op) {
    return Key{op.kind,
               std::string(workload::to_string(trace.layers.at(std::size_t(op.layer)).op))};
  };
  add_result(predicted, groups, true, key_of);
  add_result(measured, groups, false, key_of);
  std::vector<OpGroupComparison> rows;
  for (const auto& [key, sums] : groups) {
    OpGroupComparison c = finish(sums, predicted, measured);
    c.kind = key.first;
    c.op = key.second;
    rows.push_back(c);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.measured_ms > b.measured_ms; });
  return rows;
}

std::vector<OpGroupComparison> compare_per_layer(const workload::Trace& trace,
                                                 const RunResult& predicted,
                                                 const RunResult& measured) {
  check_pair(predicted, measured);
  std::map<int, Sums> groups;
  auto key_of = [](const OpTiming& op) { return op.layer; };
  add_result(predicted, groups, true, key_of);
  add_result(measured, groups, false, key_of);
  std::vector<OpGroupComparison> rows;
  for (const auto& [layer, sums] : groups) {
    OpGroupComparison c = finish(sums, predicted, measured);
    const auto& l = trace.layers.at(std::size_t(layer));
    c.layer = l.name;
    c.op = std::string(workload::to_string(l.op));
    rows.push_back(c);
  }
  return rows;
}

}  // namespace fusim::exec

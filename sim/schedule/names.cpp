// Names of the schedule enums as written on the command line and in JSON.
#include <array>
#include <utility>

#include "schedule/schedule.h"

namespace fusim::schedule {
namespace {
constexpr std::array<std::pair<Ordering, std::string_view>, 4> kOrderings{{
    {Ordering::Eager, "eager"},
    {Ordering::BackwardFused, "backward-fused"},
    {Ordering::ForwardFused, "forward-fused"},
    {Ordering::Mixed, "mixed"},
}};
constexpr std::array<std::pair<OptimizerImpl, std::string_view>, 3> kImpls{{
    {OptimizerImpl::Loop, "loop"},
    {OptimizerImpl::Foreach, "foreach"},
    {OptimizerImpl::Fused, "fused"},
}};
constexpr std::array<std::pair<Execution, std::string_view>, 2> kExecutions{{
    {Execution::Layers, "layers"},
    {Execution::Graph, "graph"},
}};
constexpr std::array<std::pair<LayerMode, std::string_view>, 3> kModes{{
    {LayerMode::Eager, "eager"},
    {LayerMode::Backward, "backward"},
    {LayerMode::Forward, "forward"},
}};

template <typename Table, typename E>
std::string_view name_of(const Table& table, E value) {
  for (auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <typename E, typename Table>
std::optional<E> value_of(const Table& table, std::string_view name) {
  for (auto& [v, n] : table)
    if (n == name) return v;
  return std::nullopt;
}
}  // namespace

std::string_view to_string(Ordering ordering) {
  return name_of(kOrderings, ordering);
}
std::optional<Ordering> parse_ordering(std::string_view name) {
  return value_of<Ordering>(kOrderings, name);
}
std::string_view to_string(OptimizerImpl impl) {
  return name_of(kImpls, impl);
}
std::optional<OptimizerImpl> parse_optimizer_impl(std::string_view name) {
  return value_of<OptimizerImpl>(kImpls, name);
}
std::string_view to_string(Execution execution) {
  return name_of(kExecutions, execution);
}
std::optional<Execution> parse_execution(std::string_view name) {
  return value_of<Execution>(kExecutions, name);
}
std::string_view to_string(LayerMode mode) {
  return name_of(kModes, mode);
}
std::optional<LayerMode> parse_layer_mode(std::string_view name) {
  return value_of<LayerMode>(kModes, name);
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Forward:
      return "F";
    case OpKind::BackwardInput:
      return "Bx";
    case OpKind::BackwardWeight:
      return "Bw";
    case OpKind::Update:
      return "U";
    case OpKind::Loss:
      return "L";
  }
  return "?";
}

std::string_view to_string(TensorCategory category) {
  switch (category) {
    case TensorCategory::Weights:
      return "weights";
    case TensorCategory::Grads:
      return "grads";
    case TensorCategory::OptimizerState:
      return "optimizer_state";
    case TensorCategory::Activations:
      return "activations";
    case TensorCategory::Temporaries:
      return "temporaries";
    case TensorCategory::Inputs:
      return "inputs";
  }
  return "?";
}

}  // namespace fusim::schedule
